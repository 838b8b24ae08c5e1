import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openStore } from '../../../core/store/index.js';
import { MIGRATIONS } from '../../../core/store/migrations.js';
import { CONNECTION_SELECT, KEY_SELECT } from '../../../core/store/rows.js';
import { HOT_SOURCES, SqliteDb, type HotTable } from '../../../core/store/sqlite/db.js';
import { Checkpointer } from '../../../core/store/sqlite/checkpointer.js';
import { SqliteStore } from '../../../core/store/sqlite/index.js';
import type { AuditEntry } from '../../../core/store/types.js';
import { AUDIT_BEFORE_10, describeStoreContract, expectAuditBefore10Kept, seedKey } from './contract.js';

function auditEntry(id: string): AuditEntry {
  return {
    id,
    at: new Date().toISOString(),
    event: 'tool_call',
    clientId: null,
    keyId: null,
    orgId: null,
    userId: null,
    provider: 'github',
    tool: 'github_get_repo',
    outcome: 'ok',
    latencyUs: 1_000,
    upstreamStatus: 200,
    message: null,
  };
}

// The contract's other process is seen at once: SQLite's per-call reads check other connections'
// commits on every read here (by default once a millisecond: the SQLite-only tests below).
const EVERY_READ = { peerCommitsMs: 0 };

describeStoreContract('SqliteStore', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-store-'));
  const file = join(dir, 'toolgate.db');
  const destroy = () => {
    rmSync(dir, { recursive: true, force: true });
    return Promise.resolve();
  };
  const store = new SqliteStore(file, EVERY_READ);
  try {
    await store.migrate();
  } catch (error) {
    await store.close();
    await destroy();
    throw error;
  }
  return { store, open: () => Promise.resolve(new SqliteStore(file, EVERY_READ)), destroy };
});

