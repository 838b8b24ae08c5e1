import { randomUUID } from 'node:crypto';

/**
 * What the work under a lock holds: proof of which acquisition it is, and a way to ask whether the
 * lock is still its own before a write that must not happen twice.
 */
export interface Lease {
  /**
   * Increases with every acquisition of the lock's name across the deployment: a write stamped
   * with it can be refused by a store that has already seen a higher one (a fencing token), which
   * is what keeps a holder that paused past its expiry from overwriting its successor's work.
   */
  readonly fence: number;
  /**
   * Whether the lock is still this lease's: not expired, not taken over, not released. Rejects when
   * that cannot be told (the backend unreachable): a caller must not take that for a yes.
   */
  held(): Promise<boolean>;
}

export type TryResult<T> = { ran: true; value: T } | { ran: false };

/**
 * Named locks with an expiry, across every process of a deployment: what keeps a job (the refresh
 * scheduler, the revocation sweep) from running in two processes at once, and a token refresh
 * from happening twice. While `work` runs its holder keeps the lock alive (it extends it every
 * third of `ttlMs`), so a long run is not taken over half-way; a holder that dies stops extending,
 * and loses the lock when its time is up. Each call releases only its own acquisition, never the
 * lock of a holder that took over after an expiry.
 */
export interface Lock {
  /**
   * Runs `work` if the lock `name` is free, then releases it (also when `work` throws, whose error
   * is then the rejection); resolves to `{ ran: false }` at once when another holder has it.
   */
  tryWith<T>(name: string, ttlMs: number, work: (lease: Lease) => Promise<T>): Promise<TryResult<T>>;
  /**
   * Waits up to `waitMs` for the lock `name`, then runs `work` holding it and releases it. Rejects
   * with {@link LockTimeoutError} when the lock was not had in time (`work` did not run).
   */
  with<T>(name: string, ttlMs: number, waitMs: number, work: (lease: Lease) => Promise<T>): Promise<T>;
}

/** `Lock.with` did not get its lock within the time it was given. */
export class LockTimeoutError extends Error {
  override readonly name = 'LockTimeoutError';

  constructor(
    readonly lockName: string,
    readonly waitMs: number,
  ) {
    super(`lock ${JSON.stringify(lockName)} was not acquired within ${waitMs} ms`);
  }
}

/** The longest pause between two attempts of `with` (waiters of another process are not told). */
const MAX_POLL_MS = 250;
const FIRST_POLL_MS = 10;

/** One acquisition while its work runs: its token, its extension timer, what its lease reports. */
class Holding implements Lease {
  /** Until when the lock is surely ours: the expiry counted from before the last successful set. */
  validUntil: number;
  /** Known gone: an extension found another token, or the work ended, or the lock was closed. */
  gone = false;
  timer: NodeJS.Timeout | undefined;

  constructor(
    readonly name: string,
    readonly token: string,
    readonly fence: number,
    readonly ttlMs: number,
    sentAt: number,
    private readonly owns: (name: string, token: string) => Promise<boolean>,
  ) {
    this.validUntil = sentAt + ttlMs;
  }

  async held(): Promise<boolean> {
    // Past its own deadline a lease is not trusted even if the key lingers: the backend's clock may run ahead.
    if (this.gone || Date.now() >= this.validUntil) return false;
    if (await this.owns(this.name, this.token)) return true;
    this.gone = true;
    return false;
  }
}

/**
 * A Lock over a backend's four atomic steps; the lease bookkeeping (tokens, extension while work
 * runs, waiting, releasing only one's own acquisition) is the same for every backend.
 */
export abstract class LeasedLock implements Lock {
  private readonly holdings = new Set<Holding>();
  /** Those of this process waiting in `with`, woken when this process releases their name. */
  private readonly waiters = new Map<string, Set<() => void>>();
  private closed = false;

  /** Sets `name` to `token` for `ttlMs` if it is free; the fence of this acquisition, or undefined. */
  protected abstract acquire(name: string, token: string, ttlMs: number): Promise<number | undefined>;
  /** Resets the expiry of `name` to `ttlMs` if it still holds `token`; whether it did. */
  protected abstract extend(name: string, token: string, ttlMs: number): Promise<boolean>;
  /** Frees `name` if it still holds `token`. */
  protected abstract release(name: string, token: string): Promise<void>;
  /** Whether `name` holds `token`. */
  protected abstract owns(name: string, token: string): Promise<boolean>;

  async tryWith<T>(name: string, ttlMs: number, work: (lease: Lease) => Promise<T>): Promise<TryResult<T>> {
    const holding = await this.take(name, ttlMs);
    if (!holding) return { ran: false };
    return { ran: true, value: await this.run(holding, work) };
  }

