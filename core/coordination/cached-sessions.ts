import type { Awaitable } from '../awaitable.js';
import type { Bus } from './bus.js';
import { Evictions, ReadCache } from './read-cache.js';
import type { SessionChanges, SessionRecord, SessionStore } from './sessions.js';

/** Sessions a process keeps in memory: a few hundred bytes each. */
const CAPACITY = 20_000;
/** Also bounds how stale a cached lastSeenAt gets (it only decides when to touch the session again). */
const TTL_MS = 5_000;

const sessionTag = (id: string): string => `session:${id}`;

/**
 * The session records of a deployment of several processes (Redis), with the read every POST of a
 * 2025 or 2024 session makes answered from memory, as cached-store.ts does for the store: creating,
 * changing the protocol version or deleting a session evicts it here at once and on every other
 * process through the bus; nothing is served while the bus may be missing events. A touch
 * (lastSeenAt only) evicts it here only: another process's older lastSeenAt only makes it touch
 * the session sooner, and idle expiry reads Redis's index, not records.
 */
export class CachedSessionStore implements SessionStore {
  private readonly records: ReadCache<SessionRecord>;
  private readonly evictions: Evictions;

  constructor(
    private readonly inner: SessionStore,
    bus: Bus,
  ) {
    this.records = new ReadCache(bus, CAPACITY, TTL_MS);
    this.evictions = new Evictions(bus, (tag) => {
      if (tag === '*' || tag.startsWith('session:')) this.records.evict(tag);
    });
  }

  get(id: string): Awaitable<SessionRecord | undefined> {
    return this.records.get(
      id,
      async () => {
        const record = await this.inner.get(id);
        // Shared by every reader: frozen, so that none changes another's copy.
        return record && Object.freeze({ ...record, scope: Object.freeze(record.scope) });
      },
      () => sessionTag(id),
    );
  }

  create(record: SessionRecord): Promise<void> {
    return this.evictions.after([sessionTag(record.id)], () => this.inner.create(record));
  }

  async update(id: string, changes: SessionChanges): Promise<void> {
    if (!('protocolVersion' in changes)) {
      await this.inner.update(id, changes);
      this.records.evict(sessionTag(id));
      return;
    }
    await this.evictions.after([sessionTag(id)], () => this.inner.update(id, changes));
  }

  delete(id: string): Promise<void> {
    return this.evictions.after([sessionTag(id)], () => this.inner.delete(id));
  }

  idleSince(before: number): Promise<string[]> {
    return this.inner.idleSince(before);
  }

  count(): Promise<number> {
    return this.inner.count();
  }

  /** Stops listening for evictions; the inner store's connection is its owner's to close. */
  close(): void {
    this.evictions.close();
  }
}
