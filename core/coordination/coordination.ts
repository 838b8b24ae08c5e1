import type { Bus } from './bus.js';
import type { Lock } from './lock.js';
import type { SessionStore } from './sessions.js';

/** What crosses processes: the bus, named locks and the 2025-era session records. */
export interface Coordination {
  bus: Bus;
  lock: Lock;
  sessions: SessionStore;
  /** Closes every connection; locks still held stop being extended and expire after their ttl. */
  close(): Promise<void>;
}
