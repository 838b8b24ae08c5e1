import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../../core/store/types.js';
import { startCluster, type Cluster } from '../../helpers/cluster.js';
import { connect } from '../../helpers/clients.js';
import { petshopApi } from '../../helpers/petshop.js';
import { requirePostgres } from '../../helpers/postgres.js';
import { requireRedis } from '../../helpers/redis.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';
import { expectToolOk } from '../../helpers/results.js';

const FILE = 'test/integration/cluster/audit.test.ts';
const PET_KEY = 'ps_clusteraudit';

// Two `toolgate serve` processes on one PostgreSQL database and one Redis, behind a round-robin
// balancer: each records the calls it served in the one audit trail, and writes what it holds
// when it is stopped.
await requirePostgres(import.meta.url);
await requireRedis(FILE);

let api: Receiver;
let cluster: Cluster;

beforeAll(async () => {
  api = await startReceiver(petshopApi({ keys: [PET_KEY], body: { email: 'ann@example.com', items: [] } }));
  cluster = await startCluster(2, api.url);
}, 120_000);

afterAll(async () => {
  await cluster?.close();
  await api?.close();
});

describe('the audit trail of several gateway processes', () => {
  it('holds every call whichever process served it, once, after both stopped with SIGTERM', async () => {
    const created = await cluster.cli(['keys', 'create', '--client', 'acme', '--type', 'client']);
    const key = /^(toolgate_\w+)$/m.exec(created.stdout)![1]!;
    const from = cluster.balancer.served.length;
    const client = await connect('2026-07-28', new URL(`${cluster.balancer.url}/mcp/?user_id=ann`), {
      'x-api-key': key,
    });
    expectToolOk(
      await client.callTool('connect_provider', { provider: 'petshop', credentials: { api_key: PET_KEY } }),
    );
    const calls = 10;
    for (let i = 0; i < calls; i++) expectToolOk(await client.callTool('petshop_list_pets', {}));
    await client.close();
    expect(new Set(cluster.balancer.served.slice(from).map((s) => s.backend)).size).toBe(2);
    for (const process of cluster.processes) expect(await process.stop()).toBe(0);

    const exported = await cluster.cli(['audit', 'export', '--client', 'acme', '--event', 'tool_call']);
    expect(exported.code, exported.stderr).toBe(0);
    const records = exported.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditRecord);
    expect(records.map((r) => r.tool).sort()).toEqual(
      ['connect_provider', ...Array<string>(calls).fill('petshop_list_pets')].sort(),
    );
    expect(new Set(records.map((r) => r.id)).size).toBe(records.length);
    // Each process writes under an id prefix of its own: both wrote.
    expect(new Set(records.map((r) => r.id.slice(0, r.id.lastIndexOf('_')))).size).toBe(2);
    expect(records.every((r) => r.userId === 'ann' && r.outcome === 'ok')).toBe(true);
  }, 60_000);
});
