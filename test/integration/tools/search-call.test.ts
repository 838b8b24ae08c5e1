import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type TestClient } from '../../helpers/clients.js';
import { expectToolError, expectToolOk, type ToolCallResult } from '../../helpers/results.js';
import { connectPetshop, rpc, startCompactGateway, type CompactGateway } from './compact-gateway.js';

let gw: CompactGateway;
let key: string;
let client: TestClient;

/** What search_tools answers with, as its outputSchema declares it. */
interface Found {
  name: string;
  description: string;
  provider: string;
  category: string;
  state: string;
  inputSchema: { type: string; properties?: Record<string, unknown> };
  connect?: { tool: string; arguments: Record<string, unknown> };
}

// The v2 client checks structuredContent against the outputSchema of the listed search_tools.
beforeAll(async () => {
  gw = await startCompactGateway();
  key = (await gw.tg.key('client')).key;
  client = await connect('2026-07-28', gw.tg.mcpUrl('?user_id=searcher&tools=compact'), { 'X-API-Key': key });
  await client.listToolNames();
  await connectPetshop(client);
});
afterAll(async () => {
  await client.close();
  await gw.close();
});

async function search(args: Record<string, unknown>): Promise<{ text: string; tools: Found[] }> {
  const result = (await client.callTool('search_tools', args)) as ToolCallResult & {
    structuredContent?: { tools: Found[] };
  };
  const text = expectToolOk(result);
  return { text, tools: result.structuredContent?.tools ?? [] };
}

describe('search_tools', () => {
  it("finds a connected provider's tool, ready to call", async () => {
    const { text, tools } = await search({ query: 'show me the pets in the shop' });
    const hit = tools.find((t) => t.name === 'petshop_list_pets');
    expect(hit).toMatchObject({
      provider: 'petshop',
      category: 'pets',
      state: 'connected',
      description: 'Returns pets, newest first.',
      inputSchema: { type: 'object', properties: { limit: { type: 'integer' } } },
    });
    expect(hit?.connect).toBeUndefined();
    expect(text).toContain('petshop_list_pets (petshop, connected)');
    expect(text).toContain('inputSchema: {"type":"object"');
  });

  it('finds a tool of a provider not connected yet, with how to connect it', async () => {
    const { text, tools } = await search({ query: 'send an email', limit: 3 });
    expect(tools.length).toBeLessThanOrEqual(3);
    expect(tools[0]).toMatchObject({
      name: 'sendgrid_send_email',
      provider: 'sendgrid',
      state: 'no connection',
      connect: { tool: 'connect_provider', arguments: { provider: 'sendgrid' } },
    });
    expect(text).toContain('connect it first: connect_provider {"provider": "sendgrid"}');
  });

  it('finds tools by the synonyms their manifest declares', async () => {
    const { tools } = await search({ query: 'add a new critter' });
    expect(tools[0]?.name).toBe('petshop_create_pet');
  });

  it('narrows to a provider and a category, by id or title', async () => {
    const byProvider = await search({ query: 'list', provider: 'sendgrid' });
    expect(byProvider.tools.length).toBeGreaterThan(0);
    expect(byProvider.tools.every((t) => t.provider === 'sendgrid')).toBe(true);
    const byTitle = await search({ query: 'which account is this', category: 'Account' });
    expect(byTitle.tools.map((t) => t.name)).toEqual(['petshop_whoami']);
  });

  it('refuses an unknown provider or category, naming the valid ones', async () => {
    expectToolError(
      await client.callTool('search_tools', { query: 'pets', provider: 'petstore' }),
      'No provider "petstore" in this gateway. Valid providers: petshop, sendgrid.',
    );
    expectToolError(
      await client.callTool('search_tools', { query: 'pets', provider: 'petshop', category: 'toys' }),
      'No category "toys" in Pet Shop. Valid categories: pets (Pets), account (Account).',
    );
    expectToolError(
      await client.callTool('search_tools', { query: 'pets', category: 'toys' }),
      /No category "toys"\. Valid categories: account, .*pets/,
    );
  });

  it('says so when nothing matches', async () => {
    const { text, tools } = await search({ query: 'zzyzx' });
    expect(tools).toEqual([]);
    expect(text).toContain('No tool matches "zzyzx"');
  });
});

describe('call_tool', () => {
  /** The same request twice, as a direct tools/call and through call_tool: the answers' bytes. */
  async function both(
    name: string,
    args: Record<string, unknown>,
    query = '?user_id=searcher&tools=compact',
  ) {
    const direct = await rpc(gw.tg, key, query, { method: 'tools/call', params: { name, arguments: args } });
    const through = await rpc(gw.tg, key, query, {
      method: 'tools/call',
      params: { name: 'call_tool', arguments: { name, arguments: args } },
    });
    return { direct, through };
  }

  it('answers exactly as a direct call: a result', async () => {
    const { direct, through } = await both('petshop_list_pets', { limit: 2 });
    expect(direct.json.result?.isError).toBeUndefined();
    expect(through.text).toBe(direct.text);
    expect(gw.api.received.at(-1)?.url).toBe('/pets?limit=2');
  });

  it('answers exactly as a direct call: invalid arguments', async () => {
    const { direct, through } = await both('petshop_list_pets', { limit: 0 });
    expect(direct.json.error?.message).toMatch(/Invalid arguments for petshop_list_pets: argument `limit`/);
    expect(through.text).toBe(direct.text);
  });

  it("answers exactly as a direct call: the provider's error", async () => {
    const { direct, through } = await both('petshop_get_pet', { petId: 'missing' });
    expect(direct.json.result?.isError).toBe(true);
    expect(direct.json.result?.content?.[0]?.text).toContain('pet not found');
    expect(through.text).toBe(direct.text);
  });

  it('answers exactly as a direct call: an unknown tool', async () => {
    const { direct, through } = await both('petshop_feed_pet', {});
    expect(direct.json.error?.message).toMatch(
      /^Unknown tool: petshop_feed_pet\. Find tools with search_tools/,
    );
    expect(through.text).toBe(direct.text);
  });

  it('tells how to connect a provider not connected yet', async () => {
    const { direct, through } = await both('sendgrid_list_contact_lists', {});
    expect(direct.json.result?.content?.[0]?.text).toMatch(
      /SendGrid is not connected for this user\. Call connect_provider with provider "sendgrid"/,
    );
    expect(through.text).toBe(direct.text);
  });

  it('runs search_tools, but not itself', async () => {
    const searched = (await client.callTool('call_tool', {
      name: 'search_tools',
      arguments: { query: 'pets', limit: 1 },
    })) as ToolCallResult & { structuredContent?: { tools: Found[] } };
    expectToolOk(searched);
    expect(searched.structuredContent?.tools).toHaveLength(1);
    expectToolError(
      await client.callTool('call_tool', { name: 'call_tool', arguments: { name: 'petshop_whoami' } }),
      'call_tool runs other tools',
    );
  });

  it('works in full mode too, where it is not listed', async () => {
    const full = await connect('2025 (v1 client)', gw.tg.mcpUrl('?user_id=searcher&tools=full'), {
      'X-API-Key': key,
    });
    try {
      expect(await full.listToolNames()).not.toContain('call_tool');
      expectToolOk(await full.callTool('call_tool', { name: 'petshop_whoami' }), 'ana@example.com');
    } finally {
      await full.close();
    }
  });
});
