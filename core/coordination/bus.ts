import type { Scope } from '../domain.js';

/**
 * What one process tells the others (and itself): the events whose effects cross processes once
 * several gateway processes serve one deployment. Plain data only, so a networked bus can carry it.
 */
export type BusEvent =
  /** A scope's connection to a provider was stored, replaced, refreshed or removed. */
  | { type: 'connection.changed'; scope: Scope; provider: string }
  /** A connection's tokens were refreshed and the new ones stored (its tools did not change). */
  | { type: 'connection.refreshed'; scope: Scope; provider: string }
  /** An API key was revoked: its open streams are cut off. */
  | { type: 'key.revoked'; keyId: string }
  /** The catalog was reloaded; `providers` are those whose tools changed. */
  | { type: 'catalog.changed'; providers: string[] };

export type BusEventType = BusEvent['type'];
export type BusHandler<T extends BusEventType> = (event: Extract<BusEvent, { type: T }>) => void;

/** Publish/subscribe across every process of a deployment (this one included). */
export interface Bus {
  /** Delivers to every subscriber of the event's type, in every process; resolves once sent. */
  publish(event: BusEvent): Promise<void>;
  /** Calls `handler` for each event of `type`; returns the function that unsubscribes. */
  subscribe<T extends BusEventType>(type: T, handler: BusHandler<T>): () => void;
  close(): Promise<void>;
}

/**
 * The in-process bus (one process serves the deployment: the embedded default). Handlers run
 * synchronously within `publish`, in subscription order; a throwing handler does not keep the
 * event from the others, and is reported to `onError`.
 */
export class MemoryBus implements Bus {
  private readonly handlers = new Map<BusEventType, Set<(event: BusEvent) => void>>();

  constructor(private readonly onError: (error: unknown, event: BusEvent) => void = () => {}) {}

  publish(event: BusEvent): Promise<void> {
    for (const handler of this.handlers.get(event.type) ?? []) {
      try {
        handler(event);
      } catch (error) {
        this.onError(error, event);
      }
    }
    return Promise.resolve();
  }

  subscribe<T extends BusEventType>(type: T, handler: BusHandler<T>): () => void {
    let set = this.handlers.get(type);
    if (!set) {
      set = new Set();
      this.handlers.set(type, set);
    }
    const wrapped = handler as (event: BusEvent) => void;
    set.add(wrapped);
    return () => set.delete(wrapped);
  }

  close(): Promise<void> {
    this.handlers.clear();
    return Promise.resolve();
  }
}
