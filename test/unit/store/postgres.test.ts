import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemoryBus } from '../../../core/coordination/bus.js';
import { CachedStore } from '../../../core/coordination/cached-store.js';
import { openStore } from '../../../core/store/index.js';
import { MIGRATIONS as SQLITE_MIGRATIONS } from '../../../core/store/migrations.js';
import { PostgresStore } from '../../../core/store/postgres/index.js';
import { MIGRATIONS } from '../../../core/store/postgres/migrations.js';
import { createDatabase, randomName, requirePostgres, type TestDatabase } from '../../helpers/postgres.js';
import {
  AUDIT_BEFORE_10,
  describeStoreContract,
  expectAuditBefore10Kept,
  type StoreFixture,
} from './contract.js';

/**
 * What the SQLite migrations create: each column as `table.column`, with `!` when it is NOT NULL
 * (SQLite lets a TEXT primary key hold NULL; PostgreSQL does not, and no store writes one), and the
 * indexes by name (those the schema declares; constraints' own aside).
 */
function sqliteSchema(): { columns: string[]; indexes: string[] } {
  const db = new Database(':memory:');
  try {
    for (const migration of SQLITE_MIGRATIONS) db.exec(migration.sql);
    const columns = db
      .prepare(
        `SELECT m.name || '.' || p.name || CASE WHEN p."notnull" OR p.pk > 0 THEN '!' ELSE '' END
         FROM sqlite_master m JOIN pragma_table_info(m.name) p WHERE m.type = 'table'`,
      )
      .pluck()
      .all() as string[];
    const indexes = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL")
      .pluck()
      .all() as string[];
    return { columns, indexes };
  } finally {
    db.close();
  }
}

describe('PostgresStore (without a server)', () => {
  it('has a migration for each SQLite one, with the same number and name', () => {
    const numbered = (migrations: typeof MIGRATIONS) => migrations.map((m) => [m.version, m.name]);
    expect(numbered(MIGRATIONS)).toEqual(numbered(SQLITE_MIGRATIONS));
  });

  it('is what openStore opens for a postgres: or postgresql: URL', async () => {
    for (const url of [
      'postgres://toolgate@127.0.0.1:1/toolgate',
      'postgresql://toolgate@127.0.0.1:1/toolgate',
    ]) {
      const store = openStore(url);
      expect(store).toBeInstanceOf(PostgresStore);
      await store.close();
    }
  });

  it('answers ping with false, and rejects calls, while the server is unreachable', async () => {
    // Port 1 refuses connections: what /readyz sees while the database is down.
    const store = new PostgresStore('postgres://toolgate@127.0.0.1:1/toolgate');
    try {
      await expect(store.ping()).resolves.toBe(false);
      await expect(store.meta.get('k')).rejects.toThrow();
      await expect(store.migrate()).rejects.toThrow();
    } finally {
      await store.close();
    }
  });
});

await requirePostgres(import.meta.url);

