import { LockTimeoutError, type Lock } from '../coordination/lock.js';
import type { Store } from '../store/types.js';
import { verifyPassword } from '../admin/password.js';

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

/** What a sign-in's own check says: the signed-in value, a wrong secret (counted), or nothing to check against. */
export type Verdict<T> = { ok: true; value: T } | { ok: false; reason: 'wrong' | 'unset' };

export type SignInOutcome<T = true> = Verdict<T> | { ok: false; reason: 'locked'; retryAfterSeconds: number };

/**
 * The throttles of other sign-ins record their failures as `kind:address` beside the dashboard's bare
 * addresses (a kind has a '-', which no address has), each counting only its own.
 */
const KIND_PREFIX = /^[a-z]+-[a-z-]+:/;

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
 * Checks a secret with rate limiting: after FAILURES_PER_SOURCE failures from an address (or
 * FAILURES_OVERALL from anywhere) within the window, attempts are refused, even with the right
 * secret, until enough failures have aged out. Failures are kept in the store, so a restart does
 * not reset them. Attempts run one at a time, under a lock every process of the deployment shares:
 * each costs one check (a scrypt for the admin password), so guessing is slow, and concurrent
 * requests, even to several processes, cannot slip past the count. The dashboard's admin password
 * and the front door's key sign-in (issue 14) each have their own count.
 */
export class SignInThrottle {
  /**
   * @param kind - whose sign-ins: absent for the dashboard's admin password, else a name with a '-'
   *   (`front-door`) under which its failures are counted and its attempts take turns.
   */
  constructor(
    private readonly store: Store,
    private readonly lock: Lock,
    private readonly windowMs: number,
    private readonly kind?: string,
  ) {}

  /** The dashboard's admin password. */
  attempt(source: string, password: string): Promise<SignInOutcome> {
    return this.guard(source, async (): Promise<Verdict<true>> => {
      const hash = await this.store.dashboard.getPasswordHash();
      if (hash === undefined) return { ok: false, reason: 'unset' };
      return (await verifyPassword(password, hash))
        ? { ok: true, value: true }
        : { ok: false, reason: 'wrong' };
    });
  }

  /** Any secret `verify` checks, counted and refused like the admin password. */
  async guard<T>(address: string, verify: () => Promise<Verdict<T>>): Promise<SignInOutcome<T>> {
    const source = this.kind ? `${this.kind}:${address}` : address;
    try {
      return await this.lock.with(
        `${this.kind ?? 'dashboard'}-sign-in`,
        ATTEMPT_LOCK_TTL_MS,
        ATTEMPT_WAIT_MS,
        () => this.check(source, verify),
      );
    } catch (error) {
      if (error instanceof LockTimeoutError)
        return { ok: false, reason: 'locked', retryAfterSeconds: BUSY_RETRY_SECONDS };
      throw error;
    }
  }

  private async check<T>(source: string, verify: () => Promise<Verdict<T>>): Promise<SignInOutcome<T>> {
    const now = Date.now();
    const failures = (
      await this.store.dashboard.listSignInFailures(new Date(now - this.windowMs).toISOString())
    ).filter((f) => (this.kind ? f.source.startsWith(`${this.kind}:`) : !KIND_PREFIX.test(f.source)));
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
    const verdict = await verify();
    if (verdict.ok) {
      await this.store.dashboard.clearSignInFailures(source);
      await this.store.dashboard.purge(new Date().toISOString(), new Date(now - this.windowMs).toISOString());
      return verdict;
    }
    if (verdict.reason === 'wrong')
      await this.store.dashboard.addSignInFailure(source, new Date().toISOString());
    return verdict;
  }
}
