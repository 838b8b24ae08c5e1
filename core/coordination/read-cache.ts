import { randomUUID } from 'node:crypto';
import type { Awaitable } from '../awaitable.js';
import type { Bus } from './bus.js';

interface Entry<V> {
  value: V;
  tag: string;
  /** The bus's continuity when the value was read: the entry is good while it is unchanged. */
  continuity: number;
  expiresAt: number;
}

/**
 * Values read from the store, kept in memory and dropped by tag when anyone writes (this process
 * synchronously, the others through the bus). A value is served only while the bus hears every
 * event: an entry read before a lost bus connection is never served after it. A read racing a
 * write is not kept (the write bumps the generation the read started with), so a value evicted by
 * a write never comes back from a read that began before it. Least recently used entries go first
 * past `capacity`; every entry goes after `ttlMs` whatever happens, which bounds how long a write
 * made outside the gateway (by hand in the database) stays unseen.
 */
export class ReadCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly byTag = new Map<string, Set<string>>();
  private generation = 0;

  constructor(
    private readonly bus: Bus,
    private readonly capacity: number,
    private readonly ttlMs: number,
  ) {}

  /**
   * The value under `key`: from memory at once (no promise), else from `load` (kept under
   * `tagOf(value)`; misses are not kept).
   */
  get(
    key: string,
    load: () => Promise<V | undefined>,
    tagOf: (value: V) => string,
  ): Awaitable<V | undefined> {
    const continuity = this.bus.continuity();
    const entry = this.entries.get(key);
    if (entry !== undefined) {
      if (entry.continuity === continuity && entry.expiresAt > Date.now()) {
        // Least recently used first in the map's order.
        this.entries.delete(key);
        this.entries.set(key, entry);
        return entry.value;
      }
      this.remove(key, entry.tag);
    }
    return this.load(key, load, tagOf, continuity);
  }

  private async load(
    key: string,
    load: () => Promise<V | undefined>,
    tagOf: (value: V) => string,
    continuity: number | undefined,
  ): Promise<V | undefined> {
    const generation = this.generation;
    const value = await load();
    if (
      value !== undefined &&
      continuity !== undefined &&
      generation === this.generation &&
      this.bus.continuity() === continuity
    )
      this.keep(key, { value, tag: tagOf(value), continuity, expiresAt: Date.now() + this.ttlMs });
    return value;
  }

  /** Drops every entry under `tag` (`*`: all), and keeps no read already under way. */
  evict(tag: string): void {
    this.generation++;
    if (tag === '*') {
      this.entries.clear();
      this.byTag.clear();
      return;
    }
    for (const key of this.byTag.get(tag) ?? []) this.entries.delete(key);
    this.byTag.delete(tag);
  }

  get size(): number {
    return this.entries.size;
  }

  private keep(key: string, entry: Entry<V>): void {
    const previous = this.entries.get(key);
    if (previous !== undefined) this.remove(key, previous.tag);
    this.entries.set(key, entry);
    let keys = this.byTag.get(entry.tag);
    if (!keys) this.byTag.set(entry.tag, (keys = new Set()));
    keys.add(key);
    if (this.entries.size > this.capacity) {
      const [oldest, old] = this.entries.entries().next().value as [string, Entry<V>];
      this.remove(oldest, old.tag);
    }
  }

  private remove(key: string, tag: string): void {
    this.entries.delete(key);
    const keys = this.byTag.get(tag);
    keys?.delete(key);
    if (keys?.size === 0) this.byTag.delete(tag);
  }
}

/**
 * Evictions across processes, for a cache in front of shared records: a write evicts what it
 * changed in its own process before it returns, then publishes `store.changed`, on which every
 * other process evicts the same tags (its own echo is skipped: it evicted already).
 */
export class Evictions {
  /** Names this process's writes on the bus. */
  private readonly origin = randomUUID();
  private readonly unsubscribe: () => void;

  /** `evict` is called for each tag a write evicts, in this process or in another. */
  constructor(
    private readonly bus: Bus,
    private readonly evict: (tag: string) => void,
  ) {
    this.unsubscribe = bus.subscribe('store.changed', ({ origin, tags }) => {
      if (origin !== this.origin) tags.forEach(evict);
    });
  }

  /**
   * Runs a write, then evicts `tags` here and on every process, also when the write failed (it
   * may have committed before its answer was lost).
   */
  async after<T>(tags: string[], write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      tags.forEach(this.evict);
      await this.bus.publish({ type: 'store.changed', origin: this.origin, tags });
    }
  }

  close(): void {
    this.unsubscribe();
  }
}
