/**
 * The npm peer, @ivotoby/openapi-mcp-server, run from a scratch install outside the repo (it is not
 * a dependency of Toolgate): its Streamable HTTP transport against the same upstream, through a
 * one-operation OpenAPI document. Its transport answers a tools/call POST with 202 and delivers
 * the result on the session's GET stream, so each virtual client holds a session and its stream,
 * and a call's latency runs from the POST to the result's arrival on the stream.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Pool } from 'undici';
import { checkCallResult, expectStatus, pool, type Call, type Target } from './load.js';
import { CALL_ARGS, LEGACY, legacyBody, UPSTREAM_KEY } from './targets.js';

export const DEFAULT_PEER_DIR = '/tmp/bench-peer';
const PACKAGE = '@ivotoby/openapi-mcp-server';

export interface PeerInstall {
  bin: string;
  version: string;
}

/** The peer's CLI in `dir` (BENCH_PEER_DIR, default /tmp/bench-peer), or undefined when not installed. */
export function findPeer(dir: string): PeerInstall | undefined {
  const root = join(dir, 'node_modules', ...PACKAGE.split('/'));
  const bin = join(root, 'bin', 'mcp-server.js');
  if (!existsSync(bin)) return undefined;
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
  return { bin, version };
}

/** The upstream's one operation as OpenAPI, for the peer to compile into a tool. */
export function writePeerDocument(dir: string): string {
  const file = join(dir, 'peer-openapi.json');
  const document = {
    openapi: '3.0.3',
    info: { title: 'Bench upstream', version: '1.0.0' },
    paths: {
      '/items/{id}': {
        get: {
          operationId: 'getItem',
          summary: 'Get one item',
          description: 'Returns one item by id.',
          parameters: [
            { name: 'id', in: 'path', required: true, schema: { type: 'string', pattern: '^[0-9]+$' } },
            { name: 'fields', in: 'query', required: false, schema: { type: 'string' } },
          ],
          responses: {
            '200': {
              description: 'The item',
              content: { 'application/json': { schema: { type: 'object' } } },
            },
          },
        },
      },
    },
  };
  writeFileSync(file, JSON.stringify(document));
  return file;
}

/** The peer's command line: HTTP transport, quiet, the upstream's key as a static header. */
export function peerArgs(bin: string, document: string, upstreamUrl: string, port: number): string[] {
  return [
    bin,
    '--transport',
    'http',
    '--host',
    '127.0.0.1',
    '--port',
    String(port),
    '--api-base-url',
    upstreamUrl,
    '--openapi-spec',
    document,
    '--headers',
    `X-Api-Key:${UPSTREAM_KEY}`,
    '--verbose',
    'false',
  ];
}

interface Pending {
  resolve: (text: string) => void;
  reject: (error: Error) => void;
}

/** Reads a session's SSE stream and hands each `data:` message to the call waiting for its id. */
async function readStream(body: AsyncIterable<Buffer>, pending: Map<number, Pending>): Promise<void> {
  let buffer = '';
  for await (const chunk of body) {
    buffer += chunk.toString('utf8');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) !== -1) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = event
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trimStart())
        .join('\n');
      if (data === '') continue;
      const id = (JSON.parse(data) as { id?: unknown }).id;
      if (typeof id !== 'number') continue;
      const waiter = pending.get(id);
      pending.delete(id);
      waiter?.resolve(data);
    }
  }
}

export async function peerToolName(url: string): Promise<string> {
  const http = pool(url, 1);
  try {
    const session = await openPeerSession(http);
    const response = await http.request({
      method: 'POST',
      path: '/mcp',
      headers: peerHeaders(session),
      body: legacyBody(1, 'tools/list'),
    });
    const text = await expectStatus(response, 200, 'peer tools/list');
    const tools = (JSON.parse(text) as { result: { tools: { name: string }[] } }).result.tools;
    const tool = tools.find((t) => /item/i.test(t.name));
    if (!tool) throw new Error(`the peer offers no item tool: ${tools.map((t) => t.name).join(', ')}`);
    return tool.name;
  } finally {
    await http.close();
  }
}

function peerHeaders(session: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-session-id': session,
    'mcp-protocol-version': LEGACY,
  };
}

async function openPeerSession(http: Pool): Promise<string> {
  const init = await http.request({
    method: 'POST',
    path: '/mcp',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: legacyBody(0, 'initialize', {
      protocolVersion: LEGACY,
      capabilities: {},
      clientInfo: { name: 'toolgate-bench', version: '1.0.0' },
    }),
  });
  await expectStatus(init, 200, 'peer initialize');
  const session = init.headers['mcp-session-id'];
  if (typeof session !== 'string') throw new Error('the peer answered initialize without Mcp-Session-Id');
  const initialized = await http.request({
    method: 'POST',
    path: '/mcp',
    headers: peerHeaders(session),
    body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
  });
  await expectStatus(initialized, 202, 'peer notifications/initialized');
  return session;
}

export function peerTarget(url: string, pid: number, toolName: string, maxClients: number): Target {
  const http = pool(url, maxClients);
  const streams = pool(url, maxClients);
  // The peer maps a response to its session by request id across all sessions: ids stay unique.
  let seq = 1_000;
  const params = { name: toolName, arguments: CALL_ARGS };
  return {
    name: 'peer',
    pids: [pid],
    async client(): Promise<Call> {
      const session = await openPeerSession(http);
      const pending = new Map<number, Pending>();
      // The peer sends the stream's headers with its first event only, so the GET is not awaited:
      // pings are POSTed until one's answer arrives on the stream, which proves it is registered.
      streams
        .request({
          method: 'GET',
          path: '/mcp',
          headers: { accept: 'text/event-stream', 'mcp-session-id': session },
          headersTimeout: 0,
          bodyTimeout: 0,
        })
        .then((stream) => {
          if (stream.statusCode !== 200) throw new Error(`peer GET stream: HTTP ${stream.statusCode}`);
          return readStream(stream.body, pending);
        })
        .catch((error: unknown) => {
          for (const waiter of pending.values()) waiter.reject(error as Error);
        });
      for (let attempt = 0; ; attempt++) {
        const id = ++seq;
        const answered = new Promise<string>((resolve, reject) => pending.set(id, { resolve, reject }));
        const response = await http.request({
          method: 'POST',
          path: '/mcp',
          headers: peerHeaders(session),
          body: legacyBody(id, 'ping'),
        });
        await expectStatus(response, 202, 'peer ping');
        const timeout = new Promise<undefined>((resolve) =>
          setTimeout(() => resolve(undefined), 100 * (attempt + 1)),
        );
        if ((await Promise.race([answered, timeout])) !== undefined) break;
        pending.delete(id);
        if (attempt === 20) throw new Error('the peer never answered on its GET stream');
      }
      const headers = peerHeaders(session);
      return async () => {
        const id = ++seq;
        const answered = new Promise<string>((resolve, reject) => pending.set(id, { resolve, reject }));
        const response = await http.request({
          method: 'POST',
          path: '/mcp',
          headers,
          body: legacyBody(id, 'tools/call', params),
        });
        await expectStatus(response, 202, 'peer tools/call');
        checkCallResult(await answered, 'peer');
      };
    },
    async close() {
      await Promise.all([http.destroy(), streams.destroy()]);
    },
  };
}
