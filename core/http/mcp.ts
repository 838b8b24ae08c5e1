import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Caller } from '../domain.js';
import { GatewayError } from '../errors.js';
import { McpExchange, type Transport } from '../mcp/index.js';

export interface McpRoutesDeps {
  authenticate: (request: FastifyRequest) => Promise<Caller>;
  guardHost: (request: FastifyRequest) => void;
  /** Asked in order; the first that accepts an exchange serves it. */
  transports: readonly Transport[];
}

/** MCP messages are JSON; Fastify would otherwise hand a text/plain body through as a string. */
function requireJson(request: FastifyRequest): void {
  const type = (request.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new GatewayError('TG_ERR_UNSUPPORTED_MEDIA_TYPE');
}

function methodNotAllowed(allow: string, message: string): GatewayError {
  return new GatewayError('TG_ERR_METHOD_NOT_ALLOWED', message, { allow });
}

/** What a method no transport serves is told: how the endpoint is used instead. */
const UNSERVED: Record<'GET' | 'DELETE', () => GatewayError> = {
  GET: () =>
    methodNotAllowed(
      'POST',
      'GET here opens an event stream: send Accept: text/event-stream (2024-11-05 SSE), or Mcp-Session-Id for a session stream. Requests are POSTed.',
    ),
  DELETE: () => methodNotAllowed('GET, POST', 'DELETE ends a session and needs its Mcp-Session-Id header.'),
};

/**
 * `/mcp/` (and `/mcp`): one URL for every MCP generation, and `/mcp/messages` for the 2024
 * transport's POSTs. An encapsulated route group: its onRequest hook checks the host and
 * authenticates before any body is read, for these routes only. Each exchange goes to the first
 * transport that accepts it (mcp/index.ts holds the order); a new generation adds a transport, not
 * a branch here.
 */
export function mcpRoutes(app: FastifyInstance, deps: McpRoutesDeps): void {
  void app.register((mcp, _options, done) => {
    mcp.addHook('onRequest', async (request) => {
      deps.guardHost(request);
      // Before the body is read: an unauthenticated caller never gets a body parsed.
      request.caller = await deps.authenticate(request);
    });

    const serve =
      (method: 'POST' | 'GET' | 'DELETE', path: McpExchange['path']) =>
      async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
        if (method === 'POST') requireJson(request);
        if (!request.caller) throw new Error('MCP route reached without a caller');
        const exchange = new McpExchange(request, reply, request.caller, path);
        const transport = deps.transports.find((t) => t.accepts(exchange));
        const served =
          method === 'POST'
            ? transport?.post?.(exchange)
            : method === 'GET'
              ? transport?.get?.(exchange)
              : transport?.delete?.(exchange);
        if (served !== undefined) return served;
        if (method === 'POST') throw new GatewayError('TG_ERR_BAD_REQUEST');
        throw UNSERVED[method]();
      };

    for (const url of ['/mcp', '/mcp/']) {
      mcp.post(url, serve('POST', 'endpoint'));
      mcp.get(url, serve('GET', 'endpoint'));
      mcp.delete(url, serve('DELETE', 'endpoint'));
    }
    mcp.post('/mcp/messages', serve('POST', 'messages'));
    done();
  });
}
