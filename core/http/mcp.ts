import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors.js';
import type { LegacySseLeg } from '../mcp/legacy-sse.js';
import { classify, type ModernLeg } from '../mcp/modern.js';
import type { StreamableLeg } from '../mcp/streamable.js';
import type { Caller } from '../domain.js';

export interface McpRoutesDeps {
  authenticate: (request: FastifyRequest) => Promise<Caller>;
  guardHost: (request: FastifyRequest) => void;
  modern: ModernLeg;
  streamable: StreamableLeg;
  legacySse: LegacySseLeg;
}

function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error('MCP route reached without a caller');
  return request.caller;
}

function sessionHeader(request: FastifyRequest): string | undefined {
  const value = request.headers['mcp-session-id'];
  return typeof value === 'string' ? value : undefined;
}

/** MCP messages are JSON; Fastify would otherwise hand a text/plain body through as a string. */
function requireJson(request: FastifyRequest): void {
  const type = (request.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new GatewayError('TG_ERR_UNSUPPORTED_MEDIA_TYPE');
}

function methodNotAllowed(allow: string, message: string): GatewayError {
  return new GatewayError('TG_ERR_METHOD_NOT_ALLOWED', message, { allow });
}

/**
 * `/mcp/` (and `/mcp`): one URL for every MCP generation. A POST is routed by the SDK's own
 * classifier: 2026-07-28 requests to the modern leg, everything envelope-less to our 2025-era
 * sessions. A GET is a 2025 session stream (with Mcp-Session-Id) or opens a 2024 SSE session
 * (without). `/mcp/messages` takes the 2024 transport's POSTs.
 */
export function mcpRoutes(app: FastifyInstance, deps: McpRoutesDeps): void {
  app.addHook('onRequest', async (request) => {
    const path = request.url.split('?', 1)[0]!;
    if (path !== '/mcp' && path !== '/mcp/' && path !== '/mcp/messages') return;
    deps.guardHost(request);
    // Before the body is read: an unauthenticated caller never gets a body parsed.
    request.caller = await deps.authenticate(request);
  });

  const post = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    requireJson(request);
    const caller = callerOf(request);
    const route = classify(request);
    if (route.kind === 'modern') return deps.modern.post(request, reply, caller, route);
    if (route.kind === 'reject')
      return deps.modern.forward(deps.modern.sharedHandler, request, reply, caller);
    await deps.streamable.post(request, reply, caller);
  };

  const get = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const caller = callerOf(request);
    const sessionId = sessionHeader(request);
    if (sessionId !== undefined) return deps.streamable.openStream(request, reply, caller, sessionId);
    if ((request.headers.accept ?? '').includes('text/event-stream'))
      return deps.legacySse.open(reply, caller);
    throw methodNotAllowed(
      'POST',
      'GET here opens an event stream: send Accept: text/event-stream (2024-11-05 SSE), or Mcp-Session-Id for a session stream. Requests are POSTed.',
    );
  };

  const remove = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const sessionId = sessionHeader(request);
    if (sessionId === undefined)
      throw methodNotAllowed('GET, POST', 'DELETE ends a session and needs its Mcp-Session-Id header.');
    await deps.streamable.end(reply, callerOf(request), sessionId);
  };

  for (const url of ['/mcp', '/mcp/']) {
    app.post(url, post);
    app.get(url, get);
    app.delete(url, remove);
  }

  app.post('/mcp/messages', async (request, reply) => {
    requireJson(request);
    const sessionId = (request.query as Record<string, unknown>).sessionId;
    if (typeof sessionId !== 'string')
      throw new GatewayError(
        'TG_ERR_SESSION_REQUIRED',
        'POST /mcp/messages needs the sessionId the SSE endpoint event gave.',
      );
    await deps.legacySse.post(request, reply, callerOf(request), sessionId);
  });
}
