import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/eventually.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { createDatabase, requirePostgres, type TestDatabase } from '../../helpers/postgres.js';
import { deleteKeys, randomPrefix, requireRedis, TEST_REDIS_URL } from '../../helpers/redis.js';
import { tcpRelay, type Relay } from '../../helpers/relay.js';

const FILE = 'test/integration/cluster/outage.test.ts';

// A gateway on PostgreSQL and Redis, each reached through a relay the test takes down and brings
// back, as a database or a Redis that went away for a while.
await requirePostgres(import.meta.url);
await requireRedis(FILE);

let database: TestDatabase;
let postgres: Relay;
let redis: Relay;
let tg: TestGateway;
let key: string;
const prefix = randomPrefix('outage');

beforeAll(async () => {
  database = await createDatabase();
  postgres = await tcpRelay(database.url, 5432);
  redis = await tcpRelay(TEST_REDIS_URL, 6379);
  tg = await startGateway({
    TOOLGATE_DATABASE_URL: postgres.url,
    TOOLGATE_REDIS_URL: redis.url,
    TOOLGATE_REDIS_PREFIX: prefix,
    TOOLGATE_MASTER_KEY: randomBytes(32).toString('base64'),
  });
  ({ key } = await tg.key('client'));
});

afterAll(async () => {
  await tg?.close();
  await postgres?.stop();
  await redis?.stop();
  await database?.drop();
  await deleteKeys(prefix);
});

/** A 2025-era JSON-RPC POST to /mcp/ with the key (and the session, when given). */
const post = async (body: unknown, session?: string) => {
  const response = await fetch(tg.mcpUrl('?user_id=ann'), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-api-key': key,
      ...(session ? { 'mcp-session-id': session } : {}),
    },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    headers: response.headers,
    json: (await response.json()) as { error?: { code: string } },
  };
};
const listTools = (session?: string) =>
  post({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, session);

describe('while PostgreSQL or Redis is unreachable', () => {
  it('answers 503 TG_ERR_UNAVAILABLE with a log code when PostgreSQL is away, and serves again once it is back', async () => {
    expect((await listTools()).status).toBe(200);
    await postgres.stop();
    const refused = await listTools();
    expect(refused.status).toBe(503);
    expect(refused.json.error?.code).toBe('TG_ERR_UNAVAILABLE');
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(tg.logs.some((line) => line.includes('"code":"TG_ERR_UNAVAILABLE"'))).toBe(true);
    expect(tg.logs.some((line) => line.includes('"code":"TG_ERR_INTERNAL"'))).toBe(false);
    await postgres.start();
    await eventually(async () => (await listTools()).status === 200);
  });

  it('answers a 2025 session 503 when Redis is away, and keeps the session once it is back', async () => {
    const initialized = await post({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    });
    expect(initialized.status).toBe(200);
    const session = initialized.headers.get('mcp-session-id')!;
    expect((await listTools(session)).status).toBe(200);
    await redis.stop();
    // A session read a moment ago may still be answered from memory until the process notices
    // the lost connection (its bus then stops vouching for what it holds).
    let refused = await listTools(session);
    await eventually(async () => (refused = await listTools(session)).status !== 200);
    expect(refused.status).toBe(503);
    expect(refused.json.error?.code).toBe('TG_ERR_UNAVAILABLE');
    await redis.start();
    await eventually(async () => (await listTools(session)).status === 200, 10_000);
  });
});
