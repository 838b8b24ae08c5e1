/**
 * Named locks with an expiry, across every process of a deployment: what keeps a job (the refresh
 * scheduler, the revocation sweep) from running in two processes at once, and a token refresh
 * from happening twice. A holder that dies loses the lock when its time is up.
 */
export interface Lock {
  /**
   * Runs `work` if the lock `name` is free, holding it for at most `ttlMs`; resolves to
   * `{ ran: false }` at once when another holder has it.
   */
  tryWith<T>(
    name: string,
    ttlMs: number,
    work: () => Promise<T>,
  ): Promise<{ ran: true; value: T } | { ran: false }>;
}

/** Locks of one process (the embedded default): a held name is refused until released or expired. */
export class MemoryLock implements Lock {
  private readonly held = new Map<string, number>();

  async tryWith<T>(
    name: string,
    ttlMs: number,
    work: () => Promise<T>,
  ): Promise<{ ran: true; value: T } | { ran: false }> {
    const now = Date.now();
    const until = this.held.get(name);
    if (until !== undefined && until > now) return { ran: false };
    const mine = now + ttlMs;
    this.held.set(name, mine);
    try {
      return { ran: true, value: await work() };
    } finally {
      if (this.held.get(name) === mine) this.held.delete(name);
    }
  }
}
