import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToolgate } from '../../helpers/cli.js';
import { connect } from '../../helpers/clients.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startReceiver } from '../../helpers/receiver.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/catalog/valid/', import.meta.url));
const PROVIDER_KEY = 'ps_rotation7';

let api: Awaited<ReturnType<typeof startReceiver>>;
let tg: TestGateway;

beforeAll(async () => {
  api = await startReceiver((req) =>
    req.headers.authorization === `Bearer ${PROVIDER_KEY}`
      ? {
          status: 200,
          body: '{"items":[],"email":"r@petshop.example"}',
          headers: { 'content-type': 'application/json' },
        }
      : {
          status: 401,
          body: '{"message":"invalid api key"}',
          headers: { 'content-type': 'application/json' },
        },
  );
  tg = await startGateway(
    { TOOLGATE_ALLOW_PRIVATE_NETWORK: '1', TOOLGATE_PROVIDER_PETSHOP_BASE_URL: api.url },
    { manifestFiles: [`${FIXTURES}petshop.yaml`, `${FIXTURES}petshop.openapi.yaml`] },
  );
});
afterAll(async () => {
  await tg.close();
  await api.close();
});

describe('toolgate master-key rotate', () => {
  it('re-encrypts stored credentials under a new key while the server runs; API keys and connections keep working', async () => {
    const { key } = await tg.key('client');
    const client = await connect('2026-07-28', tg.mcpUrl('?user_id=u1'), { 'X-API-Key': key });
    const connected = await client.callTool('connect_provider', {
      provider: 'petshop',
      credentials: { api_key: PROVIDER_KEY },
    });
    expect(connected.isError).toBeFalsy();
    const before = readFileSync(join(tg.dataDir, 'master.key'), 'utf8');
    const sealedBefore = (
      await tg.gateway.connections.list({
        clientId: (await tg.gateway.keys.list())[0]!.clientId,
        orgId: null,
        userId: 'u1',
      })
    )[0]!.credentials;

    const rotated = await runToolgate(['master-key', 'rotate'], { TOOLGATE_DATA_DIR: tg.dataDir });
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toMatch(/Re-encrypted 2 stored secret\(s\)/);
    const after = readFileSync(join(tg.dataDir, 'master.key'), 'utf8');
    expect(after).not.toBe(before);
    const sealedAfter = (
      await tg.gateway.connections.list({
        clientId: (await tg.gateway.keys.list())[0]!.clientId,
        orgId: null,
        userId: 'u1',
      })
    )[0]!.credentials;
    expect(sealedAfter).not.toBe(sealedBefore);
    expect(sealedAfter).not.toContain(PROVIDER_KEY);

    // The running server, still holding the old key, reads the new envelope; the API key still verifies.
    const call = await client.callTool('petshop_list_pets', {});
    expect(call.isError).toBeFalsy();
    await client.close();
    const fresh = await connect('2025 (v1 client)', tg.mcpUrl('?user_id=u1'), { 'X-API-Key': key });
    expect(await fresh.listToolNames()).toContain('petshop_list_pets');
    await fresh.close();
  });
});
