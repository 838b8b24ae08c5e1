/**
 * Upstream MCP servers on loopback, for the providers whose tools come from one (issue 17): the
 * reference server `@modelcontextprotocol/server-everything` (a 2025-era Streamable HTTP server with
 * sessions, run as its own process), and a 2026-07-28 stateless server built with the v2 server
 * SDK's createMcpHandler, whose tools and answers each test chooses per caller credential.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { createMcpHandler, Server, type CallToolResult, type Tool } from '@modelcontextprotocol/server';
import { freePort } from './ports.js';

export interface RunningServer {
  /** http://127.0.0.1:<port>/mcp */
  url: string;
  close(): Promise<void>;
}

/**
 * Starts server-everything on a free loopback port: its Streamable HTTP transport (2025-era
 * sessions, at /mcp), or its 2024-11-05 HTTP+SSE one (at /sse).
 */
export async function startEverything(
  transport: 'streamableHttp' | 'sse' = 'streamableHttp',
): Promise<RunningServer> {
  const port = await freePort();
  const bin = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const child = spawn(process.execPath, [bin, transport], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let said = '';
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`server-everything exited (${code}): ${said}`)));
    child.stderr.on('data', (chunk: Buffer) => {
      said += chunk.toString();
      if (/(listening|running) on port/.test(said)) resolve();
    });
  });
  return {
    url: `http://127.0.0.1:${port}/${transport === 'sse' ? 'sse' : 'mcp'}`,
    async close() {
      if (child.exitCode !== null) return;
      child.kill();
      await once(child, 'exit');
    },
  };
}

/** What one caller of the modern upstream is served: the credential header it sent decides. */
export interface UpstreamBehaviour {
  /** The tools listed to a caller with this credential; undefined: answered 401. */
  tools(credential: string | undefined): Tool[] | undefined;
  call(name: string, args: Record<string, unknown>, credential: string | undefined): Promise<CallToolResult>;
}

export interface ModernUpstream extends RunningServer {
  /** Every tools/call received: the tool and the credential that came with it. */
  calls: { tool: string; credential: string | undefined }[];
  /** Sends notifications/tools/list_changed on every open listen stream. */
  toolsChanged(): void;
}

/**
 * A 2026-07-28 stateless MCP server (createMcpHandler, no 2025 fallback) on loopback; the
 * credential is the `header` request header (lower case).
 */
export async function startModernUpstream(
  header: string,
  behaviour: UpstreamBehaviour,
): Promise<ModernUpstream> {
  const calls: ModernUpstream['calls'] = [];
  const handler = createMcpHandler(
    (ctx) => {
      const credential = ctx.authInfo?.token || undefined;
      const server = new Server(
        { name: 'loopback-upstream', version: '1.0.0' },
        { capabilities: { tools: { listChanged: true } } },
      );
      server.setRequestHandler('tools/list', () => ({ tools: behaviour.tools(credential) ?? [] }));
      server.setRequestHandler('tools/call', (request) => {
        calls.push({ tool: request.params.name, credential });
        return behaviour.call(request.params.name, request.params.arguments ?? {}, credential);
      });
      return server;
    },
    { legacy: 'reject' },
  );
  const http = createServer((req, res) => {
    void serve(req, res).catch(() => res.destroy());
  });
  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const credential = req.headers[header];
    const value = typeof credential === 'string' ? credential : undefined;
    if (behaviour.tools(value) === undefined) {
      res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_token"}');
      return;
    }
    const headers = new Headers();
    for (const [name, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(name, v);
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    const response = await handler.fetch(
      new Request(`http://upstream${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
        signal: abort.signal,
        ...(req.method === 'POST' ? { body: Buffer.concat(chunks) } : {}),
      }),
      { authInfo: { token: value ?? '', clientId: 'gateway', scopes: [] } },
    );
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (!response.body) return void res.end();
    for await (const chunk of response.body) res.write(chunk);
    res.end();
  }
  http.listen(0, '127.0.0.1');
  await once(http, 'listening');
  const { port } = http.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    calls,
    toolsChanged: () => handler.notify.toolsChanged(),
    async close() {
      await handler.close();
      http.closeAllConnections();
      http.close();
      await once(http, 'close');
    },
  };
}

/** A tool as an upstream lists it, taking `properties` (none required). */
export function upstreamTool(name: string, extra: Partial<Tool> = {}): Tool {
  return {
    name,
    description: `The ${name} tool.`,
    inputSchema: { type: 'object', properties: {} },
    ...extra,
  };
}
