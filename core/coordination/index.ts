import type { BusErrorHandler } from './bus.js';
import { MemoryBus } from './bus.js';
import type { Coordination } from './coordination.js';
import { MemoryLock } from './lock.js';
import { openRedisCoordination } from './redis/index.js';
import { MemoryProcessDirectory } from './processes.js';
import { MemorySessionStore } from './sessions.js';

export type { Bus, BusErrorHandler, BusEvent } from './bus.js';
export type { Coordination } from './coordination.js';
export { CachedStore } from './cached-store.js';
export { CachedSessionStore } from './cached-sessions.js';
export { LockTimeoutError, type Lease, type Lock } from './lock.js';
export { newSessionId, type SessionRecord, type SessionStore } from './sessions.js';
export type { ProcessDirectory, ProcessRecord } from './processes.js';
export { DEFAULT_REDIS_PREFIX, openRedisCoordination, type RedisCoordination } from './redis/index.js';

export interface CoordinationOptions {
  /** TOOLGATE_REDIS_URL: when set, processes coordinate through this Redis; otherwise in memory. */
  redisUrl?: string | undefined;
  /** Starts every Redis key and the bus channel (default `toolgate:`); unused in memory. */
  redisPrefix?: string | undefined;
  onBusError: BusErrorHandler;
}

/**
 * The coordination of a deployment: in memory when one process serves it (the embedded default,
 * with SQLite), on Redis when `redisUrl` is set (several processes, issue 13). Returns at once: a
 * Redis connection is made in the background, and made again after an outage.
 */
export function openCoordination(options: CoordinationOptions): Coordination {
  if (options.redisUrl !== undefined) {
    return openRedisCoordination({
      url: options.redisUrl,
      ...(options.redisPrefix === undefined ? {} : { prefix: options.redisPrefix }),
      onBusError: options.onBusError,
    });
  }
  const bus = new MemoryBus(options.onBusError);
  const lock = new MemoryLock();
  return {
    bus,
    lock,
    sessions: new MemorySessionStore(),
    processes: new MemoryProcessDirectory(),
    close: () => {
      lock.close();
      return bus.close();
    },
  };
}
