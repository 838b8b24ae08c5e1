/**
 * Entries each per-call cache keeps (a key's lookup hash and record, a scope's id, connection and
 * opened credentials, a client's policy): room for twice 10,000 busy scopes or keys, whatever order
 * they call in. A least-recently-used bound just below what a cycle of calls needs would miss on
 * every call (issue 19: a scope among 10,000).
 */
export const PER_CALL_ENTRIES = 20_000;

/** An entry and whether it was read since the sweep last passed it. */
interface Slot<V> {
  value: V;
  used: boolean;
}

/**
 * A map of at most `capacity` entries that drops one not used lately first: what the gateway keeps
 * in memory per key, connection or scope. Past its bound, a deployment with more active scopes than
 * that keeps serving its busy ones from memory; clearing the whole map there instead would send
 * every scope back to the store (or the key derivation) at once, and again at the next bound
 * (issue 19: a scope among 10,000).
 *
 * Least recently used, approximated by a second chance (CLOCK): a read only marks its entry; when
 * an entry must go, the oldest unmarked one goes, and a marked one passed on the way is unmarked and
 * moved to the recent end. A read changes nothing in the map: moving each entry read to the end
 * would store the caller's freshly built key in the long-lived map on every call, which the
 * garbage collector then promotes (scripts/bench, tools/call with 10,000 scopes).
 */
export class Lru<K, V> {
  private readonly entries = new Map<K, Slot<V>>();

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const slot = this.entries.get(key);
    if (slot === undefined) return undefined;
    slot.used = true;
    return slot.value;
  }

  set(key: K, value: V): void {
    const slot = this.entries.get(key);
    if (slot !== undefined) {
      slot.value = value;
      slot.used = true;
      return;
    }
    this.entries.set(key, { value, used: false });
    if (this.entries.size > this.capacity) this.evictOne();
  }

  delete(key: K): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  /** Drops the oldest entry not read since the sweep last passed it (a Map iterates oldest first). */
  private evictOne(): void {
    for (const [key, slot] of this.entries) {
      this.entries.delete(key);
      if (!slot.used) return;
      slot.used = false;
      this.entries.set(key, slot);
    }
  }
}
