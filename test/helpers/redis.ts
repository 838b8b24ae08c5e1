import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

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
 * Fails the test file at once, saying how to start Redis, when Redis does not answer: a backend a
 * run cannot reach is never skipped silently.
 */
export async function requireRedis(file: string, url = TEST_REDIS_URL): Promise<void> {
  if (await redisIsUp(url)) return;
  throw new Error(
    `${file}: no Redis answers at ${url} (TOOLGATE_TEST_REDIS_URL). Start one with: ${START_REDIS}`,
  );
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
