import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectWithKey, type TestClient } from '../../helpers/clients.js';
import { startPetshop, type PetshopGateway } from '../../helpers/petshop.js';
import { jsonAnswer, type Answer, type Received } from '../../helpers/receiver.js';
import { expectToolError, expectToolOk } from '../../helpers/results.js';

const GOOD_KEY = 'ps_abc123good';

/** A loopback stand-in for the Pet Shop API: checks the bearer key, answers in its shapes. */
function petshopStandIn(req: Received): Answer {
  if (req.headers.authorization !== `Bearer ${GOOD_KEY}`)
    return jsonAnswer(401, { message: 'invalid api key' });
  if (req.method === 'GET' && req.url === '/me') return jsonAnswer(200, { email: 'owner@petshop.example' });
  if (req.method === 'GET' && req.url.startsWith('/pets?'))
    return jsonAnswer(200, { items: [{ id: 'p1', name: 'Rex' }], next: null });
  if (req.method === 'POST' && req.url === '/pets')
    return jsonAnswer(201, { id: 'p2', ...(JSON.parse(req.body) as object) });
  if (req.method === 'GET' && req.url === '/pets/missing')
    return jsonAnswer(404, { message: 'pet not found' });
  return jsonAnswer(400, { message: `unexpected ${req.method} ${req.url}` });
}

let petshop: PetshopGateway;
let client: TestClient;

beforeAll(async () => {
  petshop = await startPetshop(petshopStandIn);
  client = await connectWithKey(petshop.tg, '2025 (v1 client)', '?user_id=alice');
});
afterAll(async () => {
  await client.close();
  await petshop.close();
});

describe('an API-key provider, end to end over /mcp/', () => {
  it('refuses a wrong key after asking the provider, and stores nothing', async () => {
    const wrong = await client.callTool('connect_provider', {
      provider: 'petshop',
      credentials: { api_key: 'ps_wrong' },
    });
    expectToolError(
      wrong,
      /Pet Shop refused the credential \(HTTP 401: invalid api key\).*Nothing was stored/s,
    );
    expect(await client.listToolNames()).not.toContain('petshop_list_pets');

    const malformed = await client.callTool('connect_provider', {
      provider: 'petshop',
      credentials: { api_key: 'sk_live_nope' },
    });
    expectToolError(malformed, /credentials\.api_key does not look like a Pet Shop API key/);
  });

  it('connects with the right key, names the account, and sends exactly the request the API expects', async () => {
    const connected = await client.callTool('connect_provider', {
      provider: 'petshop',
      credentials: { api_key: GOOD_KEY },
    });
    expectToolOk(connected, 'Connected Pet Shop as owner@petshop.example');
    expect(await client.listToolNames()).toEqual(
      expect.arrayContaining(['petshop_list_pets', 'petshop_create_pet', 'petshop_get_pet']),
    );

    const { api } = petshop;
    const before = api.received.length;
    expectToolOk(await client.callTool('petshop_list_pets', { limit: 5, tag: ['dog', 'small cat'] }), 'Rex');
    const [sent] = api.received.slice(before);
    expect(sent).toMatchObject({ method: 'GET', url: '/pets?limit=5&tag=dog,small%20cat', body: '' });
    expect(sent!.headers).toMatchObject({
      authorization: `Bearer ${GOOD_KEY}`,
      'x-client': 'toolgate',
    });
    expect(sent!.headers.accept).toContain('application/json');

    expectToolOk(await client.callTool('petshop_create_pet', { name: 'Bo', tag: 'dog' }));
    const post = api.received.at(-1)!;
    expect(post).toMatchObject({ method: 'POST', url: '/pets' });
    expect(post.headers['content-type']).toBe('application/json');
    expect(JSON.parse(post.body)).toEqual({ name: 'Bo', tag: 'dog' });
  });

  it("surfaces the provider's error in its own words", async () => {
    const missing = await client.callTool('petshop_get_pet', { petId: 'missing' });
    expectToolError(missing, /HTTP 404.*pet not found/);
  });

  it('shows the state and the account in inspect_provider and list_providers, never the key', async () => {
    const inspected = (await client.callTool('inspect_provider', { provider: 'petshop' })).content[0]!.text!;
    expect(inspected).toContain('State here: connected as owner@petshop.example');
    expect(inspected).toContain('Limits: 100 requests per minute per key');
    expect(inspected).toMatch(/Pets — Find and add pets\.\n {2}- petshop_create_pet/);
    expect(inspected).not.toContain(GOOD_KEY);
    const listed = (await client.callTool('list_providers', { connected: true })).content[0]!.text!;
    expect(listed).toContain('petshop: Pet Shop [API key; connected as owner@petshop.example]');
  });

  it("keeps another user's scope apart: bob sees no connection and cannot call the tools", async () => {
    const bob = await connectWithKey(petshop.tg, '2026-07-28', '?user_id=bob', 'client', 'acme');
    expect(await bob.listToolNames()).not.toContain('petshop_list_pets');
    const call = await bob.callTool('petshop_list_pets', {});
    expectToolError(call, 'Pet Shop is not connected for this user. Call connect_provider');
    await bob.close();
  });

  it('disconnects: the credential is deleted, the tools go, and a call says how to connect', async () => {
    const result = await client.callTool('disconnect_provider', { provider: 'petshop' });
    expect(result.content[0]!.text).toContain('Disconnected Pet Shop');
    expect(await client.listToolNames()).not.toContain('petshop_list_pets');
    expectToolError(await client.callTool('petshop_list_pets', {}), 'connect_provider');
    const { tg } = petshop;
    const clientId = (await tg.gateway.keys.list())[0]!.clientId;
    expect(await tg.gateway.store.connections.list({ clientId, orgId: null, userId: 'alice' })).toEqual([]);
  });
});
