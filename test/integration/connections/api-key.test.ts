import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type TestClient } from '../../helpers/clients.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startReceiver, type Received } from '../../helpers/receiver.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/catalog/valid/', import.meta.url));
const GOOD_KEY = 'ps_abc123good';

/** A loopback stand-in for the Pet Shop API: checks the bearer key, answers in its shapes. */
function petshop(req: Received): { status: number; body?: string; headers?: Record<string, string> } {
  const json = (status: number, value: unknown) => ({
    status,
    body: JSON.stringify(value),
    headers: { 'content-type': 'application/json' },
  });
  if (req.headers.authorization !== `Bearer ${GOOD_KEY}`) return json(401, { message: 'invalid api key' });
  if (req.method === 'GET' && req.url === '/me') return json(200, { email: 'owner@petshop.example' });
  if (req.method === 'GET' && req.url.startsWith('/pets?'))
    return json(200, { items: [{ id: 'p1', name: 'Rex' }], next: null });
  if (req.method === 'POST' && req.url === '/pets')
    return json(201, { id: 'p2', ...(JSON.parse(req.body) as object) });
  if (req.method === 'GET' && req.url === '/pets/missing') return json(404, { message: 'pet not found' });
  return json(400, { message: `unexpected ${req.method} ${req.url}` });
}

let api: Awaited<ReturnType<typeof startReceiver>>;
let tg: TestGateway;
let client: TestClient;

beforeAll(async () => {
  api = await startReceiver(petshop);
  tg = await startGateway(
    { TOOLGATE_ALLOW_PRIVATE_NETWORK: '1', TOOLGATE_PROVIDER_PETSHOP_BASE_URL: api.url },
    { manifestFiles: [`${FIXTURES}petshop.yaml`, `${FIXTURES}petshop.openapi.yaml`] },
  );
  const { key } = await tg.key('client');
  client = await connect('2025 (v1 client)', tg.mcpUrl('?user_id=alice'), { 'X-API-Key': key });
});
afterAll(async () => {
  await client.close();
  await tg.close();
  await api.close();
});

describe('an API-key provider, end to end over /mcp/', () => {
  it('refuses a wrong key after asking the provider, and stores nothing', async () => {
    const wrong = await client.callTool('connect_provider', {
      provider: 'petshop',
      credentials: { api_key: 'ps_wrong' },
    });
    expect(wrong.isError).toBe(true);
    expect(wrong.content[0]!.text).toMatch(
      /Pet Shop refused the credential \(HTTP 401: invalid api key\).*Nothing was stored/s,
    );
    expect(await client.listToolNames()).not.toContain('petshop_list_pets');

    const malformed = await client.callTool('connect_provider', {
      provider: 'petshop',
      credentials: { api_key: 'sk_live_nope' },
    });
    expect(malformed.isError).toBe(true);
    expect(malformed.content[0]!.text).toMatch(/credentials\.api_key does not look like a Pet Shop API key/);
  });

  it('connects with the right key, names the account, and sends exactly the request the API expects', async () => {
    const connected = await client.callTool('connect_provider', {
      provider: 'petshop',
      credentials: { api_key: GOOD_KEY },
    });
    expect(connected.isError).toBeFalsy();
    expect(connected.content[0]!.text).toContain('Connected Pet Shop as owner@petshop.example');
    expect(await client.listToolNames()).toEqual(
      expect.arrayContaining(['petshop_list_pets', 'petshop_create_pet', 'petshop_get_pet']),
    );

    const before = api.received.length;
    const listed = await client.callTool('petshop_list_pets', { limit: 5, tag: ['dog', 'small cat'] });
    expect(listed.isError).toBeFalsy();
    expect(listed.content[0]!.text).toContain('Rex');
    const [sent] = api.received.slice(before);
    expect(sent).toMatchObject({ method: 'GET', url: '/pets?limit=5&tag=dog,small%20cat', body: '' });
    expect(sent!.headers).toMatchObject({
      authorization: `Bearer ${GOOD_KEY}`,
      'x-client': 'toolgate',
    });
    expect(sent!.headers.accept).toContain('application/json');

    const created = await client.callTool('petshop_create_pet', { name: 'Bo', tag: 'dog' });
    expect(created.isError).toBeFalsy();
    const post = api.received.at(-1)!;
    expect(post).toMatchObject({ method: 'POST', url: '/pets' });
    expect(post.headers['content-type']).toBe('application/json');
    expect(JSON.parse(post.body)).toEqual({ name: 'Bo', tag: 'dog' });
  });

  it("surfaces the provider's error in its own words", async () => {
    const missing = await client.callTool('petshop_get_pet', { petId: 'missing' });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toMatch(/HTTP 404.*pet not found/);
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
    const { key } = await tg.key('client', 'acme');
    const bob = await connect('2026-07-28', tg.mcpUrl('?user_id=bob'), { 'X-API-Key': key });
    expect(await bob.listToolNames()).not.toContain('petshop_list_pets');
    const call = await bob.callTool('petshop_list_pets', {});
    expect(call.isError).toBe(true);
    expect(call.content[0]!.text).toContain('Pet Shop is not connected for this user. Call connect_provider');
    await bob.close();
  });

  it('disconnects: the credential is deleted, the tools go, and a call says how to connect', async () => {
    const result = await client.callTool('disconnect_provider', { provider: 'petshop' });
    expect(result.content[0]!.text).toContain('Disconnected Pet Shop');
    expect(await client.listToolNames()).not.toContain('petshop_list_pets');
    const call = await client.callTool('petshop_list_pets', {});
    expect(call.isError).toBe(true);
    expect(call.content[0]!.text).toContain('connect_provider');
    const clientId = (await tg.gateway.keys.list())[0]!.clientId;
    expect(await tg.gateway.store.connections.list({ clientId, orgId: null, userId: 'alice' })).toEqual([]);
  });
});
