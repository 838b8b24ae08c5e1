import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type TestClient } from '../../helpers/clients.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startReceiver } from '../../helpers/receiver.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/catalog/valid/', import.meta.url));

describe.each([
  ['loopback', 'http://127.0.0.1:PORT'],
  ['a hostname resolving to loopback', 'http://localhost:PORT'],
  ['a private address', 'http://10.0.0.1'],
  ['the cloud metadata address', 'http://169.254.169.254'],
])('a provider base URL pointing at %s, without TOOLGATE_ALLOW_PRIVATE_NETWORK', (_label, base) => {
  let api: Awaited<ReturnType<typeof startReceiver>>;
  let tg: TestGateway;
  let client: TestClient;

  beforeAll(async () => {
    api = await startReceiver(() => ({ status: 200, body: '{"email":"x@example.com","items":[]}' }));
    tg = await startGateway(
      { TOOLGATE_PROVIDER_PETSHOP_BASE_URL: base.replace('PORT', new URL(api.url).port) },
      { manifestFiles: [`${FIXTURES}petshop.yaml`, `${FIXTURES}petshop.openapi.yaml`] },
    );
    const { key } = await tg.key('client');
    client = await connect('2026-07-28', tg.mcpUrl('?user_id=u1'), { 'X-API-Key': key });
  });
  afterAll(async () => {
    await client.close();
    await tg.close();
    await api.close();
  });

  it('refuses the credential check and the tool call, and never reaches the address', async () => {
    const connected = await client.callTool('connect_provider', {
      provider: 'petshop',
      credentials: { api_key: 'ps_abc' },
    });
    expect(connected.isError).toBe(true);
    expect(connected.content[0]!.text).toMatch(
      /Could not reach Pet Shop to check the credential.*Nothing was stored/s,
    );

    const clientId = (await tg.gateway.keys.list())[0]!.clientId;
    await tg.gateway.connections.store(
      { clientId, orgId: null, userId: 'u1' },
      'petshop',
      { credentials: { api_key: 'ps_abc' }, fields: { region: 'us' } },
      null,
    );
    const call = await client.callTool('petshop_list_pets', {});
    expect(call.isError).toBe(true);
    expect(call.content[0]!.text).toMatch(/Refused to call petshop/);
    expect(api.received).toEqual([]);
  });
});
