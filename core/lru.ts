/**
 * A map of at most `capacity` entries that drops the least recently used first: what the gateway
 * keeps in memory per key, connection or scope. Past its bound, a deployment with more active
 * scopes than that keeps serving its busy ones from memory; clearing the whole map there instead
 * would send every scope back to the store (or the key derivation) at once, and again at the next
 * bound (issue 19: a scope among 10,000).
 */
export class Lru<K, V> {
  private readonly entries = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  /** The value under `key`, now the most recently used. */
  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      // A Map iterates in insertion order: re-inserting moves the entry to the recent end.
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as K);
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
}