describe('on PostgreSQL', () => {
  // One database for this file, with a linguistic default collation (see createDatabase), and one
  // schema per test in it.
  let database: TestDatabase | undefined;
  beforeAll(async () => {
    database = await createDatabase({ icuLocale: 'en-US' });
  });
  afterAll(async () => {
    await database?.drop();
  });

  /** A fresh schema in the file's database, migrated: what each test of the contract gets. */
  async function freshSchema(): Promise<StoreFixture & { schema: string }> {
    const db = database!;
    const schema = randomName('t');
    await db.query(`CREATE SCHEMA ${schema}`);
    const destroy = async () => {
      await db.query(`DROP SCHEMA ${schema} CASCADE`);
    };
    const store = new PostgresStore(db.url, { schema });
    try {
      await store.migrate();
    } catch (error) {
      await store.close();
      await destroy();
      throw error;
    }
    return { schema, store, open: () => Promise.resolve(new PostgresStore(db.url, { schema })), destroy };
  }

  describeStoreContract('PostgresStore', freshSchema);

  // What the gateway opens on PostgreSQL: the store behind its read cache, every handle's cache
  // evicted through one bus (in memory here: it delivers within publish, as soon as Redis would).
  describeStoreContract('PostgresStore behind the read cache', async () => {
    const bus = new MemoryBus();
    const fixture = await freshSchema();
    return {
      store: new CachedStore(fixture.store, bus),
      open: async () => new CachedStore(await fixture.open(), bus),
      destroy: () => fixture.destroy(),
    };
  });

  describe('PostgresStore (PostgreSQL only)', () => {
    it('applies each migration once when two processes start on an empty database at the same time', async () => {
      // A database of its own, in its default schema: as replicas of a new deployment start.
      const fresh = await createDatabase();
      const a = new PostgresStore(fresh.url);
      const b = new PostgresStore(fresh.url);
      try {
        const [byA, byB] = await Promise.all([a.migrate(), b.migrate()]);
        expect([...byA, ...byB].sort((x, y) => x - y)).toEqual(MIGRATIONS.map((m) => m.version));
        const recorded = await fresh.query<{ version: number; times: number }>(
          'SELECT version, COUNT(*)::integer AS times FROM schema_migrations GROUP BY version ORDER BY version',
        );
        expect(recorded).toEqual(MIGRATIONS.map((m) => ({ version: m.version, times: 1 })));
        expect(await a.migrate()).toEqual([]);
        expect(await a.meta.setOnce('k', 'v')).toBe(true);
        expect(await b.meta.get('k')).toBe('v');
      } finally {
        await Promise.all([a.close(), b.close()]);
        await fresh.drop();
      }
    });

    it('keeps the audit entries of a database at version 9 through migrations 10 and 11', async () => {
      const db = database!;
      const schema = randomName('t');
      await db.query(`CREATE SCHEMA ${schema}`);
      const store = new PostgresStore(db.url, { schema });
      try {
        const older = MIGRATIONS.filter((m) => m.version <= 9);
        await db.query(
          `SET search_path TO ${schema};
           CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL);
           ${older.map((m) => `${m.sql};\nINSERT INTO schema_migrations VALUES (${m.version}, 'v${m.version}', 'then');`).join('\n')}
           ${AUDIT_BEFORE_10.sql}`,
        );
        await expectAuditBefore10Kept(store);
      } finally {
        await store.close();
        await db.query(`DROP SCHEMA ${schema} CASCADE`);
      }
    });

    it('has the tables, columns, nullability and indexes of the SQLite schema, plus seq', async () => {
      const sqlite = sqliteSchema();
      const fixture = await freshSchema();
      try {
        const columns = await database!.query<{ c: string }>(
          `SELECT table_name || '.' || column_name || CASE WHEN is_nullable = 'NO' THEN '!' ELSE '' END AS c
           FROM information_schema.columns WHERE table_schema = $1 AND table_name <> 'schema_migrations'`,
          [fixture.schema],
        );
        const indexes = await database!.query<{ name: string }>(
          `SELECT i.relname AS name FROM pg_index x
             JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_namespace n ON n.oid = i.relnamespace
           WHERE n.nspname = $1 AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid)`,
          [fixture.schema],
        );
        // seq: the tie-breaker of "newest first" (SQLite has its rowid).
        const seq = ['reports.seq!', 'connection_events.seq!'];
        expect(columns.map((r) => r.c).sort()).toEqual([...sqlite.columns, ...seq].sort());
        expect(indexes.map((r) => r.name).sort()).toEqual([...sqlite.indexes].sort());
      } finally {
        await fixture.store.close();
        await fixture.destroy();
      }
    });

    it('hands a link to exactly one of many consumers racing from two pools', async () => {
      const fixture = await freshSchema();
      const other = await fixture.open();
      try {
        const { store } = fixture;
        const client = await store.keys.createClient('acme');
        const scope = { clientId: client.id, orgId: null, userId: 'u1' };
        const expiresAt = new Date(Date.now() + 600_000).toISOString();
        const now = new Date().toISOString();
        for (let round = 0; round < 5; round++) {
          const hash = `hash-${round}`;
          await store.links.create(hash, {
            scope,
            provider: 'github',
            purpose: 'oauth',
            payload: null,
            expiresAt,
          });
          const taken = await Promise.all(
            Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? store : other).links.consume(hash, now)),
          );
          expect(
            taken.filter((link) => link !== undefined),
            `round ${round}`,
          ).toHaveLength(1);
        }
      } finally {
        await Promise.all([fixture.store.close(), other.close()]);
        await fixture.destroy();
      }
    });

    it('orders names byte by byte, as the SQLite store does, whatever the database collation', async () => {
      const fixture = await freshSchema();
      try {
        const { store } = fixture;
        const names = ['beta', 'acme', 'Acme', '_tools', 'a b', 'ab', 'Zulu'];
        for (const name of names) await store.keys.createClient(name);
        // JavaScript's default sort compares UTF-16 code units: byte order for these ASCII names.
        expect((await store.keys.listClients()).map((c) => c.name)).toEqual([...names].sort());
      } finally {
        await fixture.store.close();
        await fixture.destroy();
      }
    });
  });
});
