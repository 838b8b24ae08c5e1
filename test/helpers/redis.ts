import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createConnection, createServer, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { it } from 'vitest';

/** The Redis the tests use: a real server (TOOLGATE_TEST_REDIS_URL), each file under its own key prefix. */
export const TEST_REDIS_URL = process.env.TOOLGATE_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/** How to start a throwaway local Redis, as the failure message tells it. */
export const START_REDIS =
  'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no';

/**
 * A client for a test's own reads and writes: it fails at once instead of queueing or reconnecting,
 * so a test never hangs on it.
 */
export function testRedis(url = TEST_REDIS_URL): Redis {
  const redis = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1_000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  // Errors reach the commands; without a listener ioredis would also print them.
  redis.on('error', () => {});
  return redis;
}

/** Whether a Redis answers PING at `url` within about a second. */
export async function redisIsUp(url = TEST_REDIS_URL): Promise<boolean> {
  const redis = testRedis(url);
  try {
    await redis.connect();
    return (await redis.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/**
 * Whether the Redis tests of this file can run. When Redis does not answer: on CI (CI=true) a
 * failing test says how to start it, since a silently skipped backend is an untested one; on a
 * developer's machine one console line says the file is skipped.
 */
export async function requireRedis(file: string, url = TEST_REDIS_URL): Promise<boolean> {
  if (await redisIsUp(url)) return true;
  const advice = `no Redis answers at ${url} (TOOLGATE_TEST_REDIS_URL). Start one with: ${START_REDIS}`;
  if (['true', '1'].includes((process.env.CI ?? '').toLowerCase())) {
    it(`needs a Redis at ${url}`, () => {
      throw new Error(`${file} needs Redis: ${advice}`);
    });
  } else {
    // A file without any test fails in vitest: the skipped one also shows in the summary.
    it.skip(`needs a Redis at ${url}`, () => {});
    console.warn(`[skipped] ${file}: ${advice}`);
  }
  return false;
}

/** A key prefix no other test file or run uses: `toolgate-test:<label>:<random>:`. */
export function randomPrefix(label: string): string {
  return `toolgate-test:${label}:${randomBytes(6).toString('hex')}:`;
}

/** Deletes every key starting with `prefix` (SCAN, then UNLINK); how many there were. */
export async function deleteKeys(prefix: string, url = TEST_REDIS_URL): Promise<number> {
  const redis = testRedis(url);
  try {
    await redis.connect();
    const pattern = `${prefix.replace(/[*?[\]\\]/g, '\\$&')}*`;
    let cursor = '0';
    let deleted = 0;
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
      if (keys.length > 0) deleted += await redis.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
    return deleted;
  } finally {
    redis.disconnect();
  }
}

/** A TCP relay in front of a Redis that a test can take down and bring back on the same port. */
export interface RedisRelay {
  /** The Redis URL through the relay (credentials and database of the target kept). */
  url: string;
  /** Refuses new connections and cuts the open ones, as a Redis that went away. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
}

/** Opens a {@link RedisRelay} to `target`; stop it when done. */
export async function redisRelay(target = TEST_REDIS_URL): Promise<RedisRelay> {
  const to = new URL(target);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection({
      host: to.hostname.replace(/^\[|\]$/g, ''),
      port: Number(to.port || 6379),
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = async (port: number): Promise<number> => {
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as { port: number }).port;
  };
  const port = await listen(0);
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    async stop() {
      if (!server.listening) return;
      const closed = once(server, 'close');
      server.close();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    async start() {
      await listen(port);
    },
  };
}
