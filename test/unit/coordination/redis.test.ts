import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/eventually.js';
import type { BusEvent } from '../../../core/coordination/bus.js';
import type { Coordination } from '../../../core/coordination/coordination.js';
import { openCoordination } from '../../../core/coordination/index.js';
import { LockTimeoutError } from '../../../core/coordination/lock.js';
import {
  openRedisCoordination,
  RedisBus,
  RedisLock,
  RedisSessionStore,
  type RedisCoordination,
} from '../../../core/coordination/redis/index.js';
import type { SessionRecord } from '../../../core/coordination/sessions.js';
import { freePort } from '../../helpers/ports.js';
import { deleteKeys, randomPrefix, requireRedis, TEST_REDIS_URL, testRedis } from '../../helpers/redis.js';
import { tcpRelay, type Relay } from '../../helpers/relay.js';
import { describeCoordinationContract, type CoordinationFactory } from './contract.js';
import { CachedSessionStore } from '../../../core/coordination/cached-sessions.js';

const FILE = 'test/unit/coordination/redis.test.ts';
/** Every key and channel of this file starts with it; each test has its own prefix under it. */
const FILE_PREFIX = randomPrefix('coordination');

await requireRedis(FILE);

let tests = 0;
const testPrefix = (): string => `${FILE_PREFIX}${++tests}:`;

const SESSION: SessionRecord = {
  id: 's1',
  transport: 'streamable',
  clientId: 'cli_1',
  scope: { clientId: 'cli_1', orgId: null, userId: null },
  scopeKey: 'cli_1\u0000\u0000',
  protocolVersion: '2025-06-18',
  elicitUrl: false,
  lastSeenAt: 1_000,
};

const REVOKED: BusEvent = { type: 'key.revoked', keyId: 'key_1' };

/** How long `promise` takes to settle, and whether it rejected. */
async function timed(promise: Promise<unknown>): Promise<{ ms: number; error: unknown }> {
  const started = Date.now();
  let error: unknown;
  await promise.catch((e: unknown) => (error = e));
  return { ms: Date.now() - started, error };
}

afterAll(async () => {
  await deleteKeys(FILE_PREFIX);
});

/** Two processes (and more) on one Redis; `cached`: their sessions behind the read cache, as the gateway opens them. */
function redisDeployment(cached: boolean): CoordinationFactory {
  return async () => {
    const prefix = testPrefix();
    const busErrors: unknown[] = [];
    const opened: RedisCoordination[] = [];
    const open = (): Coordination & Pick<RedisCoordination, 'ready'> => {
      const redis = openRedisCoordination({
        url: TEST_REDIS_URL,
        prefix,
        onBusError: (error) => busErrors.push(error),
      });
      opened.push(redis);
      return cached ? { ...redis, sessions: new CachedSessionStore(redis.sessions, redis.bus) } : redis;
    };
    const raw = testRedis();
    const [one, two] = [open(), open()];
    // Both processes listen before the test publishes (a process misses what was sent before).
    await Promise.all([one.ready(), two.ready(), raw.connect()]);
    return {
      one,
      two,
      busErrors,
      spawn: open,
      lapse: async (name) => {
        await raw.del(`${prefix}lock:${name}`);
      },
      cleanup: async () => {
        await Promise.all(opened.map((c) => c.close()));
        raw.disconnect();
      },
    };
  };
}

describeCoordinationContract('Redis', redisDeployment(false), 'many');
describeCoordinationContract('Redis, sessions behind the read cache', redisDeployment(true), 'many');

