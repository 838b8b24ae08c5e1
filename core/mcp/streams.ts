import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { sseMessage } from './protocol.js';
import type { Scope } from '../domain.js';

/**
 * One long-lived stream a caller holds open: a 2025-era GET stream, a 2024 SSE stream, or a
 * 2026-07-28 `subscriptions/listen` stream. The hub knows them all so that revoking a key, ending
 * a session or shutting down closes them, and so that list changes reach exactly one scope.
 */
export interface HubStream {
  keyId: string;
  /** The front-door grant whose token opened the stream (issue 14); absent for an API key. */
  grantId?: string;
  scope: Scope;
  scopeKey: string;
  sessionId?: string;
  /** Delivers a JSON-RPC notification; absent where the SDK delivers notifications itself. */
  send?(json: string): void;
  /** Writes a keep-alive comment; absent where the SDK keeps the stream alive itself. */
  keepAlive?(): void;
  close(): void;
}

/** An SSE response we write ourselves (2025-era GET stream, 2024 SSE transport). */
export class SseWriter {
  private closed = false;
  private readonly closeListeners: (() => void)[] = [];

  constructor(
    private readonly res: ServerResponse,
    headers: Record<string, string>,
  ) {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    });
    res.flushHeaders();
    res.on('close', () => this.finish());
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Writes raw SSE text (an event or a comment). */
  write(text: string): void {
    if (!this.closed) this.res.write(text);
  }

  send(json: string): void {
    this.write(sseMessage(json));
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.closeListeners.push(listener);
  }

  close(): void {
    if (this.closed) return;
    this.res.end();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}

/** Emits 'change' whenever a stream opens or closes (tests and metrics await it). */
export class StreamHub extends EventEmitter {
  private readonly all = new Set<HubStream>();
  private readonly byScope = new Map<string, Set<HubStream>>();

  get size(): number {
    return this.all.size;
  }

  /** Registers a stream; the returned function unregisters it (call it when the stream closes). */
  add(stream: HubStream): () => void {
    this.all.add(stream);
    let scoped = this.byScope.get(stream.scopeKey);
    if (!scoped) this.byScope.set(stream.scopeKey, (scoped = new Set()));
    scoped.add(stream);
    this.emit('change');
    return () => {
      if (!this.all.delete(stream)) return;
      scoped.delete(stream);
      if (scoped.size === 0 && this.byScope.get(stream.scopeKey) === scoped)
        this.byScope.delete(stream.scopeKey);
      this.emit('change');
    };
  }

  /** Sends a notification to every stream of one scope that takes notifications from us. */
  sendToScope(scopeKey: string, json: string): void {
    for (const stream of this.byScope.get(scopeKey) ?? []) stream.send?.(json);
  }

  /** One entry per scope with an open stream: who to tell when tools may have changed. */
  scopes(): Scope[] {
    return [...this.byScope.values()].map((streams) => [...streams][0]!.scope);
  }

  /** Sessions that have a stream open here (they are in use, however long since their last POST). */
  sessionIds(): Set<string> {
    const ids = new Set<string>();
    for (const stream of this.all) if (stream.sessionId !== undefined) ids.add(stream.sessionId);
    return ids;
  }

  countWhere(predicate: (stream: HubStream) => boolean): number {
    let count = 0;
    for (const stream of this.all) if (predicate(stream)) count++;
    return count;
  }

  closeWhere(predicate: (stream: HubStream) => boolean): number {
    let closed = 0;
    for (const stream of [...this.all]) {
      if (predicate(stream)) {
        stream.close();
        closed++;
      }
    }
    return closed;
  }

  /** Writes an SSE comment on every stream we write ourselves, so proxies keep them open. */
  keepAlive(): void {
    for (const stream of this.all) stream.keepAlive?.();
  }
}
