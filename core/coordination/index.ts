import type { Bus } from './bus.js';
import { MemoryBus } from './bus.js';
import type { Lock } from './lock.js';
import { MemoryLock } from './lock.js';
import type { SessionStore } from './sessions.js';
import { MemorySessionStore } from './sessions.js';

export type { Bus, BusEvent } from './bus.js';
export type { Lock } from './lock.js';
export { newSessionId, type SessionRecord, type SessionStore } from './sessions.js';

/** What crosses processes: the bus, named locks and the 2025-era session records. */
export interface Coordination {
  bus: Bus;
  lock: Lock;
  sessions: SessionStore;
  close(): Promise<void>;
}

/**
 * The coordination of one process (the embedded default, with SQLite). A networked implementation
 * (Redis, TOOLGATE_REDIS_URL) joins here behind the same three ports.
 */
export function openCoordination(options: { onBusError: (error: unknown) => void }): Coordination {
  const bus = new MemoryBus(options.onBusError);
  return { bus, lock: new MemoryLock(), sessions: new MemorySessionStore(), close: () => bus.close() };
}
