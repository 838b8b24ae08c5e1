import { LockTimeoutError, type Lock } from '../../coordination/lock.js';
import type { Store } from '../../store/types.js';
import { verifyPassword } from '../../admin/password.js';

// Failed sign-ins from one address within the window before it must wait.
const FAILURES_PER_SOURCE = 5;
// Failed sign-ins from all addresses together within the window before everyone must wait: caps a guessing
// attack spread over many addresses, while one address alone cannot lock the operator out.
const FAILURES_OVERALL = 20;
/** Attempts run one at a time across processes; one holds the lock for one scrypt and a few reads. */
const ATTEMPT_LOCK_TTL_MS = 10_000;
const ATTEMPT_WAIT_MS = 30_000;
/** What a sign-in that could not get its turn within ATTEMPT_WAIT_MS is told to wait. */
const BUSY_RETRY_SECONDS = 5;

export type SignInOutcome =
  | { ok: true }
  | { ok: false; reason: 'wrong' | 'unset' }
  | { ok: false; reason: 'locked'; retryAfterSeconds: number };

// How long until fewer than `limit` of these failures (oldest first) are inside the window.
function lockedFor(
  failures: readonly { at: string }[],
  limit: number,
  windowMs: number,
  now: number,
): number {
  const unlocking = failures[failures.length - limit];
  return unlocking ? Date.parse(unlocking.at) + windowMs - now : 0;
}

/**
 * Checks the admin password with rate limiting: after FAILURES_PER_SOURCE failures from an address
 * (or FAILURES_OVERALL from anywhere) within the window, attempts are refused, even with the right
 * password, until enough failures have aged out. Failures are kept in the store, so a restart does
 * not reset them. Attempts run one at a time, under a lock every process of the deployment shares:
 * each costs one scrypt, so guessing is slow, and concurrent requests, even to several processes,
 * cannot slip past the count.
 */
export class SignInThrottle {
  constructor(
    private readonly store: Store,
    private readonly lock: Lock,
    private readonly windowMs: number,
  ) {}

  async attempt(source: string, password: string): Promise<SignInOutcome> {
    try {
      return await this.lock.with('dashboard-sign-in', ATTEMPT_LOCK_TTL_MS, ATTEMPT_WAIT_MS, () =>
        this.check(source, password),
      );
    } catch (error) {
      if (error instanceof LockTimeoutError)
        return { ok: false, reason: 'locked', retryAfterSeconds: BUSY_RETRY_SECONDS };
      throw error;
    }
  }

  private async check(source: string, password: string): Promise<SignInOutcome> {
    const now = Date.now();
    const failures = await this.store.dashboard.listSignInFailures(
      new Date(now - this.windowMs).toISOString(),
    );
    const wait = Math.max(
      lockedFor(
        failures.filter((f) => f.source === source),
        FAILURES_PER_SOURCE,
        this.windowMs,
        now,
      ),
      lockedFor(failures, FAILURES_OVERALL, this.windowMs, now),
    );
    if (wait > 0) return { ok: false, reason: 'locked', retryAfterSeconds: Math.ceil(wait / 1_000) };
    const hash = await this.store.dashboard.getPasswordHash();
    if (hash === undefined) return { ok: false, reason: 'unset' };
    if (await verifyPassword(password, hash)) {
      await this.store.dashboard.clearSignInFailures(source);
      await this.store.dashboard.purge(new Date().toISOString(), new Date(now - this.windowMs).toISOString());
      return { ok: true };
    }
    await this.store.dashboard.addSignInFailure(source, new Date().toISOString());
    return { ok: false, reason: 'wrong' };
  }
}
