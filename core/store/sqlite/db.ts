import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SqlRunner } from '../statements.js';
import { Checkpointer, type CheckpointerOptions } from './checkpointer.js';
import type { Scope } from '../../domain.js';
import { newId } from '../ids.js';
import { scopeColumns } from '../rows.js';
import { Lru, PER_CALL_ENTRIES } from '../../lru.js';

/**
 * The tables a call reads ({@link SqliteDb.hotRead}), each with rows of its own: a table's key needs
 * no prefix to tell it from another's, so a caller may key by a string it keeps (the key's hash)
 * rather than build one per call (a string made per call is hashed and compared in full).
 */
export type HotTable = 'keys' | 'connections' | 'policies';

/**
 * The tables each hot table's rows are read from (KEY_SELECT, CONNECTION_SELECT, tool_policies): a
 * read that joins another table must name it here, or a write of it would leave stale rows.
 */
export const HOT_SOURCES: Readonly<Record<HotTable, readonly string[]>> = {
  keys: ['api_keys', 'clients'],
  connections: ['connections', 'scopes'],
  policies: ['tool_policies'],
};
const HOT_TABLES = Object.keys(HOT_SOURCES) as HotTable[];

/** The table a writing statement names: INSERT/REPLACE INTO t, UPDATE t, DELETE FROM t. */
const WRITE_TARGET =
  /^\s*(?:(?:INSERT|REPLACE)(?:\s+OR\s+\w+)?\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)\s+"?(\w+)"?[\s(]/i;

/**
 * How long a reading of `PRAGMA data_version` (other connections' commits) stands for the per-call
 * path, by default: the pragma takes the WAL's shared-memory locks, about 2 µs, and a call makes
 * three hot reads (scripts/bench, tools/call). A commit by another process (the CLI, another
 * server) is seen by the requests that start from this long after it; this process's own writes at
 * once.
 */
const DATA_VERSION_MS = 1;

export interface SqliteOptions {
  /** How long a reading of other connections' commits stands ({@link DATA_VERSION_MS}); 0: none. */
  peerCommitsMs?: number;
  /**
   * The WAL checkpointed by a worker thread (checkpointer.ts) instead of inside the commits of this
   * connection: the server's choice; a command's few writes are left to SQLite.
   */
  backgroundCheckpoints?: Partial<CheckpointerOptions>;
}

/** SQLite's default `wal_autocheckpoint`, in pages: what a connection goes back to without its worker. */
const AUTOCHECKPOINT_PAGES = 1_000;

type Param = string | number | null;

/** Matches a row of `scopes s` to a scope's three columns (bind {@link scopeColumns}). */
export const SCOPE_MATCH = `s.client_id = ? AND s.org_id = ? AND s.user_id = ?`;

/**
 * The one SQLite connection every port of {@link SqliteStore} shares: WAL mode, foreign keys on, a
 * busy timeout so the CLI and a running server can share the file. better-sqlite3 is synchronous;
 * each statement is prepared once and answers in microseconds. The ports are `async` functions, so
 * a SQLite error rejects their promise instead of throwing past the caller's `.catch`.
 */
export class SqliteDb {
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  /** The hot tables whose rows each writing statement may change (see {@link hotTablesWrittenBy}). */
  private readonly drops = new Map<string, readonly HotTable[]>();
  /**
   * Scope ids by scope: a scope's row never changes once made, but every user ever seen would
   * otherwise stay in memory for the life of the process.
   */
  private readonly scopeIds = new Lru<string, string>(PER_CALL_ENTRIES);
  /**
   * Rows read on every tool call (see {@link hotRead}), by table, then by the caller's key: a call
   * reads one of each (its key, its scope's connection, its client's policy).
   */
  private readonly hot: Readonly<Record<HotTable, Lru<string, object>>> = {
    keys: new Lru(PER_CALL_ENTRIES),
    connections: new Lru(PER_CALL_ENTRIES),
    policies: new Lru(PER_CALL_ENTRIES),
  };
  /** The data_version (other connections' commits) `hot` was read in. */
  private hotVersion = -1;
  /** The last data_version read, and until when (performance.now()) it stands. */
  private dataVersion = { value: -1, until: -Infinity };
  private readonly peerCommitsMs: number;
  /** The statement a hot read may run (at most once per peerCommitsMs), prepared once in plucking mode. */
  private readonly readDataVersion: Database.Statement;
  private readonly checkpointer: Checkpointer | undefined;

  constructor(file: string, options: SqliteOptions = {}) {
    this.peerCommitsMs = options.peerCommitsMs ?? DATA_VERSION_MS;
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('synchronous = NORMAL');
    this.readDataVersion = this.db.prepare('PRAGMA data_version').pluck();
    if (options.backgroundCheckpoints && file !== ':memory:') {
      const { onFailure, ...rest } = options.backgroundCheckpoints;
      this.db.pragma('wal_autocheckpoint = 0');
      this.checkpointer = new Checkpointer(file, {
        ...rest,
        onFailure: (error) => {
          if (this.db.open) this.db.pragma(`wal_autocheckpoint = ${AUTOCHECKPOINT_PAGES}`);
          onFailure?.(error);
        },
      });
    }
  }

  /**
   * The statement for `sql`, prepared once. Before a writing one (not `readonly`, a property
   * better-sqlite3 sets once) runs, the hot rows it may change are dropped, unless its caller drops
   * the one it changes ({@link runOnRow}). Every statement goes through here (`one`, `all`, `run`):
   * SQLite is not asked what changed (`total_changes()` was a statement on every hot read).
   */
  private stmt(sql: string, oneRow = false): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    if (!statement.readonly && !oneRow) {
      let tables = this.drops.get(sql);
      if (!tables) this.drops.set(sql, (tables = this.hotTablesWrittenBy(sql)));
      for (const table of tables) this.hot[table].clear();
    }
    return statement;
  }

  /**
   * The hot tables whose rows a writing statement may change: those read from the table it names,
   * or from a table a foreign key's action (CASCADE, SET NULL, SET DEFAULT) reaches from it; every
   * hot table when the statement names no table this can tell, or a trigger may fire. So a write of
   * the audit trail, a one-time link or a dashboard session leaves the key, connection and policy
   * rows of every call in memory; a new connection drops the connections' rows, and no key's.
   */
  private hotTablesWrittenBy(sql: string): readonly HotTable[] {
    const target = WRITE_TARGET.exec(sql)?.[1]?.toLowerCase();
    if (target === undefined) return HOT_TABLES;
    const actions = this.db
      .prepare(
        `SELECT m.name AS child, lower(f."table") AS parent FROM sqlite_master m, pragma_foreign_key_list(m.name) f
         WHERE m.type = 'table' AND (f.on_delete IN ('CASCADE', 'SET NULL', 'SET DEFAULT') OR f.on_update IN ('CASCADE', 'SET NULL', 'SET DEFAULT'))`,
      )
      .all() as { child: string; parent: string }[];
    const reached = new Set([target]);
    for (const table of reached)
      for (const { child, parent } of actions) if (parent === table) reached.add(child.toLowerCase());
    const triggered = this.db
      .prepare(`SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND lower(tbl_name) = ?`)
      .pluck();
    if ([...reached].some((table) => (triggered.get(table) as number) > 0)) return HOT_TABLES;
    return HOT_TABLES.filter((hot) => HOT_SOURCES[hot].some((table) => reached.has(table)));
  }

  one<T>(sql: string, ...params: Param[]): T | undefined {
    return this.stmt(sql).get(...params) as T | undefined;
  }

  all<T>(sql: string, ...params: Param[]): T[] {
    return this.stmt(sql).all(...params) as T[];
  }

  /** Runs a write; returns how many rows it changed. */
  run(sql: string, ...params: Param[]): number {
    return this.stmt(sql).run(...params).changes;
  }

  /**
   * Runs a write that changes one hot row at most, the one `table` keeps under `key` (undefined:
   * none), and drops that row alone: where {@link run} drops the table's every row. A key's
   * last_used_at is written once a minute per key; with 10,000 keys in use, dropping every key's
   * row each time would send every call back to the database. True when it changed exactly one
   * row, as {@link changedOne}.
   */
  runOnRow(table: HotTable, key: string | undefined, sql: string, ...params: Param[]): boolean {
    const changed = this.stmt(sql, true).run(...params).changes;
    if (key !== undefined) this.hot[table].delete(key);
    return changed === 1;
  }

  /** Runs statements without parameters (migrations): drops every hot row, and what is known of the schema. */
  exec(sql: string): void {
    for (const rows of Object.values(this.hot)) rows.clear();
    this.drops.clear();
    this.db.exec(sql);
  }

  /** Runs a write that targets one row; true when it changed exactly that row. */
  changedOne(sql: string, ...params: Param[]): boolean {
    return this.run(sql, ...params) === 1;
  }

  /** Runs `work` in one IMMEDIATE transaction (the write lock taken up front: no upgrade deadlock). */
  transaction<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }

  /**
   * A read of the per-call path (the key by its hash, the connection of a scope and provider),
   * answered from memory while nothing it was read from changed: `PRAGMA data_version` moves when
   * another connection (the CLI, another server) commits, which drops every hot row; a write of
   * this connection drops those of the tables it may change ({@link stmt}). Checking costs less
   * than the lookups it saves, and a revocation or reconnect anywhere is seen by the requests that
   * start after it (another process's within {@link DATA_VERSION_MS} by default).
   * An implementation detail of this store, not of the contract.
   */
  hotRead<T extends object>(table: HotTable, key: string, read: () => T | undefined): T | undefined {
    const now = performance.now();
    if (now >= this.dataVersion.until)
      this.dataVersion = {
        value: this.readDataVersion.get() as number,
        until: now + this.peerCommitsMs,
      };
    if (this.dataVersion.value !== this.hotVersion) {
      for (const rows of Object.values(this.hot)) rows.clear();
      this.hotVersion = this.dataVersion.value;
    }
    const rows = this.hot[table];
    const cached = rows.get(key);
    if (cached) return cached as T;
    const value = read();
    if (value === undefined) return undefined;
    rows.set(key, Object.freeze(value));
    return value;
  }

  /** The id of the scope's row, created on first use (SPEC.md: no pre-registration). */
  ensureScope(scope: Scope): string {
    const columns = scopeColumns(scope);
    const cacheKey = columns.join('\u0000');
    const cached = this.scopeIds.get(cacheKey);
    if (cached) return cached;
    // A new scope changes no hot row: a connection is read joined to its own scope (scopes are
    // never updated or deleted), and no hot row stands for a connection that is not there.
    this.runOnRow(
      'connections',
      undefined,
      'INSERT INTO scopes (id, client_id, org_id, user_id, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (client_id, org_id, user_id) DO NOTHING',
      newId('scp'),
      ...columns,
      new Date().toISOString(),
    );
    const row = this.one<{ id: string }>(
      'SELECT id FROM scopes WHERE client_id = ? AND org_id = ? AND user_id = ?',
      ...columns,
    )!;
    this.scopeIds.set(cacheKey, row.id);
    return row.id;
  }

  /** These statements behind the async, dialect-neutral runner of ports written once for both dialects. */
  runner(): SqlRunner {
    return {
      one: async (sql, ...params) => this.one(sql, ...params),
      all: async (sql, ...params) => this.all(sql, ...params),
      run: async (sql, ...params) => this.run(sql, ...params),
      ensureScope: async (scope) => this.ensureScope(scope),
    };
  }

  /** The checkpointer's last checkpoint first; closing the last connection then removes the WAL. */
  async close(): Promise<void> {
    await this.checkpointer?.close();
    if (this.db.open) this.db.close();
  }
}
