import { Pool, types, type PoolClient, type QueryResult } from 'pg';
import type { Scope } from '../../domain.js';
import { Lru, PER_CALL_ENTRIES } from '../../lru.js';
import { newId } from '../ids.js';
import { scopeColumns } from '../rows.js';
import { numberPlaceholders, type SqlRunner } from '../statements.js';

/**
 * How long a query waits for a pooled connection (a new one, or a free one when all are busy) before
 * rejecting: an unreachable server answers `ping()` false in bounded time instead of hanging.
 */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Toolgate's advisory locks, as (namespace, lock) pairs: the namespace ('tool' in ASCII) keeps them
 * apart from other applications' locks on the same database.
 */
const LOCK_NAMESPACE = 0x746f6f6c;
const LOCKS = { migrate: 1, oauthAppPut: 2 } as const;

/** A bound value: arrays are for `unnest($1::text[])` batches. */
type Param = string | number | null | readonly string[] | readonly number[];

/** What a statement runs on: the pool (any free connection, autocommit) or one checked-out client. */
interface Queryable {
  query(text: string, values?: Param[]): Promise<QueryResult>;
}

export interface PostgresOptions {
  /** Most connections the pool opens (pg's default: 10). */
  max?: number;
  /**
   * The schema every pooled connection works in (its search_path), instead of the role's default
   * (`public`); tests give each case a schema of its own. A lower-case SQL identifier.
   */
  schema?: string;
}

/** Matches a row of `scopes s` to a scope's three columns (bind {@link scopeColumns} from `$first` on). */
export function scopeMatch(first: number): string {
  return `s.client_id = $${first} AND s.org_id = $${first + 1} AND s.user_id = $${first + 2}`;
}

/**
 * Statements with their results as the ports want them, against the pool or, in a transaction, one
 * client. Rows come back as the driver reads them: TEXT as strings, INTEGER as numbers (COUNT(*) is
 * a BIGINT, which pg gives as a string: the ports cast it to INTEGER).
 */
export class PgStatements {
  constructor(private readonly target: Queryable) {}

  async one<T>(sql: string, ...params: Param[]): Promise<T | undefined> {
    return (await this.all<T>(sql, ...params))[0];
  }

  async all<T>(sql: string, ...params: Param[]): Promise<T[]> {
    return (await this.target.query(sql, params)).rows as T[];
  }

  /** Runs a write; returns how many rows it changed. */
  async run(sql: string, ...params: Param[]): Promise<number> {
    return (await this.target.query(sql, params)).rowCount ?? 0;
  }

  /** Runs a write that targets one row; true when it changed exactly that row. */
  async changedOne(sql: string, ...params: Param[]): Promise<boolean> {
    return (await this.run(sql, ...params)) === 1;
  }

  /**
   * Takes one of Toolgate's advisory locks, waiting while a transaction of any process holds it;
   * held until this transaction ends (so: inside {@link PostgresDb.transaction} only).
   */
  async lock(name: keyof typeof LOCKS): Promise<void> {
    await this.target.query(`SELECT pg_advisory_xact_lock(${LOCK_NAMESPACE}, ${LOCKS[name]})`);
  }

  /** Runs a script of several statements (a migration): no parameters, no result. */
  async exec(sql: string): Promise<void> {
    await this.target.query(sql);
  }
}

/**
 * The pool's readers of column values: pg's own, but a `json` column (the audit trail's context) is
 * read as its text, as SQLite gives it, so the ports and `store migrate` see the same row from both.
 */
const textOfJson: typeof types.getTypeParser = (oid, format) =>
  oid === types.builtins.JSON ? String : (types.getTypeParser(oid, format) as unknown);

/**
 * The connection pool every port of {@link PostgresStore} shares. Statements outside
 * {@link transaction} run in autocommit on any free connection: each is atomic on its own, and the
 * ports are written so that one statement is enough wherever they can (ON CONFLICT, conditional
 * UPDATE, DELETE ... RETURNING).
 */
export class PostgresDb extends PgStatements {
  private readonly pool: Pool;
  /**
   * Scope ids never change and scope rows are never deleted, so a process may keep them: as many as
   * its other per-call entries, not every user it ever saw.
   */
  private readonly scopeIds = new Lru<string, string>(PER_CALL_ENTRIES);
  private closing: Promise<void> | undefined;

  constructor(url: string, options: PostgresOptions = {}) {
    const { max, schema } = options;
    if (schema !== undefined && !/^[a-z_][a-z0-9_]*$/.test(schema)) {
      throw new Error(`PostgreSQL schema "${schema}": use a lower-case SQL identifier (a-z, 0-9, _).`);
    }
    const pool = new Pool({
      connectionString: url,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      ...(max === undefined ? {} : { max }),
      // A startup parameter, so that it holds from the connection's first statement on.
      ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
      types: { getTypeParser: textOfJson },
    });
    super(pool);
    this.pool = pool;
    // An idle connection the server drops (restart, failover) is reported here; without a listener
    // the 'error' event would end the process. The pool discards that connection and opens another
    // on the next query; a query that fails rejects its own promise.
    this.pool.on('error', () => {});
  }

  /**
   * Runs `work` in one transaction on one connection: COMMIT when it resolves, ROLLBACK when it
   * rejects (the rejection is passed on). READ COMMITTED whatever the server's default: each
   * statement sees what committed before it, which the ports' locking (FOR UPDATE, advisory and
   * table locks) relies on.
   */
  async transaction<T>(work: (tx: PgStatements) => Promise<T>): Promise<T> {
    const client: PoolClient = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      const result = await work(new PgStatements(client));
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch((rollbackError: unknown) => {
        broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
      });
      throw error;
    } finally {
      // A connection whose ROLLBACK failed is in no known state: the pool closes it instead of reusing it.
      client.release(broken);
    }
  }

  /** The id of the scope's row, created on first use (SPEC.md: no pre-registration). */
  /** These statements behind the dialect-neutral runner of ports written once for both dialects. */
  runner(): SqlRunner {
    return {
      one: (sql, ...params) => this.one(numberPlaceholders(sql), ...params),
      all: (sql, ...params) => this.all(numberPlaceholders(sql), ...params),
      run: (sql, ...params) => this.run(numberPlaceholders(sql), ...params),
      ensureScope: (scope) => this.ensureScope(scope),
    };
  }

  async ensureScope(scope: Scope): Promise<string> {
    // The cache must not answer for a closed store: after close(), every method rejects.
    if (this.closing) throw new Error('The PostgreSQL store is closed.');
    const columns = scopeColumns(scope);
    const cacheKey = columns.join('\u0000');
    const cached = this.scopeIds.get(cacheKey);
    if (cached) return cached;
    const inserted = await this.one<{ id: string }>(
      `INSERT INTO scopes (id, client_id, org_id, user_id, created_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (client_id, org_id, user_id) DO NOTHING RETURNING id`,
      newId('scp'),
      ...columns,
      new Date().toISOString(),
    );
    // On a conflict, another call committed the row first. It is read by a statement of its own: a
    // new snapshot, which sees that commit (one INSERT ... SELECT would not).
    const row =
      inserted ??
      (await this.one<{ id: string }>(
        'SELECT id FROM scopes WHERE client_id = $1 AND org_id = $2 AND user_id = $3',
        ...columns,
      ))!;
    this.scopeIds.set(cacheKey, row.id);
    return row.id;
  }

  /** Ends the pool (once, however often it is called); every later statement rejects. */
  close(): Promise<void> {
    this.closing ??= this.pool.end();
    return this.closing;
  }
}
