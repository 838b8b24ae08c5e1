import type { Redis } from 'ioredis';
import { LeasedLock } from '../lock.js';
import { LuaScript } from './script.js';

/** Takes the lock if free and counts the acquisition: one step, so no fence is lost to a crash between. */
const ACQUIRE = new LuaScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return redis.call('INCR', KEYS[2])
end
return 0`);

/** Compare-and-extend: a holder whose lock expired and was taken over must not extend its successor's. */
const EXTEND = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`);

/** Compare-and-delete: a holder releases only its own acquisition, never its successor's. */
const RELEASE = new LuaScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`);

/**
 * Locks shared by every process on one Redis: `${prefix}lock:${name}` holds the holder's random
 * token with a PX expiry; `${prefix}fence:${name}` counts acquisitions (it never expires, so fences
 * keep increasing: one small key per lock name ever used).
 */
export class RedisLock extends LeasedLock {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    super();
  }

  protected async acquire(name: string, token: string, ttlMs: number): Promise<number | undefined> {
    const fence = Number(
      await ACQUIRE.run(this.redis, [this.key(name), this.fenceKey(name)], [token, ttlMs]),
    );
    return fence > 0 ? fence : undefined;
  }

  protected async extend(name: string, token: string, ttlMs: number): Promise<boolean> {
    return Number(await EXTEND.run(this.redis, [this.key(name)], [token, ttlMs])) === 1;
  }

  protected async release(name: string, token: string): Promise<void> {
    await RELEASE.run(this.redis, [this.key(name)], [token]);
  }

  protected async owns(name: string, token: string): Promise<boolean> {
    return (await this.redis.get(this.key(name))) === token;
  }

  private key(name: string): string {
    return `${this.prefix}lock:${name}`;
  }

  private fenceKey(name: string): string {
    return `${this.prefix}fence:${name}`;
  }
}
