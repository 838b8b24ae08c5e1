/**
 * Providers whose tools come from an upstream MCP server (issue 17), end to end: the reference
 * server `@modelcontextprotocol/server-everything` (2025-era sessions, and its 2024-11-05 HTTP+SSE
 * transport) and a 2026-07-28 stateless
 * server of the v2 server SDK as upstreams, listed and called through the gateway by the real
 * clients of each generation; an API key upstream checks the header, two users each call with their
 * own key and see their own tools; list_changed from an upstream reaches the scope's client.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connect,
  connectWithKey,
  countToolsChanged,
  type Generation,
  type TestClient,
} from '../../helpers/clients.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import {
  startEverything,
  startModernUpstream,
  upstreamTool,
  type ModernUpstream,
  type RunningServer,
} from '../../helpers/mcp-upstream.js';
import { startReceiver, type Receiver } from '../../helpers/receiver.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));

let everything: RunningServer;
let everythingSse: RunningServer;
let acme: ModernUpstream;
let acmeOAuth: ModernUpstream;
let weather: Receiver;
let tg: TestGateway;
/** Keys the loopback Acme server accepts, and the account each belongs to. */
const ACCOUNTS: Record<string, string> = { acme_alice: 'alice', acme_bob: 'bob' };
let extraTool = false;
/** Whether the OAuth upstream still accepts the token it issued ("good"). */
let tokenValid = true;

beforeAll(async () => {
  [everything, everythingSse, acme, acmeOAuth, weather] = await Promise.all([
    startEverything(),
    startEverything('sse'),
    startModernUpstream('x-acme-key', {
      tools(key) {
        const account = key === undefined ? undefined : ACCOUNTS[key];
        if (account === undefined) return undefined;
        return [
          upstreamTool('whoami', { annotations: { readOnlyHint: true } }),
          // Tools differ per account: only alice's lists the admin tool.
          ...(account === 'alice' ? [upstreamTool('admin.purge-cache')] : []),
          ...(extraTool ? [upstreamTool('late_arrival')] : []),
        ];
      },
      call: (name, _args, key) =>
        Promise.resolve({
          content: [{ type: 'text', text: `${name} for ${ACCOUNTS[key ?? ''] ?? 'nobody'}` }],
          structuredContent: { account: ACCOUNTS[key ?? ''] ?? null },
        }),
    }),
    startModernUpstream('authorization', {
      tools: (bearer) => (bearer === 'Bearer good' && tokenValid ? [upstreamTool('ping')] : undefined),
      call: () => Promise.resolve({ content: [{ type: 'text', text: 'pong' }] }),
    }),
    startReceiver(() => ({
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: '{"temp":21}',
    })),
  ]);
  tg = await startGateway(
    {
      TOOLGATE_ALLOW_PRIVATE_NETWORK: '1',
      TOOLGATE_PROVIDER_EVERYTHING_BASE_URL: everything.url,
      TOOLGATE_PROVIDER_EVERYTHING_SSE_BASE_URL: everythingSse.url,
      TOOLGATE_PROVIDER_ACME_MCP_BASE_URL: acme.url,
      TOOLGATE_PROVIDER_ACME_OAUTH_MCP_BASE_URL: acmeOAuth.url,
      TOOLGATE_PROVIDER_ACME_OAUTH_MCP_CLIENT_ID: 'toolgate-test',
      TOOLGATE_PROVIDER_ACME_OAUTH_MCP_CLIENT_SECRET: 'test-secret',
      TOOLGATE_PROVIDER_WEATHER_BASE_URL: weather.url,
    },
    {
      manifestFiles: [
        `${FIXTURES}mcp/everything.yaml`,
        `${FIXTURES}mcp/everything-sse.yaml`,
        `${FIXTURES}mcp/acme-mcp.yaml`,
        `${FIXTURES}mcp/acme-oauth-mcp.yaml`,
        `${FIXTURES}catalog/auth-none/weather.yaml`,
      ],
    },
  );
}, 60_000);

afterAll(async () => {
  await tg.close();
  await Promise.all([
    everything.close(),
    everythingSse.close(),
    acme.close(),
    acmeOAuth.close(),
    weather.close(),
  ]);
});

