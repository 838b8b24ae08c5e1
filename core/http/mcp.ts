import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Awaitable } from '../awaitable.js';
import type { Caller } from '../domain.js';
import { GatewayError } from '../errors.js';
import { McpExchange, type Transport } from '../mcp/index.js';
import { mcpMethodLabel, type Telemetry } from '../telemetry/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The protocol generation whose transport took an /mcp request: its metric's label. */
    mcpGeneration: string | null;
  }
}

export interface McpRoutesDeps {
  /** The caller, or a rejection saying why the request is refused (never a synchronous throw). */
  authenticate: (request: FastifyRequest) => Awaitable<Caller>;
  guardHost: (request: FastifyRequest) => void;
  /** Asked in order; the first that accepts an exchange serves it. */
  transports: readonly Transport[];
  /** Counts every request by method, generation and status; traces each served one. */
  telemetry: Telemetry;
}

/** MCP messages are JSON; Fastify would otherwise hand a text/plain body through as a string. */
function requireJson(request: FastifyRequest): void {
  const header = request.headers['content-type'];
  // What MCP clients send, told apart without splitting, trimming and lower-casing it.
  if (header === 'application/json') return;
  const type = (header ?? '').split(';', 1)[0]!.trim().toLowerCase();
  if (type !== 'application/json') throw new GatewayError('TG_ERR_UNSUPPORTED_MEDIA_TYPE');
}

function methodNotAllowed(allow: string, message: string): GatewayError {
  return new GatewayError('TG_ERR_METHOD_NOT_ALLOWED', message, { allow });
}

const HANDLERS = { POST: 'post', GET: 'get', DELETE: 'delete' } as const;

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
 * The JSON-RPC method a request names, for its labels: the body's (one message; `batch` for
 * several), else the Mcp-Method header (a request refused before its body was read), else the
 * HTTP method of a GET or DELETE (a stream, a session's end).
 */
function methodOf(request: FastifyRequest): string {
  const body = request.body;
  if (Array.isArray(body)) return 'batch';
  if (typeof body === 'object' && body !== null) return mcpMethodLabel((body as { method?: unknown }).method);
  const header = request.headers['mcp-method'];
  if (header !== undefined) return mcpMethodLabel(header);
  return request.method;
}

/** Where a 2026-07-28 request carries its trace context (`params._meta`), else its headers. */
function traceCarrier(request: FastifyRequest): Readonly<Record<string, unknown>> {
  const meta = (request.body as { params?: { _meta?: unknown } } | undefined)?.params?._meta;
  return typeof meta === 'object' && meta !== null && 'traceparent' in meta ? meta : request.headers;
}

/**
 * `/mcp/` (and `/mcp`): one URL for every MCP generation, and `/mcp/messages` for the 2024
 * transport's POSTs. An encapsulated route group: its onRequest hook checks the host and
 * authenticates before any body is read, for these routes only. Each exchange goes to the first
 * transport that accepts it (mcp/index.ts holds the order); a new generation adds a transport, not
 * a branch here.
 */
export function mcpRoutes(app: FastifyInstance, deps: McpRoutesDeps): void {
  const { telemetry } = deps;
  void app.register((mcp, _options, done) => {
    mcp.decorateRequest('mcpGeneration', null);
    // Every answer, refusals before a transport took the request included (`none`); a stream is
    // counted when it ends.
    mcp.addHook('onResponse', (request, reply, next) => {
      telemetry.metrics.mcpRequest(methodOf(request), request.mcpGeneration ?? 'none', reply.statusCode);
      next();
    });
    // Before the body is read: an unauthenticated caller never gets a body parsed. A callback hook:
    // an async one is a promise more per request, which Fastify then awaits.
    mcp.addHook('onRequest', (request, _reply, done) => {
      let caller: Awaitable<Caller>;
      try {
        deps.guardHost(request);
        caller = deps.authenticate(request);
      } catch (error) {
        done(error as Error);
        return;
      }
      // A known key (nearly every request) is verified at once: the hook ends without a promise.
      if (caller instanceof Promise) {
        caller.then((verified) => {
          request.caller = verified;
          done();
        }, done);
        return;
      }
      request.caller = caller;
      done();
    });

    const serve =
      (method: 'POST' | 'GET' | 'DELETE', path: McpExchange['path']) =>
      async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
        if (method === 'POST') requireJson(request);
        if (!request.caller) throw new Error('MCP route reached without a caller');
        const exchange = new McpExchange(request, reply, request.caller, path);
        const transport = deps.transports.find((t) => t.accepts(exchange));
        const handler = HANDLERS[method];
        if (!transport?.[handler]) {
          if (method === 'POST') throw new GatewayError('TG_ERR_BAD_REQUEST');
          throw UNSERVED[method]();
        }
        request.mcpGeneration = transport.generation;
        return await telemetry.mcpRequest(
          methodOf(request),
          transport.generation,
          traceCarrier(request),
          () => transport[handler]!(exchange),
          () => reply.statusCode,
        );
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
