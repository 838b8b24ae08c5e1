import { randomBytes } from 'node:crypto';
import type { Awaitable } from '../awaitable.js';
import type { Scope, ToolSurface } from '../domain.js';

/**
 * A 2025-era Streamable HTTP or 2024-11-05 SSE session. Deliberately small (a few strings), and
 * plain data behind an interface, so a shared store can hold sessions when several processes serve
 * one deployment; only the open event stream itself is process-local (see streams.ts).
 */
export interface SessionRecord {
  id: string;
  transport: 'streamable' | 'sse';
  clientId: string;
  scope: Scope;
  scopeKey: string;
  /** Set by initialize; undefined on an SSE session until the client initializes. */
  protocolVersion: string | undefined;
  /** The client declared URL-mode elicitation (2025-11-25 and later): links can be offered that way. */
  elicitUrl: boolean;
  /** The tool list the session was opened with (`tools=`); absent: chosen by the scope's size. */
  surface?: ToolSurface;
  /** Milliseconds since the epoch of the last request on this session. */
  lastSeenAt: number;
}

/** What `SessionStore.update` may change on a stored session. */
export type SessionChanges = Partial<Pick<SessionRecord, 'protocolVersion' | 'lastSeenAt'>>;

/**
 * The 2025-era session records of the deployment. Records are values: what `get` returns is a copy,
 * which later updates do not change (as with a store in another process).
 */
export interface SessionStore {
  /** Stores `record`, replacing a session of the same id. */
  create(record: SessionRecord): Promise<void>;
  /** Asked on every request of a session: answered at once where the store holds it in memory. */
  get(id: string): Awaitable<SessionRecord | undefined>;
  /** Changes a stored session; does nothing when there is none of that id (it ended meanwhile). */
  update(id: string, changes: SessionChanges): Promise<void>;
  /** Removes a session; does nothing when there is none. */
  delete(id: string): Promise<void>;
  /** Ids of sessions idle since before `before` (ms), for expiry. */
  idleSince(before: number): Promise<string[]>;
  /** How many sessions are stored (operators, the benchmark). */
  count(): Promise<number>;
}

/** Session ids: 128 random bits, visible ASCII as the spec asks. */
export function newSessionId(): string {
  return randomBytes(16).toString('base64url');
}

/** The in-process session store (one process serves the deployment). */
export class MemorySessionStore implements SessionStore {
  private readonly sessions = new Map<string, SessionRecord>();

  count(): Promise<number> {
    return Promise.resolve(this.sessions.size);
  }

  create(record: SessionRecord): Promise<void> {
    this.sessions.set(record.id, copy(record));
    return Promise.resolve();
  }

  get(id: string): SessionRecord | undefined {
    const record = this.sessions.get(id);
    return record && copy(record);
  }

  update(id: string, changes: SessionChanges): Promise<void> {
    const record = this.sessions.get(id);
    if (record) Object.assign(record, changes);
    return Promise.resolve();
  }

  delete(id: string): Promise<void> {
    this.sessions.delete(id);
    return Promise.resolve();
  }

  idleSince(before: number): Promise<string[]> {
    const ids: string[] = [];
    for (const record of this.sessions.values()) if (record.lastSeenAt < before) ids.push(record.id);
    return Promise.resolve(ids);
  }
}

/** A record no caller shares with the store (the scope is the only nested value). */
function copy(record: SessionRecord): SessionRecord {
  return { ...record, scope: { ...record.scope } };
}
