import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectWithKey, type TestClient } from '../../helpers/clients.js';
import { startPetshop, type PetshopGateway } from '../../helpers/petshop.js';
import { expectToolError } from '../../helpers/results.js';

describe.each([
  ['loopback', 'http://127.0.0.1:PORT'],
  ['a hostname resolving to loopback', 'http://localhost:PORT'],
  ['a private address', 'http://10.0.0.1'],
  ['the cloud metadata address', 'http://169.254.169.254'],
])('a provider base URL pointing at %s, without TOOLGATE_ALLOW_PRIVATE_NETWORK', (_label, base) => {
  let petshop: PetshopGateway;
  let client: TestClient;

  beforeAll(async () => {
    petshop = await startPetshop(() => ({ status: 200, body: '{"email":"x@example.com","items":[]}' }), {
      allowPrivateNetwork: false,
      baseUrl: (apiUrl) => base.replace('PORT', new URL(apiUrl).port),
    });
    client = await connectWithKey(petshop.tg, '2026-07-28', '?user_id=u1');
  });
  afterAll(async () => {
    await client.close();
    await petshop.close();
  });

  it('refuses the credential check and the tool call, and never reaches the address', async () => {
    const connected = await client.callTool('connect_provider', {
      provider: 'petshop',
      credentials: { api_key: 'ps_abc' },
    });
    expectToolError(connected, /Could not reach Pet Shop to check the credential.*Nothing was stored/s);

    const { tg, api } = petshop;
    const clientId = (await tg.gateway.keys.list())[0]!.clientId;
    await tg.gateway.connections.store(
      { clientId, orgId: null, userId: 'u1' },
      'petshop',
      { credentials: { api_key: 'ps_abc' }, fields: { region: 'us' } },
      null,
    );
    const call = await client.callTool('petshop_list_pets', {});
    expectToolError(call, /Refused to call petshop/);
    expect(api.received).toEqual([]);
  });
});
