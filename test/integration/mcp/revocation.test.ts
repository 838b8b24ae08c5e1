import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToolgate } from '../../helpers/cli.js';
import { connect, GENERATIONS } from '../../helpers/clients.js';
import { startGateway, until, type TestGateway } from '../../helpers/gateway.js';

let tg: TestGateway;
beforeAll(async () => {
  tg = await startGateway();
});
afterAll(() => tg.close());

function streamsOf(keyId: string): number {
  return tg.gateway.mcp.hub.countWhere((s) => s.keyId === keyId);
}

describe('revoking a key', () => {
  it('cuts off open sessions and streams of every generation when the CLI revokes it while the server runs', async () => {
    const { key, id } = await tg.key('client');
    const clients = await Promise.all(
      GENERATIONS.map((g) => connect(g, tg.mcpUrl('?user_id=u1'), { 'X-API-Key': key })),
    );
    for (const client of clients) await client.watchToolsChanged(() => {});
    await until(tg.gateway.mcp.hub, 'change', () => streamsOf(id) === GENERATIONS.length);
    for (const client of clients) expect(await client.listToolNames()).toContain('report_problem');

    const revoke = await runToolgate(['keys', 'revoke', id], { TOOLGATE_DATA_DIR: tg.dataDir });
    expect(revoke.code).toBe(0);
    expect(revoke.stdout).toContain(`Revoked ${id}`);

    // The server notices the other process's revocation and closes every stream of the key...
    await until(tg.gateway.mcp.hub, 'change', () => streamsOf(id) === 0);
    // ...and every generation's next request is refused.
    for (const client of clients)
      await expect(client.listToolNames()).rejects.toThrow(/401|revoked|Unauthorized/i);
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
  });

  it("keeps the client's other keys working", async () => {
    const first = await tg.key('client', 'keeper');
    const second = await tg.key('client', 'keeper');
    await tg.gateway.keys.revoke(first.id);
    const client = await connect('2025 (v1 client)', tg.mcpUrl('?user_id=u1'), { 'X-API-Key': second.key });
    expect(await client.listToolNames()).toContain('list_providers');
    await client.close();
  });
});
