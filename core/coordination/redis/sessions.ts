import type { Redis } from 'ioredis';
import type { Scope } from '../../domain.js';
import type { SessionChanges, SessionRecord, SessionStore } from '../sessions.js';
import { LuaScript } from './script.js';

/**
 * Changes a session only if it still exists (a session deleted meanwhile must not come back as a
 * half record), and moves it in the idle index when it was seen.
 * KEYS: the session hash, the index. ARGV: id, lastSeenAt or '', protocol version: '' unchanged,
 * '-' removed, '=<version>' set.
 */
const UPDATE = new LuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[2] ~= '' then
  redis.call('HSET', KEYS[1], 'lastSeenAt', ARGV[2])
  redis.call('ZADD', KEYS[2], ARGV[2], ARGV[1])
end
if ARGV[3] == '-' then
  redis.call('HDEL', KEYS[1], 'protocolVersion')
elseif ARGV[3] ~= '' then
  redis.call('HSET', KEYS[1], 'protocolVersion', string.sub(ARGV[3], 2))
end
return 1`);

/**
 * Session records shared by every process on one Redis: a hash per session under
 * `${prefix}session:${id}`, and the sorted set `${prefix}sessions` of ids by lastSeenAt, which
 * answers idleSince and count without reading the records. Both change together (MULTI or a script).
 */
export class RedisSessionStore implements SessionStore {
  private readonly index: string;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {
    this.index = `${prefix}sessions`;
  }

  async create(record: SessionRecord): Promise<void> {
    const key = this.key(record.id);
    // DEL first: a replaced session keeps no field of the old one (a protocol version).
    await this.redis
      .multi()
      .del(key)
      .hset(key, encode(record))
      .zadd(this.index, record.lastSeenAt, record.id)
      .exec()
      .then(failedStep);
  }

  async get(id: string): Promise<SessionRecord | undefined> {
    const fields = await this.redis.hgetall(this.key(id));
    return Object.keys(fields).length === 0 ? undefined : decode(id, fields);
  }

  async update(id: string, changes: SessionChanges): Promise<void> {
    const seen = changes.lastSeenAt === undefined ? '' : String(changes.lastSeenAt);
    const version = !('protocolVersion' in changes)
      ? ''
      : changes.protocolVersion === undefined
        ? '-'
        : `=${changes.protocolVersion}`;
    if (seen === '' && version === '') return;
    await UPDATE.run(this.redis, [this.key(id), this.index], [id, seen, version]);
  }

  async delete(id: string): Promise<void> {
    await this.redis.multi().del(this.key(id)).zrem(this.index, id).exec().then(failedStep);
  }

  async idleSince(before: number): Promise<string[]> {
    // '(' makes the bound exclusive: idle since strictly before `before`, as the memory store.
    return this.redis.zrangebyscore(this.index, '-inf', `(${before}`);
  }

  count(): Promise<number> {
    return this.redis.zcard(this.index);
  }

  private key(id: string): string {
    return `${this.prefix}session:${id}`;
  }
}

/** Throws the first error of a MULTI's replies (ioredis resolves exec() with per-command errors). */
function failedStep(replies: [Error | null, unknown][] | null): void {
  if (replies === null) throw new Error('Redis transaction aborted');
  for (const [error] of replies) if (error) throw error;
}

function encode(record: SessionRecord): Record<string, string> {
  const fields: Record<string, string> = {
    transport: record.transport,
    clientId: record.clientId,
    scope: JSON.stringify(record.scope),
    scopeKey: record.scopeKey,
    elicitUrl: record.elicitUrl ? '1' : '0',
    lastSeenAt: String(record.lastSeenAt),
  };
  // Absent, not an empty string: '' is not "not initialized yet".
  if (record.protocolVersion !== undefined) fields.protocolVersion = record.protocolVersion;
  if (record.surface !== undefined) fields.surface = record.surface;
  return fields;
}

function decode(id: string, fields: Record<string, string>): SessionRecord {
  const { transport, clientId, scope, scopeKey, elicitUrl, lastSeenAt, protocolVersion, surface } = fields;
  if (
    (transport !== 'streamable' && transport !== 'sse') ||
    clientId === undefined ||
    scope === undefined ||
    scopeKey === undefined ||
    lastSeenAt === undefined
  ) {
    throw new Error(`session ${id} is stored incompletely in Redis`);
  }
  return {
    id,
    transport,
    clientId,
    scope: JSON.parse(scope) as Scope,
    scopeKey,
    protocolVersion,
    elicitUrl: elicitUrl === '1',
    ...(surface === 'compact' || surface === 'full' ? { surface } : {}),
    lastSeenAt: Number(lastSeenAt),
  };
}
