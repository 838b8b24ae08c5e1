import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, type Cluster } from '../../helpers/cluster.js';
import { connect, type TestClient } from '../../helpers/clients.js';
import { until } from '../../helpers/gateway.js';
import { petshopApi } from '../../helpers/petshop.js';
import { requirePostgres } from '../../helpers/postgres.js';
import { requireRedis } from '../../helpers/redis.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';
import { expectToolOk } from '../../helpers/results.js';

const FILE = 'test/integration/cluster/processes.test.ts';
const PET_KEY = 'ps_cluster1';

// Three `toolgate serve` processes on one PostgreSQL database and one Redis, behind a plain
// round-robin balancer that sends consecutive requests of one client to different processes.
await requirePostgres(import.meta.url);
await requireRedis(FILE);

let api: Receiver;
let cluster: Cluster;
let key: string;
let keyId: string;
const clients: TestClient[] = [];

beforeAll(async () => {
  api = await startReceiver(
    petshopApi({ keys: [PET_KEY], body: { email: 'ann@example.com', items: [{ id: 'p1', name: 'Rex' }] } }),
  );
  cluster = await startCluster(3, api.url);
  const created = await cluster.cli(['keys', 'create', '--client', 'acme', '--type', 'client']);
  expect(created.code, created.stderr).toBe(0);
  key = /^(toolgate_\w+)$/m.exec(created.stdout)![1]!;
  keyId = /^Created (key_\w+)/m.exec(created.stdout)![1]!;
}, 120_000);

afterAll(async () => {
  for (const client of clients) await client.close().catch(() => {});
  await cluster?.close();
  await api?.close();
});

const open = async (generation: Parameters<typeof connect>[0], userId: string): Promise<TestClient> => {
  const client = await connect(generation, new URL(`${cluster.balancer.url}/mcp/?user_id=${userId}`), {
    'x-api-key': key,
  });
  clients.push(client);
  return client;
};

/** The processes that answered the requests made since `from` (an index into `served`). */
const backendsSince = (from: number): Set<string> =>
  new Set(cluster.balancer.served.slice(from).map((s) => s.backend));

describe('several gateway processes behind a round-robin balancer', () => {
  it('serve a 2026-07-28 client across processes: a connection made on one is used by the others', async () => {
    const from = cluster.balancer.served.length;
    const client = await open('2026-07-28', 'ann');
    expect(await client.listToolNames()).toContain('connect_provider');
    expectToolOk(
      await client.callTool('connect_provider', { provider: 'petshop', credentials: { api_key: PET_KEY } }),
      'ann@example.com',
    );
    for (let i = 0; i < 6; i++) expectToolOk(await client.callTool('petshop_list_pets', { limit: 1 }), 'Rex');
    expect(backendsSince(from).size).toBe(3);
  });

  it('keep a 2025 session on every process, and its stream hears a connection made through another', async () => {
    const from = cluster.balancer.served.length;
    const session = await open('2025 (v2 client)', 'bob');
    const changed = new Promise<void>((resolve) => void session.watchToolsChanged(resolve));
    // The client opens its session's event stream itself: wait until a process answers it.
    await until(cluster.balancer.events, 'served', () =>
      cluster.balancer.served.slice(from).some((s) => s.method === 'GET' && s.status === 200),
    );
    const other = await open('2026-07-28', 'bob');
    expectToolOk(
      await other.callTool('connect_provider', { provider: 'petshop', credentials: { api_key: PET_KEY } }),
    );
    await changed;
    expect(await session.listToolNames()).toContain('petshop_list_pets');
    for (let i = 0; i < 4; i++)
      expectToolOk(await session.callTool('petshop_list_pets', { limit: 1 }), 'Rex');
    expect(backendsSince(from).size).toBe(3);
  });

  it.each(['2025 (v1 client)', '2024-11-05 SSE'] as const)(
    'serve a %s client whose messages land on other processes than its stream',
    async (generation) => {
      const user = generation === '2024-11-05 SSE' ? 'carol' : 'dave';
      const setup = await open('2026-07-28', user);
      expectToolOk(
        await setup.callTool('connect_provider', {
          provider: 'petshop',
          credentials: { api_key: PET_KEY },
        }),
      );
      const from = cluster.balancer.served.length;
      const client = await open(generation, user);
      expect(await client.listToolNames()).toContain('petshop_list_pets');
      for (let i = 0; i < 4; i++)
        expectToolOk(await client.callTool('petshop_list_pets', { limit: 1 }), 'Rex');
      expect(backendsSince(from).size).toBe(3);
    },
  );

  it('refuse a key revoked through the CLI on every process', async () => {
    const revoked = await cluster.cli(['keys', 'revoke', keyId]);
    expect(revoked.code, revoked.stderr).toBe(0);
    for (const process of cluster.processes) {
      const response = await fetch(`${process.url}/mcp/?user_id=ann`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', 'x-api-key': key },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('TG_ERR_KEY_REVOKED');
    }
  });
});
