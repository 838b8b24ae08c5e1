import type { Bus } from '../../coordination/bus.js';
import type { SseWriter } from '../streams.js';

/**
 * The event streams of 2025 sessions (GET) and 2024 SSE sessions held by this process, and the way
 * to reach any session's stream from any process: a message for a stream held here is written at
 * once; one held elsewhere goes over the bus to the process that holds it. So a session's POSTs may
 * land on any process behind a plain round-robin balancer (issue 13).
 */
export class SessionStreams {
  private readonly writers = new Map<string, SseWriter>();
  private readonly unsubscribe: (() => void)[];

  constructor(private readonly bus: Bus) {
    this.unsubscribe = [
      bus.subscribe('session.message', ({ sessionId, json }) => this.writers.get(sessionId)?.send(json)),
      bus.subscribe('session.ended', ({ sessionId }) => this.writers.get(sessionId)?.close()),
    ];
  }

  /** Whether this process holds the session's stream. */
  has(sessionId: string): boolean {
    return this.writers.has(sessionId);
  }

  /** Holds `writer` as the session's stream until it closes. */
  hold(sessionId: string, writer: SseWriter): void {
    this.writers.set(sessionId, writer);
    writer.onClose(() => {
      if (this.writers.get(sessionId) === writer) this.writers.delete(sessionId);
    });
  }

  /** Writes a JSON-RPC message to the session's stream, on whichever process holds it. */
  send(sessionId: string, json: string): void {
    const writer = this.writers.get(sessionId);
    if (writer) writer.send(json);
    else void this.bus.publish({ type: 'session.message', sessionId, json });
  }

  /** Closes the session's stream, on whichever process holds it. */
  end(sessionId: string): void {
    const writer = this.writers.get(sessionId);
    if (writer) writer.close();
    else void this.bus.publish({ type: 'session.ended', sessionId });
  }

  close(): void {
    for (const stop of this.unsubscribe) stop();
  }
}