describe('SqliteStore (SQLite only)', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'toolgate-store-'));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies every migration, in order, to a new file, and none the second time', async () => {
    const store = new SqliteStore(join(dir, 'nested', 'toolgate.db'));
    try {
      expect(await store.migrate()).toEqual(MIGRATIONS.map((m) => m.version));
      expect(await store.migrate()).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('keeps the audit entries of a database at version 9 through migrations 10 and 11', async () => {
    const file = join(dir, 'v9.db');
    const old = new SqliteDb(file);
    old.exec(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    for (const migration of MIGRATIONS.filter((m) => m.version <= 9)) {
      old.exec(migration.sql);
      old.run('INSERT INTO schema_migrations VALUES (?, ?, ?)', migration.version, migration.name, 'then');
    }
    old.exec(AUDIT_BEFORE_10.sql);
    await old.close();
    const store = new SqliteStore(file);
    try {
      await expectAuditBefore10Kept(store);
    } finally {
      await store.close();
    }
  });

  it('is what openStore opens for a sqlite: URL', async () => {
    const store = openStore(`sqlite:${join(dir, 'toolgate.db')}`);
    try {
      expect(store).toBeInstanceOf(SqliteStore);
      await store.migrate();
      expect(await store.ping()).toBe(true);
    } finally {
      await store.close();
    }
  });

  it('drops the per-call rows on writes of every table their reads join', () => {
    const tables = (sql: string) => [...sql.matchAll(/\b(?:FROM|JOIN)\s+(\w+)/gi)].map((m) => m[1]);
    for (const [hot, select] of [
      ['keys', KEY_SELECT],
      ['connections', CONNECTION_SELECT],
    ] as const) {
      expect(tables(select).length).toBeGreaterThan(0);
      expect(HOT_SOURCES[hot]).toEqual(expect.arrayContaining(tables(select)));
    }
  });

  it('keeps a busy row of the per-call path cached among 10,000 others, and drops those a write may change', async () => {
    const db = new SqliteDb(join(dir, 'hot.db'));
    const other = new SqliteDb(join(dir, 'hot.db'));
    try {
      db.exec(`
        CREATE TABLE t (v INTEGER);
        CREATE TABLE api_keys (id TEXT, v INTEGER);
        CREATE TABLE scopes (id INTEGER PRIMARY KEY);
        CREATE TABLE owners (id INTEGER PRIMARY KEY);
        CREATE TABLE tool_policies (owner INTEGER REFERENCES owners(id) ON DELETE CASCADE);
        CREATE TABLE logged (v INTEGER);
        CREATE TRIGGER logged_keys AFTER INSERT ON logged BEGIN INSERT INTO api_keys (v) VALUES (NEW.v); END;
        INSERT INTO owners (id) VALUES (1);`);
      const reads = new Map<string, number>();
      const read = (key: string, table: HotTable = 'connections') =>
        db.hotRead(table, key, () => {
          reads.set(`${table} ${key}`, (reads.get(`${table} ${key}`) ?? 0) + 1);
          return { key };
        });
      /** Reads `key`; how often it has been read from the database so far. */
      const readCount = (key: string, table: HotTable = 'connections') => {
        read(key, table);
        return reads.get(`${table} ${key}`);
      };
      /** How often each hot table's row `busy` has been read after reading it once more. */
      const busy = () => ({
        keys: readCount('busy', 'keys'),
        connections: readCount('busy'),
        policies: readCount('busy', 'policies'),
      });
      for (let i = 0; i < 30_000; i++) {
        read('busy');
        read(`scope-${i}`);
      }
      // Least recently used eviction: the row read between every other one stayed in memory.
      expect(reads.get('connections busy')).toBe(1);
      // Each table has rows of its own, under the same key too.
      expect(readCount('busy', 'keys')).toBe(1);
      expect(readCount('busy', 'keys')).toBe(1);
      expect(readCount('scope-29999')).toBe(1);
      expect(readCount('scope-0')).toBe(2);
      expect(busy()).toEqual({ keys: 1, connections: 1, policies: 1 });

      // A write of a table no hot row is read from (the audit trail's, a link's) leaves them all.
      db.run('INSERT INTO t (v) VALUES (1)');
      expect(busy()).toEqual({ keys: 1, connections: 1, policies: 1 });
      // One of a table a hot table reads drops that table's rows, at once.
      db.run('INSERT INTO api_keys (v) VALUES (1)');
      expect(busy()).toEqual({ keys: 2, connections: 1, policies: 1 });
      // So does a write that returns rows (read through `one`).
      db.one('INSERT INTO scopes (id) VALUES (1) RETURNING id');
      expect(busy()).toEqual({ keys: 2, connections: 2, policies: 1 });
      // A foreign key's action reaches further: deleting an owner deletes its policies.
      db.run('DELETE FROM owners WHERE id = 1');
      expect(busy()).toEqual({ keys: 2, connections: 2, policies: 2 });
      // A trigger may write anything: every hot row goes. So does a migration (`exec`).
      db.run('INSERT INTO logged (v) VALUES (1)');
      expect(busy()).toEqual({ keys: 3, connections: 3, policies: 3 });
      db.exec('CREATE TABLE u (v INTEGER)');
      expect(busy()).toEqual({ keys: 4, connections: 4, policies: 4 });
      // A read leaves the rows in place.
      db.all('SELECT v FROM t');
      expect(busy()).toEqual({ keys: 4, connections: 4, policies: 4 });
      // A write its caller tells the one hot row of drops that row alone.
      expect(readCount('other', 'keys')).toBe(1);
      db.runOnRow('keys', 'busy', "UPDATE api_keys SET v = 2 WHERE id = 'k1'");
      expect(busy()).toEqual({ keys: 5, connections: 4, policies: 4 });
      expect(readCount('other', 'keys')).toBe(1);
    } finally {
      await other.close();
      await db.close();
    }
  });

  it("keeps every other scope's connection in memory while one scope's changes", async () => {
    const store = new SqliteStore(join(dir, 'scopes-hot.db'));
    try {
      await store.migrate();
      const { clientId } = await seedKey(store, 'acme');
      const scope = (userId: string) => ({ clientId, orgId: null, userId });
      const stored = (userId: string) => ({
        id: `con_${userId}`,
        provider: 'github',
        state: 'connected' as const,
        fields: {},
        account: null,
        credentials: `sealed-${userId}`,
        oauthApp: null,
        expiresAt: null,
      });
      for (const user of ['u1', 'u2', 'u3']) await store.connections.put(scope(user), stored(user));
      const read = (user: string) => store.connections.get(scope(user), 'github');
      const [u1, u2] = [await read('u1'), await read('u2')];
      // A token refresh of u1, a disconnection of u3 and a new user's first connection: each drops
      // its own row, and u2's row is the one already in memory (the same frozen object).
      expect(
        await store.connections.swapCredentials(scope('u1'), 'github', 'sealed-u1', {
          credentials: 'sealed-u1-refreshed',
          expiresAt: null,
        }),
      ).toBe(true);
      expect(await store.connections.delete(scope('u3'), 'github')).toBe(true);
      await store.connections.put(scope('u4'), stored('u4'));
      // Answered at once, with no promise for a tool call to await (core/awaitable.ts).
      expect(read('u2')).toBe(u2);
      expect((await read('u1'))?.credentials).toBe('sealed-u1-refreshed');
      expect(await read('u1')).not.toBe(u1);
      expect(await read('u3')).toBeUndefined();
      expect(await store.connections.setState(scope('u2'), 'github', 'reapproval_needed')).toBe(true);
      expect((await read('u2'))?.state).toBe('reapproval_needed');
      expect((await read('u4'))?.credentials).toBe('sealed-u4');
    } finally {
      await store.close();
    }
  });

  it("sees another connection's commit a millisecond later, and keeps a key's row across audit trail writes and other keys' use", async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const store = new SqliteStore(join(dir, 'audit-hot.db'));
    const other = new SqliteDb(join(dir, 'audit-hot.db'));
    try {
      await store.migrate();
      await seedKey(store, 'acme');
      const found = () => store.keys.findByHash(1, 'h1');
      const before = await found();
      expect(before?.revokedAt).toBeNull();
      // Audit entries are appended on this connection: the key row stays in memory (a read after
      // them returns the same frozen object), where any other write of this connection drops it.
      await store.audit.append([auditEntry('aud_1'), auditEntry('aud_2')]);
      expect(await found()).toBe(before);
      // Marking another key used leaves this key's row too; marking this one is seen at once.
      await store.keys.insert({
        id: 'key_2',
        clientId: before!.clientId,
        type: 'solo',
        hash: 'h2',
        hashVersion: 1,
        hint: 'y',
      });
      const kept = await found();
      const second = await store.keys.findByHash(1, 'h2');
      await store.keys.touch('key_2', new Date().toISOString());
      expect(await found()).toBe(kept);
      expect(await store.keys.findByHash(1, 'h2')).not.toBe(second);
      await store.keys.touch('key_1', '2026-11-29T09:00:00.000Z');
      expect((await found())?.lastUsedAt).toBe('2026-11-29T09:00:00.000Z');

      other.run('UPDATE api_keys SET revoked_at = ? WHERE id = ?', new Date().toISOString(), 'key_1');
      vi.advanceTimersByTime(1);
      expect((await found())?.revokedAt).not.toBeNull();
    } finally {
      vi.useRealTimers();
      await other.close();
      await store.close();
    }
  });

  describe("a server's WAL checkpoints", () => {
    /** Over SQLite's 1,000-page checkpoint: about 5 MB of WAL. */
    const ENTRIES = 20_000;
    const entries = () => Array.from({ length: ENTRIES }, (_, i) => auditEntry(`aud_${i}`));
    const size = (file: string) => statSync(file).size;

    it("are not made inside the server connection's commits", async () => {
      const file = join(dir, 'server.db');
      // A worker that would not checkpoint for an hour: only a commit could copy pages meanwhile.
      const store = new SqliteStore(file, { backgroundCheckpoints: { everyMs: 3_600_000 } });
      try {
        await store.migrate();
        const migrated = size(file);
        await store.audit.append(entries());
        expect(size(`${file}-wal`)).toBeGreaterThan(1_000 * 4_096);
        expect(size(file)).toBe(migrated);
      } finally {
        await store.close();
      }
      // Closing checkpoints the rest and removes the WAL; nothing written is lost.
      expect(existsSync(`${file}-wal`)).toBe(false);
      const reopened = new SqliteStore(file);
      try {
        expect(await reopened.audit.list({ limit: ENTRIES + 1 })).toHaveLength(ENTRIES);
      } finally {
        await reopened.close();
      }
    });

    it('are made by a worker while the server connection stays open', async () => {
      const file = join(dir, 'server.db');
      let copied = 0;
      let reported: () => void = () => {};
      const store = new SqliteStore(file, {
        backgroundCheckpoints: {
          everyMs: 20,
          onCheckpoint: (pages) => {
            copied += pages;
            reported();
          },
        },
      });
      try {
        await store.migrate();
        const migrated = size(file);
        await store.audit.append(entries());
        // Only a checkpoint grows the file, and the connection makes none: each of the worker's
        // that copied pages is reported once they are in the file.
        const report = () => new Promise<void>((resolve) => (reported = resolve));
        while (size(file) <= migrated) await report();
        while (copied === 0) await report();
        expect(await store.audit.list({ limit: ENTRIES + 1 })).toHaveLength(ENTRIES);
      } finally {
        await store.close();
      }
    });

    it('fall back to the connection when the worker cannot run', async () => {
      // A worker that cannot open its database ends at once: the owner is told, to checkpoint again.
      let told: (error: Error | undefined) => void = () => {};
      const telling = new Promise<Error | undefined>((resolve) => (told = resolve));
      const checkpointer = new Checkpointer(join(dir, 'missing.db'), { onFailure: (error) => told(error) });
      expect((await telling)?.message).toMatch(/unable to open database file/);
      // Closing it afterwards returns at once.
      await checkpointer.close();
    });
  });
});
