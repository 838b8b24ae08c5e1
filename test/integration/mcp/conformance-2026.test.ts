import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1StreamableTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListPromptsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connect } from '../../helpers/clients.js';
import { postMcp, startGateway, type TestGateway } from '../../helpers/gateway.js';
import { PETSHOP_MANIFESTS } from '../../helpers/petshop.js';

/**
 * The 2026-07-28 conformance requirements the gateway answers for (issue 18: the MCP conformance
 * suite's applicable 2026-07-28 checks, and what probing it found), as our own tests, seen from the
 * real clients (v2 pinned to 2026-07-28, 1.x for 2025 sessions) and from raw requests:
 *  1. methods the revision removed (ping, logging/setLevel, resources/subscribe|unsubscribe,
 *     initialize) answer 404 with -32601 on 2026 requests; 2025 sessions keep ping;
 *  2. SEP-2243 standard headers: a missing MCP-Protocol-Version or Mcp-Method, a tools/call without
 *     Mcp-Name or whose Mcp-Name differs from params.name, a mismatching Mcp-Method: 400, -32020;
 *  3. every list result carries ttlMs and cacheScope (private for tools/list, which depends on the
 *     scope; public for the empty prompt and resource lists, which do not);
 *  4. malformed requests are logged at info as TG_ERR_BAD_REQUEST, never at error as
 *     TG_ERR_INTERNAL, which real faults keep;
 *  5. identifiers (user_id, org_id) are up to 256 characters, counted in code points;
 *  6. connect_provider answers a client that declares URL elicitation with input_required carrying
 *     the link, and its retry with the outcome (the browser round trip: test/e2e/connect-link.test.ts).
 * Elsewhere, because they need their own setup: OAuth2 refresh margins for short-lived tokens
 * (test/e2e/oauth.test.ts) and shutdown on SIGTERM to the process group (test/integration/cli/
 * shutdown.test.ts).
 */
let tg: TestGateway;
let key: string;

beforeAll(async () => {
  tg = await startGateway({}, { manifestFiles: PETSHOP_MANIFESTS });
  key = (await tg.key('solo')).key;
});
afterAll(() => tg.close());

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1.0.0' },
};

/** The version header of every 2026-07-28 request. */
const MODERN = { 'mcp-protocol-version': '2026-07-28' };

interface Answer {
  status: number;
  body: { result?: Record<string, unknown>; error?: { code: number; message: string } } | undefined;
}

/** POSTs a raw body with exactly these headers (besides the key and content negotiation). */
async function post(
  body: unknown,
  headers: Record<string, string> = {},
  query = '',
  as = key,
): Promise<Answer> {
  const response = await postMcp(tg.mcpUrl(query), as, body, headers);
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Answer['body']) : undefined };
}

/** A 2026-07-28 request with its envelope and the standard headers a v2 client sends. */
function modern(method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  return post(
    { jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: ENVELOPE } },
    { ...MODERN, 'mcp-method': method, ...headers },
  );
}

describe('2026-07-28 removed methods', () => {
  it.each(['ping', 'logging/setLevel', 'resources/subscribe', 'resources/unsubscribe', 'initialize'])(
    '%s is answered 404 with -32601',
    async (method) => {
      const answer = await modern(method);
      expect(answer.status).toBe(404);
      expect(answer.body?.error?.code).toBe(-32601);
    },
  );

  it('keeps ping for 2025 sessions', async () => {
    const client = new V1Client({ name: 'toolgate-test', version: '1.0.0' });
    await client.connect(
      new V1StreamableTransport(tg.mcpUrl(), { requestInit: { headers: { 'X-API-Key': key } } }),
    );
    try {
      expect(await client.ping()).toEqual({});
    } finally {
      await client.close();
    }
  });
});

