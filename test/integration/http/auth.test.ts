import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateApiKey } from '../../../core/auth/keys.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';

let tg: TestGateway;
const keys: Record<'solo' | 'client' | 'platform' | 'revoked' | 'other', string> = {
  solo: '',
  client: '',
  platform: '',
  revoked: '',
  other: '',
};

beforeAll(async () => {
  tg = await startGateway();
  keys.solo = (await tg.key('solo')).key;
  keys.client = (await tg.key('client')).key;
  keys.platform = (await tg.key('platform', 'platform-co')).key;
  keys.other = (await tg.key('client', 'someone-else')).key;
  const revoked = await tg.key('client');
  keys.revoked = revoked.key;
  await tg.gateway.keys.revoke(revoked.id);
});
afterAll(() => tg.close());

const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

/** The shapes a test reads back: a refusal, or a JSON-RPC result. */
interface Body {
  error: { code: string; message: string };
  result: { tools: { name: string }[] };
}

type KeyHeader = (key: string) => Record<string, string>;
const HEADER_FORMS: [string, KeyHeader][] = [
  ['X-API-Key', (key) => ({ 'x-api-key': key })],
  ['Authorization: Bearer', (key) => ({ authorization: `Bearer ${key}` })],
];

async function post(query: string, headers: Record<string, string>, body: unknown = LIST) {
  const response = await fetch(tg.mcpUrl(query), {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    text,
    json: JSON.parse(text) as Body,
  };
}

describe.each(HEADER_FORMS)('key sent as %s', (_name, send) => {
  it('refuses a request without a key, naming both accepted headers', async () => {
    const { status, json } = await post('', {});
    expect(status).toBe(401);
    expect(json.error.code).toBe('TG_ERR_KEY_MISSING');
    expect(json.error.message).toMatch(/X-API-Key/);
    expect(json.error.message).toMatch(/Authorization: Bearer/);
  });

  it('refuses malformed keys and bad checksums without touching the store', async () => {
    const lookup = vi.spyOn(tg.gateway.store.keys, 'findByHash');
    const last = keys.client.at(-1) === 'a' ? 'b' : 'a';
    for (const bad of ['toolgate_short', 'sk_live_123', keys.client.slice(0, -1) + last, keys.client + 'x']) {
      const { status, json, text } = await post('', send(bad));
      expect(status).toBe(401);
      expect(json.error.code).toBe('TG_ERR_KEY_MALFORMED');
      expect(text).not.toContain(bad);
    }
    expect(lookup).not.toHaveBeenCalled();
    lookup.mockRestore();
  });

  it('refuses a well-formed unknown key and a revoked key, saying which', async () => {
    const unknown = await post('', send(generateApiKey()));
    expect([unknown.status, unknown.json.error.code]).toEqual([401, 'TG_ERR_KEY_UNKNOWN']);
    const revoked = await post('', send(keys.revoked));
    expect([revoked.status, revoked.json.error.code]).toEqual([401, 'TG_ERR_KEY_REVOKED']);
    expect(revoked.json.error.message).toMatch(/revoked/);
    expect(revoked.text).not.toContain(keys.revoked);
  });

  it.each([
    ['solo', '?user_id=u1', 403, 'TG_ERR_SCOPE_NEEDS_CLIENT_KEY'],
    ['solo', '?org_id=o1&user_id=u1', 403, 'TG_ERR_SCOPE_NEEDS_PLATFORM_KEY'],
    ['client', '?org_id=o1&user_id=u1', 403, 'TG_ERR_SCOPE_NEEDS_PLATFORM_KEY'],
    ['solo', '?org_id=o1', 200, null],
    ['client', '', 200, null],
    ['client', '?user_id=u1', 200, null],
    ['platform', '', 200, null],
    ['platform', '?user_id=u1', 200, null],
    ['platform', '?org_id=o1&user_id=u1', 200, null],
  ] as const)('a %s key with "%s" gets %i %s', async (type, query, status, code) => {
    const response = await post(query, send(keys[type]));
    expect(response.status).toBe(status);
    if (code) {
      expect(response.json.error.code).toBe(code);
      expect(response.json.error.message).toMatch(
        code.endsWith('PLATFORM_KEY') ? /platform key/ : /client or platform key/,
      );
    } else {
      expect(response.json.result.tools.map((t) => t.name)).toContain('list_providers');
    }
  });
});

describe('identifiers', () => {
  it.each([
    ['an email with + and @', 'jane+test@example.com', 200],
    ['a UUID', '0b0e7d5e-8c63-4f3b-9d2e-5f1c2a3b4c5d', 200],
    ['256 characters', 'u'.repeat(256), 200],
    ['257 characters', 'u'.repeat(257), 400],
    // Characters are code points (README): 256 emoji are 512 UTF-16 units and still one identifier.
    ['256 emoji', '😀'.repeat(256), 200],
    ['257 emoji', '😀'.repeat(257), 400],
    ['a control character', 'bad\u0001id', 400],
    ['a newline', 'bad\nid', 400],
    ['an empty string', '', 400],
  ])('user_id as %s', async (_label, userId, status) => {
    const response = await post(`?user_id=${encodeURIComponent(userId)}`, { 'x-api-key': keys.client });
    expect(response.status).toBe(status);
    if (status === 400) expect(response.json.error.code).toBe('TG_ERR_IDENTIFIER_INVALID');
  });

  it('resolves org_id without user_id to the solo scope (reports land there)', async () => {
    const call = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'report_problem', arguments: { summary: 'org only' } },
    };
    const response = await post('?org_id=o9', { 'x-api-key': keys.platform }, call);
    expect(response.status).toBe(200);
    const clientId = (await tg.gateway.keys.list()).find((k) => k.clientName === 'platform-co')!.clientId;
    const solo = await tg.gateway.store.reports.listForScope({ clientId, orgId: null, userId: null });
    expect(solo.map((r) => r.summary)).toContain('org only');
  });
});

