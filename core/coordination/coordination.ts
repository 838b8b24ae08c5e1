import type { Bus } from './bus.js';
import type { Lock } from './lock.js';
import type { ProcessDirectory } from './processes.js';
import type { SessionStore } from './sessions.js';

/** What crosses processes: the bus, named locks, the 2025-era session records, the live processes. */
export interface Coordination {
  bus: Bus;
  lock: Lock;
  sessions: SessionStore;
  processes: ProcessDirectory;
  /** Closes every connection; locks still held stop being extended and expire after their ttl. */
  close(): Promise<void>;
}
