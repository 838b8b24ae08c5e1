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
  /**
   * A client's tool policy (`orgId` null), or one of its organizations', was set or cleared: the
   * tool lists of its scopes may have changed.
   */
  | { type: 'policy.changed'; clientId: string; orgId: string | null }
  /** An API key was revoked: its open streams are cut off. */
  | { type: 'key.revoked'; keyId: string }
  /** A front-door grant was revoked (or its refresh token reused): streams opened with its tokens are cut off. */
  | { type: 'grant.revoked'; grantId: string }
  /** A JSON-RPC message for a 2024/2025 session's event stream, which lives on one process. */
  | { type: 'session.message'; sessionId: string; json: string }
  /** A session was ended (DELETE): whichever process holds its stream closes it. */
  | { type: 'session.ended'; sessionId: string }
  /** An operator asked one process to reload the catalog: the others reload too. */
  | { type: 'catalog.reload'; origin: string }
  /** The catalog was reloaded; `providers` are those whose tools changed. */
  | { type: 'catalog.changed'; providers: string[] }
  /**
   * An upstream MCP server's tools changed (notifications/tools/list_changed, or a new listing
   * differs) for one scope's connection, or (`scope` null) for every scope of a provider that needs
   * no connection: cached lists are dropped, and those scopes' clients told.
   */
  | { type: 'upstream.tools_changed'; scope: Scope | null; provider: string }
  /**
   * Stored records changed: every process drops what its read cache holds under these tags
   * (`key:<key id>`, `scope:<scope key>`, or `*` for everything; see cached-store.ts). The
   * writer, `origin`, dropped them before it published.
   */
  | { type: 'store.changed'; origin: string; tags: string[] };

export type BusEventType = BusEvent['type'];
export type BusHandler<T extends BusEventType> = (event: Extract<BusEvent, { type: T }>) => void;

/**
 * Where a bus reports what it cannot throw at anyone: a handler that threw, an event it could not
 * hand over (`event` set), a message it could not read or a lost connection (`event` undefined).
 */
export type BusErrorHandler = (error: unknown, event?: BusEvent) => void;

/** Publish/subscribe across every process of a deployment (this one included). */
export interface Bus {
  /**
   * Delivers to every subscriber of the event's type, in every process, the publisher's own
   * included. Resolves once handed over (a networked bus delivers later, after the round trip,
   * and at most once: a process disconnected at the time misses the event). Never rejects: an
   * event that cannot be handed over is reported to the bus's error handler, so that publishing,
   * a side effect of work already done, never fails that work.
   */
  publish(event: BusEvent): Promise<void>;
  /** Calls `handler` for each event of `type`; returns the function that unsubscribes. */
  subscribe<T extends BusEventType>(type: T, handler: BusHandler<T>): () => void;
  /**
   * Whether this process hears every event published from now on, for what relies on the bus to
   * stay true (a read cache evicted by `store.changed`): a number while it does, which changes
   * whenever this process may have missed events since (a lost connection), and undefined while
   * it may be missing them now.
   */
  continuity(): number | undefined;
  close(): Promise<void>;
}

/**
 * The subscribers of one process, by event type: what every bus dispatches to once an event has
 * reached the process. Handlers run in subscription order; one that throws does not keep the event
 * from the others, and is reported to `onError`.
 */
export class BusHandlers {
  private readonly byType = new Map<BusEventType, Set<(event: BusEvent) => void>>();

  constructor(private readonly onError: BusErrorHandler) {}

  add<T extends BusEventType>(type: T, handler: BusHandler<T>): () => void {
    let set = this.byType.get(type);
    if (!set) {
      set = new Set();
      this.byType.set(type, set);
    }
    // Each subscription is its own entry, so subscribing one function twice needs two unsubscribes.
    const wrapped = (event: BusEvent): void => handler(event as Extract<BusEvent, { type: T }>);
    set.add(wrapped);
    return () => set.delete(wrapped);
  }

  dispatch(event: BusEvent): void {
    // A copy: a handler that unsubscribes (itself or another) does not disturb this delivery.
    for (const handler of [...(this.byType.get(event.type) ?? [])]) {
      try {
        handler(event);
      } catch (error) {
        this.onError(error, event);
      }
    }
  }

  clear(): void {
    this.byType.clear();
  }
}

/**
 * The in-process bus (one process serves the deployment: the embedded default). Handlers run
 * synchronously within `publish`, so it never fails to hand an event over.
 */
export class MemoryBus implements Bus {
  private readonly handlers: BusHandlers;

  constructor(onError: BusErrorHandler = () => {}) {
    this.handlers = new BusHandlers(onError);
  }

  publish(event: BusEvent): Promise<void> {
    this.handlers.dispatch(event);
    return Promise.resolve();
  }

  subscribe<T extends BusEventType>(type: T, handler: BusHandler<T>): () => void {
    return this.handlers.add(type, handler);
  }

  /** Always listening: nothing between publisher and subscriber can fail. */
  continuity(): number {
    return 0;
  }

  close(): Promise<void> {
    this.handlers.clear();
    return Promise.resolve();
  }
}
