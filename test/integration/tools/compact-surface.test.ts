import { getEncoding } from 'js-tiktoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, countToolsChanged, GENERATIONS, SYSTEM_TOOLS } from '../../helpers/clients.js';
import { expectToolOk } from '../../helpers/results.js';
import {
  COMPACT_TOOLS,
  connectPetshop,
  names,
  PETSHOP_TOOLS,
  rpc,
  startCompactGateway,
  type CompactGateway,
} from './compact-gateway.js';

let gw: CompactGateway;
let key: string;

beforeAll(async () => {
  gw = await startCompactGateway();
  key = (await gw.tg.key('client')).key;
});
afterAll(() => gw.close());

const LIST = { method: 'tools/list' };
const COMPACT_LIST = [...SYSTEM_TOOLS, ...COMPACT_TOOLS];

describe('the compact tool list (tools=compact)', () => {
  it('is the system tools with search_tools and call_tool: the same bytes for every scope and every call', async () => {
    const client = await connect('2026-07-28', gw.tg.mcpUrl('?user_id=has-petshop'), { 'X-API-Key': key });
    await connectPetshop(client);
    await client.close();

    const connected = await rpc(gw.tg, key, '?user_id=has-petshop&tools=compact', LIST);
    expect(names(connected.json)).toEqual(COMPACT_LIST);
    const again = await rpc(gw.tg, key, '?user_id=has-petshop&tools=compact', LIST);
    const nothing = await rpc(gw.tg, key, '?user_id=has-nothing&tools=compact', LIST);
    const solo = await rpc(gw.tg, (await gw.tg.key('solo')).key, '?tools=compact', LIST);
    expect(again.text).toBe(connected.text);
    expect(nothing.text).toBe(connected.text);
    expect(solo.text).toBe(connected.text);
  });

  it('fits in 3,000 tokens (cl100k)', async () => {
    const { json } = await rpc(gw.tg, key, '?tools=compact', LIST);
    const tokens = getEncoding('cl100k_base').encode(JSON.stringify(json.result)).length;
    expect(tokens).toBeLessThanOrEqual(3_000);
  });
});

describe.each(GENERATIONS)('MCP generation %s', (generation) => {
  const user = `gen-${generation.replace(/\W+/g, '-')}`;

  it('serves the list the tools parameter asks for', async () => {
    const compact = await connect(generation, gw.tg.mcpUrl(`?user_id=${user}&tools=compact`), {
      'X-API-Key': key,
    });
    const full = await connect(generation, gw.tg.mcpUrl(`?user_id=${user}&tools=full`), { 'X-API-Key': key });
    try {
      expect(await compact.listToolNames()).toEqual(COMPACT_LIST);
      expect(await full.listToolNames()).toEqual(SYSTEM_TOOLS);
      await connectPetshop(compact);
      expect(await compact.listToolNames()).toEqual(COMPACT_LIST);
      expect(await full.listToolNames()).toEqual([...SYSTEM_TOOLS, ...PETSHOP_TOOLS]);
    } finally {
      await Promise.all([compact.close(), full.close()]);
    }
  });

  it('without the parameter, turns compact when a connection crosses the threshold, and says so', async () => {
    const client = await connect(generation, gw.tg.mcpUrl(`?user_id=auto-${user}`), { 'X-API-Key': key });
    try {
      const changes = await countToolsChanged(client, gw.tg);
      expect(await client.listToolNames()).toEqual(SYSTEM_TOOLS);
      await connectPetshop(client);
      await changes.until((n) => n >= 1);
      expect(await client.listToolNames()).toEqual(COMPACT_LIST);
      expectToolOk(await client.callTool('disconnect_provider', { provider: 'petshop' }), 'Disconnected');
      await changes.until((n) => n >= 2);
      expect(await client.listToolNames()).toEqual(SYSTEM_TOOLS);
    } finally {
      await client.close();
    }
  });
});

describe('a 2025 session', () => {
  const INITIALIZE = {
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  };

  it('keeps the list it was opened with, whatever its later requests say', async () => {
    const opened = await rpc(gw.tg, key, '?user_id=session-user&tools=compact', INITIALIZE);
    const session = { 'mcp-session-id': opened.headers.get('mcp-session-id')! };
    expect(names((await rpc(gw.tg, key, '?user_id=session-user', LIST, session)).json)).toEqual(COMPACT_LIST);
    expect(names((await rpc(gw.tg, key, '?user_id=session-user&tools=full', LIST, session)).json)).toEqual(
      COMPACT_LIST,
    );

    const full = await rpc(gw.tg, key, '?user_id=session-user&tools=full', INITIALIZE);
    const fullSession = { 'mcp-session-id': full.headers.get('mcp-session-id')! };
    expect(
      names((await rpc(gw.tg, key, '?user_id=session-user&tools=compact', LIST, fullSession)).json),
    ).toEqual(SYSTEM_TOOLS);
  });
});

describe('an invalid tools parameter', () => {
  it.each(['tools=tiny', 'tools=', 'tools=Compact', 'tools=compact&tools=full'])(
    'is refused before anything is served: %s',
    async (query) => {
      const { status, json } = await rpc(gw.tg, key, `?user_id=u1&${query}`, LIST);
      expect(status).toBe(400);
      expect(json.error).toEqual({
        code: 'TG_ERR_TOOLS_MODE_INVALID',
        message: expect.stringMatching(/tools query parameter must be compact or full/) as unknown,
      });
    },
  );
});
