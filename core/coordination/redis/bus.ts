import type { Redis } from 'ioredis';
import type { Bus, BusErrorHandler, BusEvent, BusEventType, BusHandler } from '../bus.js';
import { BusHandlers } from '../bus.js';

/**
 * How long a first `publish` waits for this process's own subscription to be in place, so that
 * the process does not miss its own early events; bounded, so that a Redis down since start does
 * not hold publishers up for longer.
 */
const SUBSCRIBED_WAIT_MS = 1_000;

/**
 * The bus of a deployment of several processes: every event goes through one Redis pub/sub
 * channel (`${prefix}bus`) as JSON, and each process, the publisher's own included, dispatches
 * what arrives to its subscribers of the event's type. Pub/sub delivers at most once: a process
 * that is disconnected when an event is published misses it (the events are invalidations whose
 * state is in the store, so the next change or request catches up).
 */
export class RedisBus implements Bus {
  private readonly handlers: BusHandlers;
  /** Subscribed on a live connection: every event published now reaches this process. */
  private listening = false;
  private subscribedOnce = false;
  /** Counts the subscriptions made (the first and one after every reconnect): see continuity(). */
  private subscriptions = 0;
  /** Resolves once the channel is subscribed the first time. */
  readonly ready: Promise<void>;

  /**
   * @param publisher a command connection (PUBLISH is an ordinary command)
   * @param subscriber a connection of its own: once subscribed, Redis accepts no other commands on it
   */
  constructor(
    private readonly publisher: Redis,
    private readonly subscriber: Redis,
    private readonly channel: string,
    private readonly onError: BusErrorHandler,
  ) {
    this.handlers = new BusHandlers(onError);
    subscriber.on('message', (from: string, message: string) => {
      if (from === channel) this.receive(message);
    });
    // Events published while the connection is down never reach this process.
    subscriber.on('close', () => {
      this.listening = false;
    });
    // ioredis subscribes again after a reconnect (autoResubscribe); this process counts as
    // listening once a SUBSCRIBE of its own, queued behind that one, is answered.
    subscriber.on('ready', () => {
      if (this.subscribedOnce && !this.listening) void this.listen();
    });
    this.ready = this.listen();
  }

  private async listen(): Promise<void> {
    try {
      await this.subscriber.subscribe(this.channel);
    } catch {
      // The connection was closed for good (close()): nothing to listen to any more.
      return;
    }
    this.subscribedOnce = true;
    this.subscriptions++;
    this.listening = true;
  }

  continuity(): number | undefined {
    return this.listening ? this.subscriptions : undefined;
  }

  async publish(event: BusEvent): Promise<void> {
    try {
      if (!this.subscribedOnce) await Promise.race([this.ready, pause(SUBSCRIBED_WAIT_MS)]);
      await this.publisher.publish(this.channel, JSON.stringify(event));
    } catch (error) {
      this.onError(error, event);
    }
  }

  subscribe<T extends BusEventType>(type: T, handler: BusHandler<T>): () => void {
    return this.handlers.add(type, handler);
  }

  /** Stops dispatching; the connections are closed by their owner (openRedisCoordination). */
  close(): Promise<void> {
    this.handlers.clear();
    return Promise.resolve();
  }

  private receive(message: string): void {
    let event: unknown;
    try {
      event = JSON.parse(message);
    } catch (error) {
      this.onError(new Error(`unreadable bus message on ${this.channel}`, { cause: error }));
      return;
    }
    if (
      typeof event !== 'object' ||
      event === null ||
      typeof (event as { type?: unknown }).type !== 'string'
    ) {
      this.onError(new Error(`bus message without an event type on ${this.channel}`));
      return;
    }
    // An unknown type (a newer process during a rolling upgrade) finds no subscribers: not an error.
    this.handlers.dispatch(event as BusEvent);
  }
}

/** Resolves after `ms` without keeping the process alive. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