type Call = Awaited<ReturnType<TestClient['callTool']>>;
const text = (result: Call): string => result.content.map((c) => c.text ?? '').join('\n');

describe('server-everything as an upstream (2025-era Streamable HTTP with sessions)', () => {
  const generations: Generation[] = ['2026-07-28', '2025 (v2 client)', '2025 (v1 client)'];
  for (const generation of generations) {
    it(`is listed and called through the gateway by the ${generation} client`, async () => {
      const client = await connectWithKey(tg, generation, '?user_id=u-everything');
      try {
        const names = await client.listToolNames();
        // Upstream names with `-` become `_` under the provider's prefix.
        expect(names).toEqual(expect.arrayContaining(['everything_echo', 'everything_get_sum']));
        expect(names.every((name) => /^[a-z0-9_]{1,48}$/.test(name))).toBe(true);
        const echoed = await client.callTool('everything_echo', { message: `hi from ${generation}` });
        expect(echoed.isError).toBeFalsy();
        expect(text(echoed)).toContain(`hi from ${generation}`);
        const sum = await client.callTool('everything_get_sum', { a: 2, b: 40 });
        expect(text(sum)).toContain('42');
      } finally {
        await client.close();
      }
    });
  }

  it('validates arguments against the upstream schema before calling', async () => {
    const client = await connectWithKey(tg, '2026-07-28', '');
    try {
      await expect(client.callTool('everything_get_sum', { a: 'two', b: 1 })).rejects.toThrow(
        /Invalid arguments for everything_get_sum: argument `a` must be of type number/,
      );
    } finally {
      await client.close();
    }
  });

  it('files the tools in the manifest categories, shown by inspect_provider', async () => {
    const client = await connectWithKey(tg, '2026-07-28', '');
    try {
      const inspected = text(await client.callTool('inspect_provider', { provider: 'everything' }));
      expect(inspected).toContain('Its tools come from its MCP server');
      expect(inspected).toMatch(/Echo\n {2}- everything_echo: /);
      // By annotation (readOnlyHint), and the last category takes what no selector matches.
      expect(inspected).toMatch(/Reading\n(.*\n)* {2}- everything_get_sum: /);
      expect(inspected).toMatch(/Other\n(.*\n)* {2}- everything_toggle_simulated_logging: /);
    } finally {
      await client.close();
    }
  });

  it('is found by search_tools and run by call_tool (the compact surface)', async () => {
    const client = await connectWithKey(tg, '2026-07-28', '?tools=compact');
    try {
      const found = text(await client.callTool('search_tools', { query: 'add two numbers sum' }));
      expect(found).toContain('everything_get_sum (everything, no connection needed)');
      const sum = await client.callTool('call_tool', {
        name: 'everything_get_sum',
        arguments: { a: 1, b: 2 },
      });
      expect(text(sum)).toContain('3');
    } finally {
      await client.close();
    }
  });
});

describe('server-everything as a 2024-11-05 HTTP+SSE upstream (transport: sse)', () => {
  it('is listed and called through the gateway', async () => {
    const client = await connectWithKey(tg, '2025 (v2 client)', '?user_id=u-sse');
    try {
      expect(await client.listToolNames()).toContain('everything_sse_echo');
      expect(text(await client.callTool('everything_sse_echo', { message: 'over sse' }))).toContain(
        'over sse',
      );
    } finally {
      await client.close();
    }
  });
});

