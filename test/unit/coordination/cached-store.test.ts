import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MemoryBus } from '../../../core/coordination/bus.js';
import { CachedSessionStore } from '../../../core/coordination/cached-sessions.js';
import { CachedStore } from '../../../core/coordination/cached-store.js';
import { ReadCache } from '../../../core/coordination/read-cache.js';
import { openRedisCoordination, type RedisCoordination } from '../../../core/coordination/redis/index.js';
import type { SessionRecord } from '../../../core/coordination/sessions.js';
import type { Scope } from '../../../core/domain.js';
import { PostgresStore } from '../../../core/store/postgres/index.js';
import type { NewConnection } from '../../../core/store/types.js';
import { eventually } from '../../helpers/eventually.js';
import { createDatabase, requirePostgres, type TestDatabase } from '../../helpers/postgres.js';
import { deleteKeys, randomPrefix, requireRedis, TEST_REDIS_URL, testRedis } from '../../helpers/redis.js';
import { tcpRelay, type Relay } from '../../helpers/relay.js';

const FILE = 'test/unit/coordination/cached-store.test.ts';

describe('ReadCache', () => {
  const bus = new MemoryBus();
  const tag = (): string => 'scope:a';

  it('does not keep a value whose read was overtaken by an eviction', async () => {
    const cache = new ReadCache<string>(bus, 10, 60_000);
    let finish!: (value: string) => void;
    const racing = cache.get('k', () => new Promise<string>((resolve) => (finish = resolve)), tag);
    cache.evict('scope:a');
    finish('before the write');
    expect(await racing).toBe('before the write');
    expect(await cache.get('k', () => Promise.resolve('after the write'), tag)).toBe('after the write');
  });

  it('drops the least recently used entry past its capacity', async () => {
    const cache = new ReadCache<string>(bus, 2, 60_000);
    const load = (value: string) => () => Promise.resolve(value);
    await cache.get('a', load('a1'), tag);
    await cache.get('b', load('b1'), tag);
    await cache.get('a', load('a2'), tag); // a is now the most recently used
    await cache.get('c', load('c1'), tag); // b goes
    expect(cache.size).toBe(2);
    expect(await cache.get('a', load('a3'), tag)).toBe('a1');
    expect(await cache.get('b', load('b2'), tag)).toBe('b2');
  });

  it('reads again once an entry has lived its ttl', async () => {
    const cache = new ReadCache<string>(bus, 10, 0);
    await cache.get('k', () => Promise.resolve('old'), tag);
    expect(await cache.get('k', () => Promise.resolve('new'), tag)).toBe('new');
  });
});

await requirePostgres(import.meta.url);
await requireRedis(FILE);

/**
 * Two gateway processes' stores on one PostgreSQL database and one Redis, each behind the read
 * cache, plus the test's own handle on the database for writes made outside the gateway.
 */