describe('HTTP edges of /mcp/', () => {
  it('answers GET without an event stream, and DELETE without a session, with 405 and Allow', async () => {
    const get = await fetch(tg.mcpUrl(), {
      headers: { 'x-api-key': keys.client, accept: 'application/json' },
    });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(((await get.json()) as Body).error.code).toBe('TG_ERR_METHOD_NOT_ALLOWED');
    const del = await fetch(tg.mcpUrl(), { method: 'DELETE', headers: { 'x-api-key': keys.client } });
    expect(del.status).toBe(405);
    expect(del.headers.get('allow')).toBe('GET, POST');
  });

  it('refuses a body that is not JSON, or not JSON-RPC', async () => {
    const plain = await fetch(tg.mcpUrl(), {
      method: 'POST',
      headers: { 'x-api-key': keys.client, 'content-type': 'text/plain' },
      body: 'hi',
    });
    expect(plain.status).toBe(415);
    expect(((await plain.json()) as Body).error.code).toBe('TG_ERR_UNSUPPORTED_MEDIA_TYPE');
    const broken = await post('', { 'x-api-key': keys.client }, '{"jsonrpc":');
    expect([broken.status, broken.json.error.code]).toEqual([400, 'TG_ERR_BAD_REQUEST']);
    const notRpc = await post('', { 'x-api-key': keys.client }, { hello: 'world' });
    expect(notRpc.status).toBe(400);
  });

  it('refuses a body whose keys would reach an object prototype, spelled plainly or escaped', async () => {
    const list = JSON.stringify(LIST).slice(0, -1);
    for (const extra of [
      '"__proto__":{"polluted":true}',
      '"\\u005f_proto__":{"polluted":true}',
      '"constructor":{"prototype":{"polluted":true}}',
      '"\\u0063onstructor":{"prototype":{"polluted":true}}',
    ]) {
      const poisoned = await post('', { 'x-api-key': keys.client }, `${list},${extra}}`);
      expect([extra, poisoned.status, poisoned.json.error.code]).toEqual([extra, 400, 'TG_ERR_BAD_REQUEST']);
    }
    // An escape elsewhere is an ordinary body.
    const escaped = await post(
      '',
      { 'x-api-key': keys.client },
      '{"jsonrpc":"2.0","id":"caf\\u00e9","method":"tools/list"}',
    );
    expect([escaped.status, escaped.text]).toEqual([200, expect.stringContaining('"id":"café"')]);
    // A body no plain JSON.parse reads is answered as Fastify's own parser answers it.
    const marked = await post('', { 'x-api-key': keys.client }, `\ufeff${JSON.stringify(LIST)}`);
    expect(marked.status).toBe(200);
    for (const bad of ['', '{"jsonrpc":', '{"constructor":']) {
      const refused = await post('', { 'x-api-key': keys.client }, bad);
      expect([bad, refused.status, refused.json.error.code]).toEqual([bad, 400, 'TG_ERR_BAD_REQUEST']);
    }
  });

  it('refuses a Host or Origin it does not serve (DNS rebinding)', async () => {
    const viaHost = await rawPost({ host: 'attacker.example', 'x-api-key': keys.client });
    expect([viaHost.status, (JSON.parse(viaHost.body) as Body).error.code]).toEqual([
      403,
      'TG_ERR_HOST_NOT_ALLOWED',
    ]);
    const viaOrigin = await post('', { 'x-api-key': keys.client, origin: 'https://attacker.example' });
    expect([viaOrigin.status, viaOrigin.json.error.code]).toEqual([403, 'TG_ERR_ORIGIN_NOT_ALLOWED']);
    const local = await post('', { 'x-api-key': keys.client, origin: tg.url });
    expect(local.status).toBe(200);
  });

  it('accepts a proxy host listed in TOOLGATE_ALLOWED_HOSTS', async () => {
    const proxied = await startGateway({ TOOLGATE_ALLOWED_HOSTS: 'gateway.example.com' });
    try {
      const key = (await proxied.key('solo')).key;
      const response = await rawPost({ host: 'gateway.example.com', 'x-api-key': key }, proxied.url);
      expect(response.status).toBe(200);
    } finally {
      await proxied.close();
    }
  });
});