  async with<T>(name: string, ttlMs: number, waitMs: number, work: (lease: Lease) => Promise<T>): Promise<T> {
    const deadline = Date.now() + waitMs;
    let pause = FIRST_POLL_MS;
    for (;;) {
      const holding = await this.take(name, ttlMs);
      if (holding) return this.run(holding, work);
      const left = deadline - Date.now();
      if (left <= 0) throw new LockTimeoutError(name, waitMs);
      // A release in this process wakes us at once; one elsewhere (or an expiry) is found by polling.
      await this.releaseOf(name, Math.min(pause, left));
      pause = Math.min(pause * 2, MAX_POLL_MS);
    }
  }

  /**
   * Stops extending every lock this process holds (their work may still run, but they now expire
   * after their ttl, as a crashed holder's would); acquiring afterwards rejects.
   */
  close(): void {
    this.closed = true;
    for (const holding of this.holdings) this.stop(holding);
    this.holdings.clear();
  }

  private async take(name: string, ttlMs: number): Promise<Holding | undefined> {
    if (this.closed) throw new Error('the lock is closed');
    if (!Number.isFinite(ttlMs) || ttlMs < 1)
      throw new RangeError(`lock ttl must be at least 1 ms, not ${ttlMs}`);
    const ttl = Math.ceil(ttlMs);
    const token = randomUUID();
    const sentAt = Date.now();
    let fence: number | undefined;
    try {
      fence = await this.acquire(name, token, ttl);
    } catch (error) {
      // A command that timed out may still reach the backend later (ioredis keeps it queued until
      // the connection is back): releasing this token after it keeps that ghost from holding the
      // lock for a whole ttl. Nobody waits for this release.
      this.release(name, token).catch(() => {});
      throw error;
    }
    if (fence === undefined) return undefined;
    const holding = new Holding(name, token, fence, ttl, sentAt, (n, t) => this.owns(n, t));
    this.holdings.add(holding);
    this.keepAlive(holding);
    return holding;
  }

  private async run<T>(holding: Holding, work: (lease: Lease) => Promise<T>): Promise<T> {
    try {
      return await work(holding);
    } finally {
      this.stop(holding);
      this.holdings.delete(holding);
      // A failed release only leaves the lock to expire after its ttl; the work's outcome stands.
      await this.release(holding.name, holding.token).catch(() => {});
      for (const wake of this.waiters.get(holding.name) ?? []) wake();
    }
  }

  /** Extends the lock every third of its ttl while its work runs, one extension at a time. */
  private keepAlive(holding: Holding): void {
    const every = Math.max(1, Math.floor(holding.ttlMs / 3));
    const tick = async (): Promise<void> => {
      const sentAt = Date.now();
      try {
        if (await this.extend(holding.name, holding.token, holding.ttlMs)) {
          holding.validUntil = sentAt + holding.ttlMs;
        } else {
          holding.gone = true;
        }
      } catch {
        // Unreachable for now: try again next time; held() turns false once validUntil passes.
      }
      if (!holding.gone) schedule();
    };
    const schedule = (): void => {
      holding.timer = setTimeout(() => void tick(), every);
      // The work itself keeps the process alive as long as it needs; the timer must not.
      holding.timer.unref();
    };
    schedule();
  }

  private stop(holding: Holding): void {
    holding.gone = true;
    clearTimeout(holding.timer);
  }

  private releaseOf(name: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      let set = this.waiters.get(name);
      if (!set) {
        set = new Set();
        this.waiters.set(name, set);
      }
      const waiters = set;
      const done = (): void => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0 && this.waiters.get(name) === waiters) this.waiters.delete(name);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
    });
  }
}

/**
 * Locks of one process (the embedded default): the same leases as a networked lock, over a map.
 * Fences count per name from 1 for the life of the process.
 */
export class MemoryLock extends LeasedLock {
  private readonly locks = new Map<string, { token: string; expiresAt: number }>();
  private readonly fences = new Map<string, number>();

  protected acquire(name: string, token: string, ttlMs: number): Promise<number | undefined> {
    const now = Date.now();
    const current = this.locks.get(name);
    if (current && current.expiresAt > now) return Promise.resolve(undefined);
    this.locks.set(name, { token, expiresAt: now + ttlMs });
    const fence = (this.fences.get(name) ?? 0) + 1;
    this.fences.set(name, fence);
    return Promise.resolve(fence);
  }

  protected extend(name: string, token: string, ttlMs: number): Promise<boolean> {
    const current = this.mine(name, token);
    if (current) current.expiresAt = Date.now() + ttlMs;
    return Promise.resolve(current !== undefined);
  }

  protected release(name: string, token: string): Promise<void> {
    if (this.mine(name, token)) this.locks.delete(name);
    return Promise.resolve();
  }

  protected owns(name: string, token: string): Promise<boolean> {
    return Promise.resolve(this.mine(name, token) !== undefined);
  }

  /** The entry of `name` if it holds `token` and has not expired. */
  private mine(name: string, token: string): { token: string; expiresAt: number } | undefined {
    const current = this.locks.get(name);
    return current && current.token === token && current.expiresAt > Date.now() ? current : undefined;
  }
}
