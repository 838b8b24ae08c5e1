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
let secondMs = NaN;
/** The ISO time of the second under way up to its milliseconds: `2026-11-28T04:20:31.` */
let secondPrefix = '';
/** The end of an ISO time for each millisecond of a second: `000Z` to `999Z`. */
const MILLISECONDS = Array.from({ length: 1_000 }, (_, ms) => `${String(ms).padStart(3, '0')}Z`);

/**
 * The ISO 8601 time of an entry recorded now. Calls in the same millisecond share one string, and a
 * new millisecond is the second's prefix and its digits joined, one string made: formatting a Date
 * for each call is a measurable part of what the audit trail costs a call (scripts/bench, audit on
 * ÷ off), and an entry keeps its time alive until it is written.
 */
export function auditTime(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    const ms = now % 1_000;
    if (now - ms !== secondMs) {
      secondMs = now - ms;
      // `.000Z` off the end: the rest is the same whatever the year's width.
      secondPrefix = new Date(secondMs).toISOString().slice(0, -4);
    }
    lastIso = secondPrefix + MILLISECONDS[ms]!;
  }
  return lastIso;
}

/** Default of {@link AuditLogOptions.flushMs}. */
const FLUSH_MS = 1_000;
/** A batch this large is written at once instead of waiting for the timer (one INSERT: store/audit.ts). */
const BATCH = 512;
/** While the store refuses writes, entries wait up to this many, then the oldest are dropped. */
const MAX_WAITING = 50_000;

export interface AuditLogOptions {
  /** false (TOOLGATE_AUDIT=off): `record` does nothing. */
  enabled: boolean;
  /**
   * Longest an entry waits before it is written (TOOLGATE_AUDIT_FLUSH_MS; default 1 s): a process
   * killed outright loses the entries of about this long.
   */
  flushMs?: number;
  /** A batch the store refused; `dropped` entries are lost for good (the buffer was full). */
  onError: (error: unknown, dropped: number) => void;
}

/**
 * The audit trail's writer: `record` only buffers (no I/O on the request path); a batch is written
 * in multi-row INSERTs each second (`flushMs`), or as soon as {@link BATCH} entries wait. `close()`
 * (graceful shutdown, the end of a CLI command) writes what is left, so a SIGTERM loses nothing; a
 * process killed outright loses what it buffered in its last `flushMs`. One writer per process:
 * several processes append to the same table independently.
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
  private readonly flushMs: number;

  constructor(
    private readonly store: AuditStore,
    private readonly options: AuditLogOptions,
  ) {
    this.flushMs = options.flushMs ?? FLUSH_MS;
  }

  /** Whether entries are kept (TOOLGATE_AUDIT); when not, `record` and `add` do nothing. */
  get enabled(): boolean {
    return this.options.enabled;
  }

  record(input: AuditInput): void {
    if (!this.options.enabled) return;
    this.add({
      id: '',
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
  }

  /**
   * Records a whole entry, its `id` left '': the entry is kept, not copied, and numbered when it is
   * written ({@link flush}). An id made then is gone with the write; one made now would be kept
   * alive with its entry, copied by each young-generation collection until the batch is written
   * (the audit trail's share of a tools/call's collections, scripts/bench/instructions.ts).
   */
  add(entry: AuditEntry): void {
    if (!this.options.enabled) return;
    this.waiting.push(entry);
    if (this.waiting.length >= BATCH) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
  }

  /** The id of a new entry (see {@link idPrefix}). */
  private nextId(): string {
    return this.idPrefix + (this.recorded++).toString(36).padStart(8, '0');
  }

  /** Writes every entry recorded so far; resolves once they are stored (or reported lost). */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.waiting;
    this.waiting = [];
    // In recording order; an entry kept from a refused write has its id already.
    for (const entry of batch) if (entry.id === '') entry.id = this.nextId();
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
      this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
    }
  }

  /** Writes what is left and stops the timer (the store is closed next). */
  async close(): Promise<void> {
    await this.flush();
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
