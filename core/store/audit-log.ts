import type { Scope } from '../domain.js';
import { newId } from './ids.js';
import type { AuditEntry, AuditStore } from './types.js';

/** What a caller records; the entry's id and time are filled in, absent fields stored as null. */
export type AuditInput = Pick<AuditEntry, 'event'> & Partial<Omit<AuditEntry, 'id' | 'event'>>;

/** The audit fields of a scope (null where the scope has no level). */
export function auditScope(scope: Scope): Pick<AuditInput, 'clientId' | 'orgId' | 'userId'> {
  return { clientId: scope.clientId, orgId: scope.orgId, userId: scope.userId };
}

let lastMs = NaN;
let lastIso = '';

/**
 * The ISO 8601 time of an entry recorded now. Calls in the same millisecond share one string: at
 * thousands of calls a second, formatting a Date for each is a measurable part of what the audit
 * trail costs a call (scripts/bench, audit on ÷ off).
 */
export function auditTime(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}

/** Flushed at least this often while entries wait: a kill -9 loses at most about this much. */
const FLUSH_MS = 1_000;
/** A batch this large is written at once instead of waiting for the timer (one INSERT: store/audit.ts). */
const BATCH = 512;
/** While the store refuses writes, entries wait up to this many, then the oldest are dropped. */
const MAX_WAITING = 50_000;

export interface AuditLogOptions {
  /** false (TOOLGATE_AUDIT=off): `record` does nothing. */
  enabled: boolean;
  /** A batch the store refused; `dropped` entries are lost for good (the buffer was full). */
  onError: (error: unknown, dropped: number) => void;
}

/**
 * The audit trail's writer: `record` only buffers (no I/O on the request path); a batch is written
 * in multi-row INSERTs each second, or as soon as {@link BATCH} entries wait. `close()` (graceful
 * shutdown, the end of a CLI command) writes what is left, so a SIGTERM loses nothing; a process
 * killed outright loses what it buffered in the last second. One writer per process: several
 * processes append to the same table independently.
 */
export class AuditLog {
  private waiting: AuditEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** The write under way; the next one starts after it, so batches land in order. */
  private writing: Promise<void> = Promise.resolve();
  /**
   * Entry ids: this writer's random prefix and a counter. Unique across processes, with no random
   * bytes drawn per entry, and in recording order (the primary key's index grows at its end).
   */
  private readonly idPrefix = `${newId('aud')}_`;
  private recorded = 0;

  constructor(
    private readonly store: AuditStore,
    private readonly options: AuditLogOptions,
  ) {}

  record(input: AuditInput): void {
    if (!this.options.enabled) return;
    this.waiting.push({
      id: this.idPrefix + (this.recorded++).toString(36).padStart(8, '0'),
      at: input.at ?? auditTime(),
      event: input.event,
      clientId: input.clientId ?? null,
      keyId: input.keyId ?? null,
      orgId: input.orgId ?? null,
      userId: input.userId ?? null,
      provider: input.provider ?? null,
      tool: input.tool ?? null,
      outcome: input.outcome ?? 'ok',
      latencyUs: input.latencyUs ?? null,
      upstreamStatus: input.upstreamStatus ?? null,
      message: input.message ?? null,
    });
    if (this.waiting.length >= BATCH) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS).unref();
  }

  /** Writes every entry recorded so far; resolves once they are stored (or reported lost). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.waiting;
    this.waiting = [];
    if (batch.length > 0) this.writing = this.writing.then(() => this.write(batch));
    return this.writing;
  }

  private async write(batch: AuditEntry[]): Promise<void> {
    try {
      await this.store.append(batch);
    } catch (error) {
      // Kept for the next flush (the store may be back by then), oldest dropped beyond the bound.
      this.waiting = [...batch, ...this.waiting];
      const dropped = Math.max(0, this.waiting.length - MAX_WAITING);
      this.waiting.splice(0, dropped);
      this.options.onError(error, dropped);
      this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS).unref();
    }
  }

  /** Writes what is left and stops the timer (the store is closed next). */
  async close(): Promise<void> {
    await this.flush();
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