describe('sessions', () => {
  async function initialize(key: string, query = ''): Promise<string> {
    const response = await fetch(tg.mcpUrl(query), {
      method: 'POST',
      headers: {
        'x-api-key': key,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    expect(response.status).toBe(200);
    return response.headers.get('mcp-session-id')!;
  }

  it("is refused (404) with another client's key or from another scope, and served with another key of the same client", async () => {
    const session = await initialize(keys.client, '?user_id=alice');
    const withSession = (key: string, query: string) =>
      post(query, { 'x-api-key': key, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' });
    expect((await withSession(keys.client, '?user_id=alice')).status).toBe(200);
    const foreign = await withSession(keys.other, '?user_id=alice');
    expect([foreign.status, foreign.json.error.code]).toEqual([404, 'TG_ERR_SESSION_NOT_FOUND']);
    expect((await withSession(keys.client, '?user_id=bob')).status).toBe(404);
    expect((await withSession(keys.client, '')).status).toBe(404);
    const sameClient = (await tg.key('client')).key;
    expect((await withSession(sameClient, '?user_id=alice')).status).toBe(200);
  });

  it('ends on DELETE, after which the id is unknown', async () => {
    const session = await initialize(keys.client);
    const headers = { 'x-api-key': keys.client, 'mcp-session-id': session };
    const del = await fetch(tg.mcpUrl(), { method: 'DELETE', headers });
    expect(del.status).toBe(200);
    expect((await post('', headers)).status).toBe(404);
  });
});

function rawPost(headers: Record<string, string>, base = tg.url): Promise<{ status: number; body: string }> {
  const url = new URL('/mcp/', base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let body = '';
        res.on('data', (chunk: Buffer) => (body += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(LIST));
  });
}
