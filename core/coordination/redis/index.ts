import { Redis, type RedisOptions } from 'ioredis';
import type { BusErrorHandler } from '../bus.js';
import type { Coordination } from '../coordination.js';
import { RedisBus } from './bus.js';
import { RedisLock } from './lock.js';
import { RedisProcessDirectory } from './processes.js';
import { RedisSessionStore } from './sessions.js';

export { RedisBus } from './bus.js';
export { RedisLock } from './lock.js';
export { RedisSessionStore } from './sessions.js';
export { RedisProcessDirectory } from './processes.js';

/** The key prefix when none is given: every key and the bus channel start with it. */
export const DEFAULT_REDIS_PREFIX = 'toolgate:';

export interface RedisCoordinationOptions {
  /** redis:// or rediss:// (TLS), with credentials and database number as Redis URLs carry them. */
  url: string;
  /** Starts every key and the bus channel, so deployments can share a server; default `toolgate:`. */
  prefix?: string;
  /** Bus errors: handlers that threw, events not handed over, unreadable messages, a lost bus connection. */
  onBusError: BusErrorHandler;
}

/** The Redis coordination, which can also say when its bus is listening. */
export interface RedisCoordination extends Coordination {
  bus: RedisBus;
  lock: RedisLock;
  sessions: RedisSessionStore;
  processes: RedisProcessDirectory;
  /** Resolves once this process receives bus events (events published before are not delivered to it). */
  ready(): Promise<void>;
}

/** Reconnect soon after a blip, then every second: the gateway recovers by itself, without a restart. */
const retryStrategy = (attempt: number): number => Math.min(attempt * 100, 1_000);

/**
 * Commands (locks, sessions, PUBLISH) fail fast while Redis is unreachable, so a request or a job
 * answers with an error instead of hanging: a command waits in the offline queue through one
 * reconnection attempt at most (maxRetriesPerRequest: 1; the queue itself is kept so the first
 * commands after start do not fail just because the connection is still being made), and never
 * longer than commandTimeout (a silent network, where no reconnection attempt fails).
 */
const COMMAND_OPTIONS: RedisOptions = {
  maxRetriesPerRequest: 1,
  commandTimeout: 2_000,
  connectTimeout: 2_000,
  retryStrategy,
};

/**
 * The subscriber waits out any outage instead (maxRetriesPerRequest: null): its SUBSCRIBE must not
 * be dropped, and ioredis subscribes again on every reconnect (autoResubscribe).
 */
const SUBSCRIBER_OPTIONS: RedisOptions = {
  maxRetriesPerRequest: null,
  connectTimeout: 2_000,
  autoResubscribe: true,
  retryStrategy,
};

/**
 * Coordination for several gateway processes on one Redis: two connections per process, one for
 * commands (locks, sessions, PUBLISH) and one subscribed to the bus channel. Returns at once; the
 * connections are made in the background and made again after any outage.
 */
export function openRedisCoordination(options: RedisCoordinationOptions): RedisCoordination {
  const prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
  const commands = new Redis(options.url, COMMAND_OPTIONS);
  const subscriber = new Redis(options.url, SUBSCRIBER_OPTIONS);
  // Each failed command rejects to its caller; the repeated connection errors of an outage need no
  // second report (and without a listener ioredis prints every one of them to the console).
  commands.on('error', () => {});
  // The subscriber's loss is reported once per outage: bus events are missed until it reconnects.
  let connected = true;
  subscriber.on('error', (error: unknown) => {
    if (!connected) return;
    connected = false;
    options.onBusError(
      new Error('the Redis bus connection is down: events of other processes are missed until it is back', {
        cause: error,
      }),
    );
  });
  subscriber.on('ready', () => {
    connected = true;
  });
  const bus = new RedisBus(commands, subscriber, `${prefix}bus`, options.onBusError);
  const lock = new RedisLock(commands, prefix);
  const sessions = new RedisSessionStore(commands, prefix);
  const processes = new RedisProcessDirectory(commands, prefix);
  return {
    bus,
    lock,
    sessions,
    processes,
    ready: () => bus.ready,
    async close() {
      lock.close();
      await bus.close();
      await Promise.all([closeConnection(commands), closeConnection(subscriber)]);
    },
  };
}

/** QUIT when connected (pending replies arrive first); otherwise, or if QUIT stalls, just drop it. */
async function closeConnection(redis: Redis): Promise<void> {
  if (redis.status === 'ready') {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      redis.quit().catch(() => {}),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, 1_000))),
    ]);
    clearTimeout(timer);
  }
  // Also stops reconnecting, and rejects whatever still waits in the offline queue.
  redis.disconnect();
}
