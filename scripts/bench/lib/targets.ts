/**
 * What the load generator sends to each variant. Every variant asks for the same upstream request
 * (GET /items/42?fields=name,status with an API key header); they differ in what stands between.
 * The MCP requests are shaped exactly as @modelcontextprotocol/client 2.x sends them.
 */
import type { Dispatcher, Pool } from 'undici';
import { checkCallResult, expectStatus, pool, roundRobin, type Target } from './load.js';
import type { GatewayChild } from './proc.js';
import { StaticReadConnection, type StaticReadAnswer } from './static-read.js';

export const MODERN = '2026-07-28';
export const LEGACY = '2025-11-25';
export const CALL_ARGS = { id: '42', fields: 'name,status' };
/** The credential the bench connection holds, and the header the upstream receives it in. */
export const UPSTREAM_KEY = 'bench-secret';

const ENVELOPE = JSON.stringify({
  'io.modelcontextprotocol/protocolVersion': MODERN,
  'io.modelcontextprotocol/clientInfo': { name: 'toolgate-bench', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
});

/** A 2026-07-28 request body: params carry the per-request `_meta` envelope. */
export function modernBody(id: number | string, method: string, params: Record<string, unknown>): string {
  const fields = JSON.stringify(params).slice(1, -1);
  return `{"method":"${method}","params":{${fields}${fields ? ',' : ''}"_meta":${ENVELOPE}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
}

/** The headers the v2 client derives from a modern request (SEP-2243): version, method, name. */
export function modernHeaders(key: string, method: string, name?: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': MODERN,
    'mcp-method': method,
    ...(name !== undefined ? { 'mcp-name': name } : {}),
    'x-api-key': key,
  };
}

export function legacyBody(id: number | string, method: string, params?: Record<string, unknown>): string {
  return `{"method":"${method}",${params ? `"params":${JSON.stringify(params)},` : ''}"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
}

const CALL_PARAMS = { name: 'bench_get_item', arguments: CALL_ARGS };

/** Opens a 2025-era session the way the v2 client does: initialize, then notifications/initialized. */
export async function openLegacySession(http: Dispatcher, path: string, key: string): Promise<string> {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  const init = await http.request({
    method: 'POST',
    path,
    headers: { ...headers, 'x-api-key': key },
    body: legacyBody(0, 'initialize', {
      protocolVersion: LEGACY,
      capabilities: {},
      clientInfo: { name: 'toolgate-bench', version: '1.0.0' },
    }),
  });
  await expectStatus(init, 200, 'initialize');
  const session = init.headers['mcp-session-id'];
  if (typeof session !== 'string') throw new Error('initialize answered without Mcp-Session-Id');
  const initialized = await http.request({
    method: 'POST',
    path,
    headers: { ...headers, 'x-api-key': key, 'mcp-session-id': session, 'mcp-protocol-version': LEGACY },
    body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  });
  await expectStatus(initialized, 202, 'notifications/initialized');
  return session;
}

export function legacyHeaders(key: string, session: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': session,
    'mcp-protocol-version': LEGACY,
    'x-api-key': key,
  };
}

/** The same request sent straight to the upstream: the baseline for added latency. */
export function directTarget(upstreamUrl: string, upstreamPid: number, maxClients: number): Target {
  const http = pool(upstreamUrl, maxClients);
  const path = `/items/${CALL_ARGS.id}?fields=${encodeURIComponent(CALL_ARGS.fields)}`;
  const headers = { accept: 'application/json', 'x-api-key': UPSTREAM_KEY };
  return {
    name: 'direct',
    pids: [upstreamPid],
    client: () =>
      Promise.resolve(async () => {
        const response = await http.request({ method: 'GET', path, headers });
        checkCallResult(await expectStatus(response, 200, 'direct'), 'direct');
      }),
    close: () => http.close(),
  };
}

/** One tools/call as the load generator sends it (`seq`: the request's number): URL path, headers, body. */
export type CallRequest = (seq: number) => { path: string; headers: Record<string, string>; body: string };

/**
 * The 2026-07-28 tools/call as the v2 client sends it, with its key; given `scopes` (query strings
 * such as `?user_id=u1`), consecutive requests go to each scope in turn.
 */
export function modernCallRequest(key: string, scopes: readonly string[] = ['']): CallRequest {
  const headers = modernHeaders(key, 'tools/call', CALL_PARAMS.name);
  const paths = scopes.map((query) => `/mcp/${query}`);
  return (seq) => ({
    path: paths[seq % paths.length]!,
    headers,
    body: modernBody(seq, 'tools/call', CALL_PARAMS),
  });
}

/** The 2025-era tools/call of a session, as the v2 client sends it. */
export function legacyCallRequest(key: string, session: string): CallRequest {
  const headers = legacyHeaders(key, session);
  return (seq) => ({ path: '/mcp/', headers, body: legacyBody(seq, 'tools/call', CALL_PARAMS) });
}

/**
 * The bare Fastify + undici proxy (floor.ts), sent `request`: the very request (URL, headers, body)
 * the Toolgate variant it is compared with is sent, so that what the floor reads of it costs the
 * floor what it costs Toolgate (issue 19: the same HTTP in). 2026-07-28's Mcp-* headers, key and
 * `_meta` envelope cost a bare Fastify server about 20k instructions per call, a tenth of its own
 * (callgrind; scripts/bench/instructions.ts --floor), which the floor once was not sent.
 */
export function floorTarget(url: string, pid: number, maxClients: number, request: CallRequest): Target {
  const http = pool(url, maxClients);
  let seq = 0;
  return {
    name: 'floor',
    pids: [pid],
    client: () =>
      Promise.resolve(async () => {
        const response = await http.request({ method: 'POST', ...request(++seq) });
        checkCallResult(await expectStatus(response, 200, 'floor'), 'floor');
      }),
    close: () => http.close(),
  };
}

/**
 * Toolgate, 2026-07-28: stateless POSTs, each with its `_meta` envelope and Mcp-* headers. Given
 * several gateways of one deployment, consecutive requests go to each in turn; given `scopes`
 * (query strings such as `?user_id=u1`), consecutive requests go to each scope in turn.
 */
export function modernTarget(
  gateways: readonly GatewayChild[],
  key: string,
  maxClients: number,
  scopes: readonly string[] = [''],
): Target {
  const http = roundRobin(
    gateways.map((g) => g.ready.url),
    maxClients,
  );
  const request = modernCallRequest(key, scopes);
  let seq = 0;
  return {
    name: `toolgate ${MODERN}`,
    pids: gateways.map((g) => g.pid),
    client: () =>
      Promise.resolve(async () => {
        const response = await http.request({ method: 'POST', ...request(++seq) });
        checkCallResult(await expectStatus(response, 200, 'toolgate 2026'), 'toolgate 2026');
      }),
    close: () => http.close(),
  };
}

/**
 * Toolgate, 2025-era Streamable HTTP: each virtual client initializes its session once. Given
 * several gateways of one deployment, consecutive requests go to each in turn, the session's
 * initialize and calls alike (no sticky sessions).
 */
export function legacyTarget(gateways: readonly GatewayChild[], key: string, maxClients: number): Target {
  const http = roundRobin(
    gateways.map((g) => g.ready.url),
    maxClients,
  );
  let seq = 0;
  return {
    name: 'toolgate 2025 session',
    pids: gateways.map((g) => g.pid),
    async client() {
      const request = legacyCallRequest(key, await openLegacySession(http, '/mcp/', key));
      return async () => {
        const response = await http.request({ method: 'POST', ...request(++seq) });
        checkCallResult(await expectStatus(response, 200, 'toolgate 2025'), 'toolgate 2025');
      };
    },
    close: () => http.close(),
  };
}

/**
 * tools/list of `expectTools` tools at one client, over a {@link StaticReadConnection} (a 2025
 * session opened through undici first): the load generator allocates next to nothing per answer.
 * The first answer is decoded and its tools counted; the others' bytes are counted and dropped.
 */
export function listTarget(
  url: string,
  pid: number,
  key: string,
  query: string,
  transport: 'modern' | 'legacy',
  expectTools: number,
): Target {
  // The full list, as a client asking for every tool gets it (a scope this large defaults to the compact one).
  const path = `/mcp/${query}${query.includes('?') ? '&' : '?'}tools=full`;
  const connections: StaticReadConnection[] = [];
  let seq = 0;
  let checked = false;
  const check = (answer: StaticReadAnswer): void => {
    const text = answer.body?.toString('utf8') ?? '';
    if (answer.status !== 200) throw new Error(`tools/list: HTTP ${answer.status} ${text.slice(0, 300)}`);
    if (checked) return;
    const tools = (JSON.parse(text) as { result?: { tools?: unknown[] } }).result?.tools?.length;
    if (tools !== expectTools)
      throw new Error(`tools/list ${query}: ${tools} tools, expected ${expectTools}`);
    checked = true;
  };
  return {
    name: `tools/list ${expectTools} ${transport}`,
    pids: [pid],
    async client() {
      let headers = modernHeaders(key, 'tools/list');
      let body = (id: number): string => modernBody(id, 'tools/list', {});
      if (transport === 'legacy') {
        const http = pool(url, 1);
        headers = legacyHeaders(key, await openLegacySession(http, path, key).finally(() => http.close()));
        body = (id) => legacyBody(id, 'tools/list');
      }
      const connection = await StaticReadConnection.open(url);
      connections.push(connection);
      return async () => {
        check(await connection.post(path, headers, body(++seq), !checked));
      };
    },
    close: async () => {
      await Promise.all(connections.map((connection) => connection.close()));
    },
  };
}

/** One MCP tools/call over 2026-07-28 outside the measurement (setup: connect_provider). */
export async function modernCall(
  http: Pool,
  key: string,
  query: string,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  const response = await http.request({
    method: 'POST',
    path: `/mcp/${query}`,
    headers: modernHeaders(key, 'tools/call', name),
    body: modernBody(`setup-${name}`, 'tools/call', { name, arguments: args }),
  });
  const text = await expectStatus(response, 200, name);
  if (text.includes('"isError":true') || text.includes('"error":')) throw new Error(`${name}: ${text}`);
  return text;
}

/** The query strings of `count` users of a client key (one scope, the key's own, when undefined). */
export function scopeQueries(count: number | undefined): string[] {
  return count === undefined ? [''] : Array.from({ length: count }, (_, i) => `?user_id=s${i}`);
}

/**
 * Connects the bench provider for `count` users of a client key (`user_id=s0`, `s1`, ...; 32 calls
 * at a time), or for the key's own scope when `count` is undefined; returns the scopes' query
 * strings, for {@link modernCallRequest}.
 */
export async function connectScopes(url: string, key: string, count?: number): Promise<string[]> {
  const scopes = scopeQueries(count);
  const setup = pool(url, 32);
  try {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < scopes.length) {
        await modernCall(setup, key, scopes[next++]!, 'connect_provider', {
          provider: 'bench',
          credentials: { api_key: UPSTREAM_KEY },
        });
      }
    };
    await Promise.all(Array.from({ length: 32 }, worker));
  } finally {
    await setup.close();
  }
  return scopes;
}

/** tools/list over 2026-07-28 outside the measurement: the tools of every page, in order. */
export async function modernList(http: Pool, key: string, query: string): Promise<Record<string, unknown>[]> {
  const tools: Record<string, unknown>[] = [];
  let cursor: string | undefined;
  do {
    const response = await http.request({
      method: 'POST',
      path: `/mcp/${query}`,
      headers: modernHeaders(key, 'tools/list'),
      body: modernBody(`list-${tools.length}`, 'tools/list', cursor === undefined ? {} : { cursor }),
    });
    const text = await expectStatus(response, 200, 'tools/list');
    const page = (JSON.parse(text) as { result?: { tools?: Record<string, unknown>[]; nextCursor?: string } })
      .result;
    if (!page?.tools) throw new Error(`tools/list ${query}: ${text.slice(0, 300)}`);
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}