describe('SEP-2243 standard headers on 2026-07-28 requests', () => {
  const call = { name: 'list_providers', arguments: {} };

  it.each([
    ['tools/list without Mcp-Method', 'tools/list', {}, MODERN],
    ['tools/call without Mcp-Method', 'tools/call', call, { ...MODERN, 'mcp-name': 'list_providers' }],
    ['tools/call without Mcp-Name', 'tools/call', call, { ...MODERN, 'mcp-method': 'tools/call' }],
    [
      'tools/call whose Mcp-Name differs',
      'tools/call',
      call,
      { ...MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'report_problem' },
    ],
    ['tools/list without MCP-Protocol-Version', 'tools/list', {}, { 'mcp-method': 'tools/list' }],
  ])('refuses %s with 400 and -32020', async (_label, method, params, headers) => {
    const answer = await post(
      { jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: ENVELOPE } },
      headers,
    );
    expect(answer.status).toBe(400);
    expect(answer.body?.error?.code).toBe(-32020);
  });

  it('serves a tools/call whose Mcp-Name matches', async () => {
    const answer = await modern('tools/call', call, { 'mcp-name': 'list_providers' });
    expect(answer.status).toBe(200);
    expect(answer.body?.result?.resultType).toBe('complete');
  });

  it('serves a tools/call whose Mcp-Name is in its Base64 form (through the SDK)', async () => {
    const encoded = `=?base64?${Buffer.from('list_providers').toString('base64')}?=`;
    const answer = await modern('tools/call', call, { 'mcp-name': encoded });
    expect(answer.status).toBe(200);
    expect(answer.body?.result?.resultType).toBe('complete');
  });

  it('refuses a mismatching Mcp-Method as before', async () => {
    const answer = await modern('tools/list', {}, { 'mcp-method': 'tools/call' });
    expect(answer.status).toBe(400);
    expect(answer.body?.error?.code).toBe(-32020);
  });
});

