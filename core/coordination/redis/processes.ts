import type { Redis } from 'ioredis';
import type { ProcessDirectory, ProcessRecord } from '../processes.js';
import { LuaScript } from './script.js';

/**
 * Drops the expired processes, then answers the live ones' records.
 * KEYS: the expiry index, the records. ARGV: now (ms).
 */
const LIST = new LuaScript(`
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if #expired > 0 then
  redis.call('ZREM', KEYS[1], unpack(expired))
  redis.call('HDEL', KEYS[2], unpack(expired))
end
local live = redis.call('ZRANGE', KEYS[1], 0, -1)
if #live == 0 then return {} end
return redis.call('HMGET', KEYS[2], unpack(live))`);

/**
 * The processes of a deployment on one Redis: their records as JSON in the hash
 * `${prefix}processes`, and when each expires in the sorted set `${prefix}process-expiry`; both
 * change together (MULTI or a script), and listing drops the expired ones.
 */
export class RedisProcessDirectory implements ProcessDirectory {
  private readonly records: string;
  private readonly expiry: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.records = `${prefix}processes`;
    this.expiry = `${prefix}process-expiry`;
  }

  async announce(record: ProcessRecord, ttlMs: number): Promise<void> {
    await this.redis
      .multi()
      .hset(this.records, record.id, JSON.stringify(record))
      .zadd(this.expiry, Date.now() + ttlMs, record.id)
      .exec();
  }

  async list(): Promise<ProcessRecord[]> {
    const found = (await LIST.run(this.redis, [this.expiry, this.records], [Date.now()])) as (
      string | null
    )[];
    return found
      .filter((json): json is string => json !== null)
      .map((json) => JSON.parse(json) as ProcessRecord)
      .sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async withdraw(id: string): Promise<void> {
    await this.redis.multi().hdel(this.records, id).zrem(this.expiry, id).exec();
  }
}
