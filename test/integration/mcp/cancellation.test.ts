import { once } from 'node:events';
import { Agent, createServer, request, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postMcp, type TestGateway, startGateway } from '../../helpers/gateway.js';
import { PETSHOP_MANIFESTS, petshopEnv } from '../../helpers/petshop.js';

const PETSHOP_KEY = 'ps_cancel1';
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'toolgate-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A 2026-07-28 tools/call as the v2 client sends it: the envelope in `_meta`, the Mcp-* headers. */
function modernCall(key: string, name: string, args: Record<string, unknown>) {
  return {
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': name,
      'x-api-key': key,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name, arguments: args, _meta: META },
    }),
  };
}

/**
 * Fails the test when `event` does not come within `ms`: a bound on how long a cancellation may
 * take (the provider call's own deadline, 30 s, would end it much later), not a wait.
 */
function within<T>(event: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  return Promise.race([event, late]).finally(() => clearTimeout(timer));
}

// The Pet Shop API: answers the key check (GET /me) and pet listings, never answers a pet lookup.
let api: Server;
const hanging: IncomingMessage[] = [];
const arrived: ((req: IncomingMessage) => void)[] = [];
let tg: TestGateway;
let key: string;

beforeAll(async () => {
  api = createServer((req, res) => {
    if (req.url?.startsWith('/pets/')) {
      hanging.push(req);
      arrived.shift()?.(req);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ email: 'ana@example.com', items: [] }));
  });
  api.listen(0, '127.0.0.1');
  await once(api, 'listening');
  const { port } = api.address() as { port: number };
  tg = await startGateway(petshopEnv(`http://127.0.0.1:${port}`), { manifestFiles: PETSHOP_MANIFESTS });
  key = (await tg.key('solo')).key;
  const connected = modernCall(key, 'connect_provider', {
    provider: 'petshop',
    credentials: { api_key: PETSHOP_KEY },
  });
  const response = await postMcp(tg.mcpUrl(), key, connected.body, connected.headers);
  expect(await response.text()).toContain('Connected Pet Shop');
});

afterAll(async () => {
  await tg?.close();
  api?.closeAllConnections();
  api?.close();
});

describe('a 2026-07-28 tools/call whose client goes away', () => {
  it('cancels the provider request, on a fresh connection and on one that served calls before', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      // A call that completes first, so the second goes out on a connection that served one already.
      const listed = modernCall(key, 'petshop_list_pets', {});
      const first = await new Promise<string>((resolve, reject) => {
        const req = request(tg.mcpUrl(), { method: 'POST', headers: listed.headers, agent }, (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve(text));
        });
        req.on('error', reject);
        req.end(listed.body);
      });
      expect(JSON.parse(first)).toMatchObject({ id: 1, result: { content: [{ type: 'text' }] } });

      for (const via of [agent, undefined]) {
        const lookup = modernCall(key, 'petshop_get_pet', { petId: 'p1' });
        const reached = new Promise<IncomingMessage>((resolve) => arrived.push(resolve));
        const client = request(tg.mcpUrl(), {
          method: 'POST',
          headers: lookup.headers,
          ...(via ? { agent: via } : {}),
        });
        client.on('error', () => undefined);
        client.end(lookup.body);
        const upstream = await reached;
        // The gateway's abort reaches the API as a request cut short ('aborted', then 'close').
        upstream.on('error', () => undefined);
        const cancelled = new Promise((resolve) => upstream.once('close', resolve));
        client.destroy();
        await within(cancelled, 10_000, 'the provider request was not cancelled');
        expect(upstream.destroyed).toBe(true);
      }
      expect(hanging).toHaveLength(2);
    } finally {
      agent.destroy();
    }
  });
});