describe('prompt and resource lists', () => {
  it.each([
    ['prompts/list', 'prompts'],
    ['resources/list', 'resources'],
    ['resources/templates/list', 'resourceTemplates'],
  ])('2026-07-28 %s is an empty list with caching hints, the same for everyone', async (method, field) => {
    const answer = await modern(method);
    expect(answer.status).toBe(200);
    expect(answer.body?.result).toMatchObject({
      [field]: [],
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'public',
    });
  });

  it('2026-07-28 tools/list carries the caching hints, private to the scope', async () => {
    const answer = await modern('tools/list');
    expect(answer.status).toBe(200);
    expect(answer.body?.result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' });
    expect((answer.body?.result?.tools as unknown[]).length).toBeGreaterThan(0);
  });

  it('the v2 client pinned to 2026-07-28 sees them declared and lists them', async () => {
    const client = new Client(
      { name: 'toolgate-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(tg.mcpUrl(), { requestInit: { headers: { 'X-API-Key': key } } }),
    );
    try {
      expect(client.getServerCapabilities()).toMatchObject({ prompts: {}, resources: {} });
      expect((await client.listPrompts()).prompts).toEqual([]);
      expect((await client.listResources()).resources).toEqual([]);
      expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('2025 sessions are not offered them: method not found, as for any undeclared capability', async () => {
    const client = new V1Client({ name: 'toolgate-test', version: '1.0.0' });
    await client.connect(
      new V1StreamableTransport(tg.mcpUrl(), { requestInit: { headers: { 'X-API-Key': key } } }),
    );
    try {
      expect(client.getServerCapabilities()).toEqual({ tools: { listChanged: true } });
      await expect(client.request({ method: 'prompts/list' }, ListPromptsResultSchema)).rejects.toMatchObject(
        { code: -32601 },
      );
    } finally {
      await client.close();
    }
  });

  it('the 2026-07-28 generation of the test clients still lists tools', async () => {
    const client = await connect('2026-07-28', tg.mcpUrl(), { 'X-API-Key': key });
    try {
      expect((await client.listToolNames()).length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});

const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

/** Log lines written while `run` ran. */
async function logsOf(run: () => Promise<void>): Promise<{ level: number; code?: string }[]> {
  const from = tg.logs.length;
  await run();
  return tg.logs.slice(from).map((line) => JSON.parse(line) as { level: number; code?: string });
}

// Each kind of malformed request, as a client could send it, with the status it is answered.
const MISTAKES: [string, string, Record<string, string>, number][] = [
  ['empty batch', '[]', {}, 400],
  ['batch with an invalid element', '[{"jsonrpc":"2.0"}]', {}, 400],
  ['not JSON', '{"jsonrpc":', {}, 400],
  ['not JSON-RPC', '{"hello":"world"}', {}, 400],
  ['modern header, no _meta', JSON.stringify(LIST), { ...MODERN, 'mcp-method': 'tools/list' }, 400],
  ['envelope without Mcp-Method', JSON.stringify({ ...LIST, params: { _meta: ENVELOPE } }), MODERN, 400],
  [
    'envelope naming an unknown revision',
    JSON.stringify({
      ...LIST,
      params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
    }),
    { 'mcp-method': 'tools/list' },
    400,
  ],
  [
    'tools/call without Mcp-Name',
    JSON.stringify({
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'list_providers', _meta: ENVELOPE },
    }),
    { ...MODERN, 'mcp-method': 'tools/call' },
    400,
  ],
  [
    'removed method',
    JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping', params: { _meta: ENVELOPE } }),
    { ...MODERN, 'mcp-method': 'ping' },
    404,
  ],
];

// Issue 18: these were answered 400 but logged at error level as TG_ERR_INTERNAL with a stack
// trace, so any key holder could flood the error log. A client's mistake is an info line with its
// own code; TG_ERR_INTERNAL is kept for real faults.
describe('malformed requests', () => {
  it('a burst of each kind is refused without an error line or TG_ERR_INTERNAL', async () => {
    const lines = await logsOf(async () => {
      for (let round = 0; round < 5; round++) {
        for (const [label, body, headers, status] of MISTAKES) {
          expect({ label, status: (await post(body, headers)).status }).toEqual({ label, status });
        }
      }
    });
    expect(lines.filter((line) => line.level >= 50)).toEqual([]);
    expect(lines.filter((line) => line.code === 'TG_ERR_INTERNAL')).toEqual([]);
    expect(lines.filter((line) => line.code === 'TG_ERR_BAD_REQUEST').length).toBeGreaterThanOrEqual(
      5 * MISTAKES.length,
    );
  });

  it('a real fault is still logged as TG_ERR_INTERNAL at error level', async () => {
    const lines = await logsOf(async () => {
      const fault = vi.spyOn(tg.gateway.connections, 'list').mockRejectedValueOnce(new Error('disk on fire'));
      try {
        const body = JSON.stringify({ ...LIST, params: { _meta: ENVELOPE } });
        expect((await post(body, { ...MODERN, 'mcp-method': 'tools/list' })).status).toBe(500);
      } finally {
        fault.mockRestore();
      }
    });
    expect(lines.filter((line) => line.level >= 50 && line.code === 'TG_ERR_INTERNAL')).toHaveLength(1);
  });
});

describe('identifiers up to 256 characters, counted in code points', () => {
  it.each([
    ['256 emoji', '😀'.repeat(256), 200],
    ['257 emoji', '😀'.repeat(257), 400],
  ])('user_id of %s on a 2026-07-28 request', async (_label, userId, status) => {
    const client = (await tg.key('client')).key;
    const answer = await post(
      { jsonrpc: '2.0', id: 7, method: 'tools/list', params: { _meta: ENVELOPE } },
      { ...MODERN, 'mcp-method': 'tools/list' },
      `?user_id=${encodeURIComponent(userId)}`,
      client,
    );
    expect(answer.status).toBe(status);
    if (status === 400) expect(JSON.stringify(answer.body)).toContain('TG_ERR_IDENTIFIER_INVALID');
  });
});

describe('connect_provider and URL elicitation', () => {
  const connect = (
    capabilities: Record<string, unknown>,
    extra: Record<string, unknown> = {},
    name = 'connect_provider',
  ) =>
    post(
      {
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: {
          name: 'connect_provider',
          arguments: { provider: 'petshop' },
          ...extra,
          _meta: { ...ENVELOPE, 'io.modelcontextprotocol/clientCapabilities': capabilities },
        },
      },
      { ...MODERN, 'mcp-method': 'tools/call', 'mcp-name': name },
    );

  it.each([
    ['on the lean path', 'connect_provider'],
    // An Mcp-Name in its Base64 form is served by the SDK's own server rather than the lean path.
    ['through the SDK', `=?base64?${Buffer.from('connect_provider').toString('base64')}?=`],
  ])(
    'answers a client that declares it input_required, carrying the link as a URL elicitation (%s)',
    async (_label, name) => {
      const answer = await connect({ elicitation: { url: {} } }, {}, name);
      expect(answer.status).toBe(200);
      expect(answer.body?.result).toMatchObject({
        resultType: 'input_required',
        inputRequests: {
          connect: {
            method: 'elicitation/create',
            params: { mode: 'url', url: expect.stringMatching(/\/connect\/[A-Za-z0-9_-]+$/) as unknown },
          },
        },
      });
    },
  );

  it('answers the retry of a user who declined with a complete result saying so', async () => {
    const answer = await connect(
      { elicitation: { url: {} } },
      { inputResponses: { connect: { action: 'decline' } } },
    );
    expect(answer.body?.result).toMatchObject({ resultType: 'complete' });
    expect(JSON.stringify(answer.body?.result)).toContain(
      'The user did not open the link to connect Pet Shop',
    );
  });

  it('gives a client that does not declare it the link in a complete result', async () => {
    const answer = await connect({});
    expect(answer.body?.result).toMatchObject({ resultType: 'complete' });
    expect(JSON.stringify(answer.body?.result)).toMatch(/ask the user to open this link[^"]*\/connect\//);
  });
});
