/**
 * Upstream MCP servers that misbehave (issue 17): unreachable, too slow, not speaking JSON-RPC,
 * answering 20 MB, listing 5,000 tools, naming tools outside [a-z0-9_], describing arguments with
 * `$ref`s. Each gives a clear error or a bounded, valid list, and a REST provider of the same
 * gateway keeps working. One gateway for the file, its upstream deadline short (3 s, room for listing 5,000 tools on a busy machine).
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectWithKey, type TestClient } from '../../helpers/clients.js';
import { freePort, startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startModernUpstream, upstreamTool, type ModernUpstream } from '../../helpers/mcp-upstream.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const BAD = ['mcp-down', 'mcp-slow', 'mcp-garbage', 'mcp-huge', 'mcp-many', 'mcp-odd'];

const anyone = (tools: ReturnType<typeof upstreamTool>[]) => () => tools;
const ODD_NAMES = ['Get Weather!', 'get-weather', 'get_weather', `very_${'long_'.repeat(15)}name`, 'データ'];

let upstreams: ModernUpstream[];
let garbage: Server;
let weather: Receiver;
let tg: TestGateway;
let client: TestClient;

beforeAll(async () => {
  const never = new Promise<never>(() => {});
  upstreams = await Promise.all([
    startModernUpstream('x-none', { tools: anyone([upstreamTool('wait')]), call: () => never }),
    startModernUpstream('x-none', {
      tools: anyone([upstreamTool('dump')]),
      call: () => Promise.resolve({ content: [{ type: 'text', text: 'x'.repeat(20 * 2 ** 20) }] }),
    }),
    startModernUpstream('x-none', {
      tools: anyone(
        Array.from({ length: 5_000 }, (_, i) => upstreamTool(`tool_${String(i).padStart(4, '0')}`)),
      ),
      call: (name) => Promise.resolve({ content: [{ type: 'text', text: `ran ${name}` }] }),
    }),
    startModernUpstream('x-none', {
      tools: anyone([
        ...ODD_NAMES.map((name) => upstreamTool(name)),
        upstreamTool('refs', {
          inputSchema: {
            type: 'object',
            properties: { where: { $ref: '#/$defs/place' }, tree: { $ref: '#/$defs/node' } },
            required: ['where'],
            $defs: {
              place: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
              node: { type: 'object', properties: { child: { $ref: '#/$defs/node' } } },
            },
          },
        }),
        upstreamTool('oversized', {
          inputSchema: {
            type: 'object',
            properties: { x: { type: 'string', description: 'y'.repeat(70_000) } },
          },
        }),
      ]),
      call: (name, args) =>
        Promise.resolve({ content: [{ type: 'text', text: `${name} ${JSON.stringify(args)}` }] }),
    }),
  ]);
  garbage = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}');
  });
  garbage.listen(0, '127.0.0.1');
  await once(garbage, 'listening');
  weather = await startReceiver(() => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: '{"temp":21}',
  }));
  const [slow, huge, many, odd] = upstreams;
  tg = await startGateway(
    {
      TOOLGATE_ALLOW_PRIVATE_NETWORK: '1',
      TOOLGATE_MCP_TIMEOUT_MS: '3000',
      TOOLGATE_PROVIDER_MCP_DOWN_BASE_URL: `http://127.0.0.1:${await freePort()}/mcp`,
      TOOLGATE_PROVIDER_MCP_SLOW_BASE_URL: slow!.url,
      TOOLGATE_PROVIDER_MCP_GARBAGE_BASE_URL: `http://127.0.0.1:${(garbage.address() as { port: number }).port}/mcp`,
      TOOLGATE_PROVIDER_MCP_HUGE_BASE_URL: huge!.url,
      TOOLGATE_PROVIDER_MCP_MANY_BASE_URL: many!.url,
      TOOLGATE_PROVIDER_MCP_ODD_BASE_URL: odd!.url,
      TOOLGATE_PROVIDER_WEATHER_BASE_URL: weather.url,
    },
    {
      manifestFiles: [
        ...BAD.map((id) => `${FIXTURES}mcp/${id}.yaml`),
        `${FIXTURES}catalog/auth-none/weather.yaml`,
      ],
    },
  );
  client = await connectWithKey(tg, '2026-07-28', '?tools=full');
}, 60_000);

afterAll(async () => {
  await client.close();
  await tg.close();
  garbage.closeAllConnections();
  garbage.close();
  await Promise.all([...upstreams.map((u) => u.close()), weather.close()]);
});

type Call = Awaited<ReturnType<TestClient['callTool']>>;
const text = (result: Call): string => result.content.map((c) => c.text ?? '').join('\n');
const inspect = async (provider: string) => text(await client.callTool('inspect_provider', { provider }));

describe('bad upstream MCP servers', () => {
  it('lists a bounded, valid list: the REST tools and what the healthy upstreams give', async () => {
    const names = await client.listToolNames();
    expect(names).toContain('weather_current');
    expect(names.every((name) => /^[a-z0-9_]{1,48}$/.test(name))).toBe(true);
    expect(new Set(names).size).toBe(names.length);
    // 5,000 offered, 1,000 served.
    expect(names.filter((name) => name.startsWith('mcp_many_'))).toHaveLength(1_000);
    expect(names.some((name) => name.startsWith('mcp_down_') || name.startsWith('mcp_garbage_'))).toBe(false);
  });

  it('says why an unreachable or non-MCP upstream lists nothing', async () => {
    expect(await inspect('mcp-down')).toMatch(
      /Listing them failed just now \(could not reach 127\.0\.0\.1: the connection was refused\)/,
    );
    expect(await inspect('mcp-garbage')).toMatch(
      /Listing them failed just now \(127\.0\.0\.1 did not answer as an MCP server/,
    );
  });

  it('says how much of a long list is served', async () => {
    expect(await inspect('mcp-many')).toContain(
      'it offers at least 5000 tools and the gateway serves the first 1000',
    );
  });

  it('names odd tools within the rule, distinct, and calls them by their upstream names', async () => {
    const names = (await client.listToolNames()).filter((name) => name.startsWith('mcp_odd_'));
    expect(names).toEqual(
      expect.arrayContaining(['mcp_odd_get_weather_', 'mcp_odd_get_weather', 'mcp_odd_refs', 'mcp_odd____']),
    );
    // `get-weather` and `get_weather` both read get_weather: the later one gets a hash.
    expect(names.filter((name) => name.startsWith('mcp_odd_get_weather'))).toHaveLength(3);
    const long = names.find((name) => name.startsWith('mcp_odd_very_long'));
    expect(long).toMatch(/^mcp_odd_very_long_[a-z0-9_]*_[0-9a-f]{6}$/);
    expect(long!.length).toBeLessThanOrEqual(48);
    expect(text(await client.callTool(long!))).toContain(`very_${'long_'.repeat(15)}name`);
    expect(text(await client.callTool('mcp_odd_get_weather_'))).toContain('Get Weather!');
    // A tool whose inputSchema is over the size bound is left out, and inspect_provider says so.
    expect(names.some((name) => name.includes('oversized'))).toBe(false);
    expect(await inspect('mcp-odd')).toContain(
      'oversized: its inputSchema is 68 KB, over the 64 KB the gateway serves',
    );
  });

  it('writes $refs out, cuts recursion, and validates against the result', async () => {
    await expect(client.callTool('mcp_odd_refs', { where: {} })).rejects.toThrow(
      /argument `where.city` is required|argument `where` .*city/,
    );
    const result = await client.callTool('mcp_odd_refs', {
      where: { city: 'Oslo' },
      tree: { child: { child: {} } },
    });
    expect(text(result)).toContain('"city":"Oslo"');
  });

  it('times out a slow upstream call with the REST message', async () => {
    const result = await client.callTool('mcp_slow_wait');
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/mcp-slow did not answer within 3 seconds/);
  });

  it('refuses a 20 MB answer with a clear error', async () => {
    const result = await client.callTool('mcp_huge_dump');
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/Calling mcp-huge failed: 127\.0\.0\.1 answered with more than 8 MB/);
  });

  it('keeps a REST provider of the same gateway working', async () => {
    const result = await client.callTool('weather_current', { city: 'Oslo' });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toContain('21');
  });
});