describe('an API key upstream (2026-07-28, stateless)', () => {
  it('refuses a key the upstream refuses, and stores nothing', async () => {
    const client = await connectWithKey(tg, '2026-07-28', '?user_id=mallory');
    try {
      const refused = await client.callTool('connect_provider', {
        provider: 'acme-mcp',
        credentials: { api_key: 'acme_wrong' },
      });
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain('Acme MCP refused the credential (HTTP 401 from its MCP server)');
      expect(await client.listToolNames()).not.toContain('acme_mcp_whoami');
    } finally {
      await client.close();
    }
  });

  it("gives each of two users their own tools, and carries each user's own key upstream", async () => {
    const { key } = await tg.key('client', 'two-users');
    const alice = await connect('2026-07-28', tg.mcpUrl('?user_id=alice'), { 'X-API-Key': key });
    const bob = await connect('2025 (v1 client)', tg.mcpUrl('?user_id=bob'), { 'X-API-Key': key });
    try {
      for (const [client, apiKey] of [
        [alice, 'acme_alice'],
        [bob, 'acme_bob'],
      ] as const) {
        const connected = await client.callTool('connect_provider', {
          provider: 'acme-mcp',
          credentials: { api_key: apiKey },
        });
        expect(text(connected)).toContain('Connected Acme MCP');
      }
      expect(await alice.listToolNames()).toEqual(
        expect.arrayContaining(['acme_mcp_whoami', 'acme_mcp_admin_purge_cache']),
      );
      const bobs = await bob.listToolNames();
      expect(bobs).toContain('acme_mcp_whoami');
      expect(bobs).not.toContain('acme_mcp_admin_purge_cache');

      acme.calls.length = 0;
      expect(text(await alice.callTool('acme_mcp_whoami'))).toContain('whoami for alice');
      expect(text(await bob.callTool('acme_mcp_whoami'))).toContain('whoami for bob');
      expect(text(await alice.callTool('acme_mcp_admin_purge_cache'))).toContain(
        'admin.purge-cache for alice',
      );
      expect(acme.calls).toEqual([
        { tool: 'whoami', credential: 'acme_alice' },
        { tool: 'whoami', credential: 'acme_bob' },
        { tool: 'admin.purge-cache', credential: 'acme_alice' },
      ]);
      // Bob's list has no such tool: for him it does not exist.
      await expect(bob.callTool('acme_mcp_admin_purge_cache')).rejects.toThrow(/Unknown tool/);
    } finally {
      await Promise.all([alice.close(), bob.close()]);
    }
  });

  it("tells a scope's client when the upstream's tools change, and lists the new ones", async () => {
    const { key } = await tg.key('client', 'changes');
    const client = await connect('2025 (v2 client)', tg.mcpUrl('?user_id=carol'), { 'X-API-Key': key });
    try {
      await client.callTool('connect_provider', {
        provider: 'acme-mcp',
        credentials: { api_key: 'acme_alice' },
      });
      expect(await client.listToolNames()).not.toContain('acme_mcp_late_arrival');
      const changes = await countToolsChanged(client, tg);
      const before = changes.count;
      extraTool = true;
      acme.toolsChanged();
      await changes.until((count) => count > before);
      expect(await client.listToolNames()).toContain('acme_mcp_late_arrival');
    } finally {
      extraTool = false;
      await client.close();
    }
  });
});

describe('an OAuth2 upstream (2026-07-28)', () => {
  it('answers an OAuth2 token the upstream refuses with the re-approval message and a link', async () => {
    const { key } = await tg.key('client', 'oauth-user');
    const clientId = (await tg.gateway.keys.list()).find((k) => k.clientName === 'oauth-user')!.clientId;
    const scope = { clientId, orgId: null, userId: 'dave' };
    await tg.gateway.connections.store(
      scope,
      'acme-oauth-mcp',
      { credentials: { access_token: 'good' }, fields: {} },
      null,
    );
    const client = await connect('2026-07-28', tg.mcpUrl('?user_id=dave'), { 'X-API-Key': key });
    try {
      expect(text(await client.callTool('acme_oauth_mcp_ping'))).toBe('pong');
      // The upstream revokes the token; with no refresh token it cannot be renewed.
      tokenValid = false;
      const refused = await client.callTool('acme_oauth_mcp_ping');
      expect(refused.isError).toBe(true);
      expect(text(refused)).toMatch(
        /The Acme OAuth MCP connection must be re-approved(.|\n)*open this link(.|\n)*\/oauth\//,
      );
    } finally {
      await client.close();
    }
  });
});

describe('alongside REST providers', () => {
  it('leaves a REST provider of the same gateway working', async () => {
    const client = await connectWithKey(tg, '2026-07-28', '');
    try {
      const result = await client.callTool('weather_current', { city: 'Oslo' });
      expect(result.isError).toBeFalsy();
      expect(text(result)).toContain('21');
    } finally {
      await client.close();
    }
  });
});