describe('CachedStore on PostgreSQL and Redis', () => {
  const prefix = randomPrefix('cached-store');
  let database: TestDatabase;
  const opened: { store: CachedStore; coordination: RedisCoordination }[] = [];
  const relays: Relay[] = [];
  let connections = 0;
  /** A user of a client the test creates first (scopes belong to a client). */
  let SCOPE: Scope;

  const process = async (redisUrl = TEST_REDIS_URL): Promise<CachedStore> => {
    const coordination = openRedisCoordination({ url: redisUrl, prefix, onBusError: () => {} });
    await coordination.ready();
    const store = new CachedStore(new PostgresStore(database.url), coordination.bus);
    opened.push({ store, coordination });
    return store;
  };
  const connection = (credentials: string): NewConnection => ({
    id: `con_${++connections}`,
    provider: 'github',
    state: 'connected',
    fields: {},
    account: null,
    credentials,
    oauthApp: null,
    expiresAt: null,
  });
  /** Changes the stored credentials behind every cache's back, as an operator's hand-written SQL would. */
  const writeBehind = (credentials: string) =>
    database.query('UPDATE connections SET credentials = $1', [credentials]);
  const credentialsOf = async (store: CachedStore, fresh = false) =>
    (await store.connections.get(SCOPE, 'github', { fresh }))?.credentials;

  beforeAll(async () => {
    database = await createDatabase();
    const migrating = new PostgresStore(database.url);
    await migrating.migrate();
    SCOPE = { clientId: (await migrating.keys.createClient('acme')).id, orgId: null, userId: 'ann' };
    await migrating.close();
  });
  afterEach(async () => {
    for (const { store, coordination } of opened.splice(0)) {
      await store.close();
      await coordination.close();
    }
    await Promise.all(relays.splice(0).map((r) => r.stop()));
    await database.query('DELETE FROM connections');
  });
  afterAll(async () => {
    await database?.drop();
    await deleteKeys(prefix);
  });

  it('answers a repeated read from memory, and a fresh read from the database', async () => {
    const one = await process();
    await one.connections.put(SCOPE, connection('sealed-1'));
    expect(await credentialsOf(one)).toBe('sealed-1');
    // From memory, the record itself at once: nothing for a tool call to await (core/awaitable.ts).
    const repeated = one.connections.get(SCOPE, 'github');
    expect(repeated instanceof Promise ? 'a promise' : repeated?.credentials).toBe('sealed-1');
    await writeBehind('sealed-by-hand');
    expect(await credentialsOf(one)).toBe('sealed-1');
    expect(await credentialsOf(one, true)).toBe('sealed-by-hand');
  });

  it("sees its own write at once, and another process's once the bus has carried it", async () => {
    const [one, two] = [await process(), await process()];
    await one.connections.put(SCOPE, connection('sealed-1'));
    expect(await credentialsOf(two)).toBe('sealed-1');
    expect((await two.connections.list(SCOPE)).map((c) => c.credentials)).toEqual(['sealed-1']);

    const heard = new Promise<void>((resolve) => {
      const off = opened[1]!.coordination.bus.subscribe('store.changed', () => {
        off();
        resolve();
      });
    });
    expect(
      await one.connections.swapCredentials(SCOPE, 'github', 'sealed-1', {
        credentials: 'sealed-2',
        expiresAt: null,
      }),
    ).toBe(true);
    expect(await credentialsOf(one)).toBe('sealed-2');
    await heard;
    expect(await credentialsOf(two)).toBe('sealed-2');
    expect((await two.connections.list(SCOPE)).map((c) => c.credentials)).toEqual(['sealed-2']);
  });

  it('sees a key revoked by another process on the next check', async () => {
    const [one, two] = [await process(), await process()];
    await one.keys.insertHashSecret({ version: 1, sealed: 'sealed-secret' });
    await one.keys.insert({
      id: 'key_1',
      clientId: SCOPE.clientId,
      type: 'client',
      hash: 'h1',
      hashVersion: 1,
      hint: 'ab',
    });
    expect((await two.keys.findByHash(1, 'h1'))?.revokedAt).toBeNull();
    const heard = new Promise<void>((resolve) =>
      opened[1]!.coordination.bus.subscribe('store.changed', () => resolve()),
    );
    await one.keys.revoke('key_1', new Date().toISOString());
    await heard;
    expect((await two.keys.findByHash(1, 'h1'))?.revokedAt).toEqual(expect.any(String));
  });

  it('serves nothing from memory while its bus is cut off, nor what it read before', async () => {
    const relay = await tcpRelay(TEST_REDIS_URL, 6379);
    relays.push(relay);
    const one = await process(relay.url);
    await one.connections.put(SCOPE, connection('sealed-1'));
    expect(await credentialsOf(one)).toBe('sealed-1');

    await relay.stop();
    await eventually(() => Promise.resolve(opened[0]!.coordination.bus.continuity() === undefined));
    // Another process's write would not reach this one now: every read goes to the database.
    await writeBehind('sealed-while-down');
    expect(await credentialsOf(one)).toBe('sealed-while-down');

    await relay.start();
    await eventually(() => Promise.resolve(opened[0]!.coordination.bus.continuity() !== undefined), 10_000);
    await writeBehind('sealed-after');
    expect(await credentialsOf(one)).toBe('sealed-after');
  });

  it('hands out records no reader can change under another', async () => {
    const one = await process();
    await one.connections.put(SCOPE, connection('sealed-1'));
    const record = await one.connections.get(SCOPE, 'github');
    expect(Object.isFrozen(record)).toBe(true);
    expect(Object.isFrozen(record?.fields)).toBe(true);
    expect(Object.isFrozen(await one.connections.list(SCOPE))).toBe(true);
  });
});

describe('CachedSessionStore on Redis', () => {
  const prefix = randomPrefix('cached-sessions');
  const opened: RedisCoordination[] = [];
  const raw = testRedis();

  const process = async (): Promise<{ sessions: CachedSessionStore; bus: RedisCoordination['bus'] }> => {
    const coordination = openRedisCoordination({ url: TEST_REDIS_URL, prefix, onBusError: () => {} });
    await coordination.ready();
    opened.push(coordination);
    return {
      sessions: new CachedSessionStore(coordination.sessions, coordination.bus),
      bus: coordination.bus,
    };
  };
  const heard = (bus: RedisCoordination['bus']): Promise<void> =>
    new Promise((resolve) => {
      const off = bus.subscribe('store.changed', () => {
        off();
        resolve();
      });
    });
  const session = (id: string): SessionRecord => ({
    id,
    transport: 'streamable',
    clientId: 'cli_1',
    scope: { clientId: 'cli_1', orgId: null, userId: 'ann' },
    scopeKey: 'cli_1\u0000\u0000ann',
    protocolVersion: undefined,
    elicitUrl: false,
    lastSeenAt: 1_000,
  });

  beforeAll(async () => {
    await raw.connect();
  });
  afterAll(async () => {
    for (const coordination of opened) await coordination.close();
    raw.disconnect();
    await deleteKeys(prefix);
  });

  it('answers a session read from memory, and sees another process change or end it', async () => {
    const [one, two] = [await process(), await process()];
    let told = heard(two.bus);
    await one.sessions.create(session('s1'));
    await told;
    expect((await two.sessions.get('s1'))?.protocolVersion).toBeUndefined();
    // A change behind every cache's back is not seen while the entry lives: it was read from memory.
    await raw.hset(`${prefix}session:s1`, 'elicitUrl', '1');
    expect((await two.sessions.get('s1'))?.elicitUrl).toBe(false);

    told = heard(two.bus);
    await one.sessions.update('s1', { protocolVersion: '2025-06-18' });
    await told;
    expect((await two.sessions.get('s1'))?.protocolVersion).toBe('2025-06-18');

    told = heard(two.bus);
    await one.sessions.delete('s1');
    await told;
    expect(await two.sessions.get('s1')).toBeUndefined();
  });
});
