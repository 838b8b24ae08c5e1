import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { SqlRunner } from '../statements.js';
import type { Scope } from '../../domain.js';
import { newId } from '../ids.js';
import { scopeColumns } from '../rows.js';

/** Rows {@link SqliteDb.hotRead} keeps for the per-call path; past it the least recently used goes. */
const HOT_ROWS = 10_000;

/** The database state in one statement: data_version (other connections' commits) and total_changes() (ours). */
const HOT_STATE = 'SELECT (SELECT data_version FROM pragma_data_version), total_changes()';

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
  readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly scopeIds = new Map<string, string>();
  /** Rows read on every tool call (see {@link hotRead}), by statement and arguments. */
  private readonly hot = new Map<string, object>();
  /** The database state `hot` was read in: data_version (other connections) and total_changes (ours). */
  private hotState = { version: -1, changes: -1 };

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('synchronous = NORMAL');
  }

  stmt(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
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
   * answered from memory while nothing in the database changed: `PRAGMA data_version` moves when
   * another connection (the CLI, another server) commits, `total_changes()` when this one writes.
   * Checking both costs less than the lookups it saves, and a revocation or reconnect anywhere is
   * still seen by the next request. An implementation detail of this store, not of the contract.
   */
  hotRead<T extends object>(key: string, read: () => T | undefined): T | undefined {
    const [version, changes] = this.stmt(HOT_STATE).raw().get() as [number, number];
    if (version !== this.hotState.version || changes !== this.hotState.changes) {
      this.hot.clear();
      this.hotState = { version, changes };
    }
    const cached = this.hot.get(key);
    if (cached) {
      // Least recently used first in the map's order: a scope among many keeps its rows.
      this.hot.delete(key);
      this.hot.set(key, cached);
      return cached as T;
    }
    const value = read();
    if (value === undefined) return undefined;
    if (this.hot.size >= HOT_ROWS) this.hot.delete(this.hot.keys().next().value!);
    this.hot.set(key, Object.freeze(value));
    return value;
  }

  /** The id of the scope's row, created on first use (SPEC.md: no pre-registration). */
  ensureScope(scope: Scope): string {
    const columns = scopeColumns(scope);
    const cacheKey = columns.join('\u0000');
    const cached = this.scopeIds.get(cacheKey);
    if (cached) return cached;
    this.run(
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

  close(): void {
    if (this.db.open) this.db.close();
  }
}
