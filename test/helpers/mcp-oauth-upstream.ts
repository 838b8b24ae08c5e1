/**
 * An upstream MCP server protected by MCP authorization, on loopback: the official 1.x server SDK
 * (stateless Streamable HTTP) behind a check of the bearer token against a real authorization
 * server (oidc-provider, oauth-server.ts, with Dynamic Client Registration on and the MCP server as
 * a resource indicator). Without a valid token it answers 401 with
 * `WWW-Authenticate: Bearer resource_metadata=...`, and serves that RFC 9728 document.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { startAuthServer, type AuthServer, type AuthServerOptions } from './oauth-server.js';

export interface McpCallRecord {
  /** The account whose token the call carried. */
  account: string;
  tool: string;
  at: number;
}

export interface ProtectedMcpServer {
  /** http://127.0.0.1:<port>/mcp */
  url: string;
  /** The protected-resource metadata URL the 401 names. */
  metadataUrl: string;
  auth: AuthServer;
  /** Tool calls that passed the token check. */
  calls(): McpCallRecord[];
  /** Requests the token check refused. */
  refused(): number;
  close(): Promise<void>;
}

/** Starts the authorization server and the protected MCP server (tools `whoami`, `items`). */
export async function startProtectedMcpServer(
  options: Omit<AuthServerOptions, 'clients' | 'registration' | 'resources'> = {},
): Promise<ProtectedMcpServer> {
  let handle: (req: IncomingMessage, res: ServerResponse) => Promise<void> = () => Promise.resolve();
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      console.error('protected MCP server failed', error);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const url = `${origin}/mcp`;
  const metadataUrl = `${origin}/.well-known/oauth-protected-resource/mcp`;
  const auth = await startAuthServer({ ...options, clients: [], registration: true, resources: [url] });
  const calls: McpCallRecord[] = [];
  let refused = 0;

  /** The account of a live access token issued for this server, if the request carries one. */
  async function account(req: IncomingMessage): Promise<string | undefined> {
    const token = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const found = token ? await auth.provider.AccessToken.find(token) : undefined;
    if (!found || !(await auth.provider.Grant.find(found.grantId))) return undefined;
    return [found.aud].flat().includes(url) ? found.accountId : undefined;
  }

  handle = async (req, res) => {
    const path = new URL(req.url ?? '/', origin).pathname;
    if (req.method === 'GET' && path === '/.well-known/oauth-protected-resource/mcp') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ resource: url, authorization_servers: [auth.issuer], scopes_supported: ['read'] }),
      );
      return;
    }
    if (path !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    const who = await account(req);
    if (who === undefined) {
      refused++;
      req.resume();
      res.writeHead(401, {
        'www-authenticate': `Bearer error="invalid_token", resource_metadata="${metadataUrl}", scope="read"`,
        'content-type': 'application/json',
      });
      res.end(JSON.stringify({ error: 'invalid_token' }));
      return;
    }
    const mcp = new McpServer({ name: 'protected-upstream', version: '1.0.0' });
    mcp.registerTool('whoami', { description: 'The account the token belongs to.' }, () => {
      calls.push({ account: who, tool: 'whoami', at: Date.now() });
      return { content: [{ type: 'text', text: `you are ${who}` }] };
    });
    mcp.registerTool(
      'items',
      { description: "The account's items.", annotations: { readOnlyHint: true } },
      () => {
        calls.push({ account: who, tool: 'items', at: Date.now() });
        return { content: [{ type: 'text', text: JSON.stringify([{ id: 'item-1', owner: who }]) }] };
      },
    );
    // Stateless (no sessionIdGenerator): a server per request, as the SDK's stateless example does.
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  };

  return {
    url,
    metadataUrl,
    auth,
    calls: () => calls.map((c) => ({ ...c })),
    refused: () => refused,
    async close() {
      server.closeAllConnections();
      server.close();
      await Promise.all([once(server, 'close'), auth.close()]);
    },
  };
}