describe('the Redis coordination (Redis only)', () => {
  const raw = testRedis();
  const open: RedisCoordination[] = [];
  const relays: Relay[] = [];
  const busErrors: { error: unknown; event: BusEvent | undefined }[] = [];
  const coordination = (url: string, prefix: string): RedisCoordination => {
    const c = openRedisCoordination({
      url,
      prefix,
      onBusError: (error, event) => busErrors.push({ error, event }),
    });
    open.push(c);
    return c;
  };

  beforeAll(async () => {
    await raw.connect();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.close()));
    await Promise.all(relays.splice(0).map((r) => r.stop()));
    busErrors.length = 0;
  });
  afterAll(() => {
    raw.disconnect();
  });

  it('is what openCoordination opens for a Redis URL, under its prefix', async () => {
    const prefix = testPrefix();
    const c = openCoordination({ redisUrl: TEST_REDIS_URL, redisPrefix: prefix, onBusError: () => {} });
    try {
      expect(c.bus).toBeInstanceOf(RedisBus);
      expect(c.lock).toBeInstanceOf(RedisLock);
      expect(c.sessions).toBeInstanceOf(RedisSessionStore);
      await c.sessions.create(SESSION);
      expect(await raw.exists(`${prefix}session:s1`)).toBe(1);
    } finally {
      await c.close();
    }
  });

  it('keeps a session as a hash plus an index entry, and deletes both', async () => {
    const prefix = testPrefix();
    const c = coordination(TEST_REDIS_URL, prefix);
    await c.sessions.create(SESSION);
    expect(await raw.hget(`${prefix}session:s1`, 'clientId')).toBe('cli_1');
    expect(await raw.zscore(`${prefix}sessions`, 's1')).toBe('1000');
    await c.sessions.update('s1', { lastSeenAt: 2_000 });
    expect(await raw.zscore(`${prefix}sessions`, 's1')).toBe('2000');
    await c.sessions.delete('s1');
    expect(await raw.exists(`${prefix}session:s1`, `${prefix}sessions`)).toBe(0);
    // An update racing the delete does not bring back a half record.
    await c.sessions.update('s1', { lastSeenAt: 3_000 });
    expect(await raw.exists(`${prefix}session:s1`, `${prefix}sessions`)).toBe(0);
  });

  it('leaves no lock key after a release, and keeps counting fences', async () => {
    const prefix = testPrefix();
    const c = coordination(TEST_REDIS_URL, prefix);
    await c.lock.tryWith('job:a', 10_000, async () => {
      expect(await raw.pttl(`${prefix}lock:job:a`)).toBeGreaterThan(0);
    });
    expect(await raw.exists(`${prefix}lock:job:a`)).toBe(0);
    expect(await raw.get(`${prefix}fence:job:a`)).toBe('1');
  });

  it('reports an unreadable bus message and goes on delivering', async () => {
    const prefix = testPrefix();
    const c = coordination(TEST_REDIS_URL, prefix);
    await c.ready();
    const delivered = new Promise<BusEvent>((resolve) => c.bus.subscribe('key.revoked', resolve));
    await raw.publish(`${prefix}bus`, 'not json');
    await raw.publish(`${prefix}bus`, '{"keyId":"no type"}');
    await c.bus.publish(REVOKED);
    expect(await delivered).toEqual(REVOKED);
    expect(busErrors.map(({ error }) => (error as Error).message)).toEqual([
      `unreadable bus message on ${prefix}bus`,
      `bus message without an event type on ${prefix}bus`,
    ]);
  });

  it('fails fast while Redis is unreachable, and publish still resolves, reporting the event', async () => {
    const port = await freePort(); // free, so nothing listens: connections are refused
    const c = coordination(`redis://127.0.0.1:${port}`, testPrefix());

    const tried = await timed(c.lock.tryWith('job:a', 10_000, () => Promise.resolve()));
    expect(tried.error).toBeInstanceOf(Error);
    expect(tried.ms).toBeLessThan(3_000);

    const waited = await timed(c.lock.with('job:a', 10_000, 30_000, () => Promise.resolve()));
    expect(waited.error).toBeInstanceOf(Error);
    expect(waited.error).not.toBeInstanceOf(LockTimeoutError);
    expect(waited.ms).toBeLessThan(3_000);

    for (const call of [c.sessions.get('s1'), c.sessions.create(SESSION), c.sessions.count()]) {
      const { ms, error } = await timed(call);
      expect(error).toBeInstanceOf(Error);
      expect(ms).toBeLessThan(3_000);
    }

    const published = await timed(c.bus.publish(REVOKED));
    expect(published.error).toBeUndefined();
    expect(published.ms).toBeLessThan(4_000);
    expect(busErrors).toContainEqual({ error: expect.any(Error) as unknown, event: REVOKED });

    const closed = await timed(c.close());
    expect(closed.ms).toBeLessThan(1_000);
  });

  it('recovers by itself when Redis comes back: commands work and the bus delivers again', async () => {
    const prefix = testPrefix();
    const relay = await tcpRelay(TEST_REDIS_URL, 6379);
    relays.push(relay);
    const c = coordination(relay.url, prefix);
    const other = coordination(TEST_REDIS_URL, prefix);
    await Promise.all([c.ready(), other.ready()]);
    await c.sessions.create(SESSION);
    const before = c.bus.continuity();
    expect(before).toEqual(expect.any(Number));

    await relay.stop();
    // While the subscriber is cut off it may miss events: what relies on hearing them must know.
    await eventually(() => Promise.resolve(c.bus.continuity() === undefined));
    const down = await timed(c.sessions.get('s1'));
    expect(down.error).toBeInstanceOf(Error);
    expect(down.ms).toBeLessThan(3_000);
    await c.bus.publish(REVOKED);
    expect(busErrors.map(({ event }) => event)).toContainEqual(REVOKED);

    await relay.start();
    await eventually(async () => (await c.sessions.get('s1').catch(() => undefined)) !== undefined, 10_000);
    // The subscriber reconnects and subscribes again on its own; until it has, events pass it by.
    let received = false;
    c.bus.subscribe('key.revoked', () => (received = true));
    await eventually(async () => {
      await other.bus.publish(REVOKED);
      return received;
    });
    // Back, but events sent meanwhile were missed: the continuity is not the one from before.
    expect(c.bus.continuity()).toEqual(expect.any(Number));
    expect(c.bus.continuity()).not.toBe(before);
    const lost = busErrors.filter(({ error }) => (error as Error).message.includes('bus connection is down'));
    expect(lost).toHaveLength(1);
  });
});
