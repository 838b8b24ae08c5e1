import {
  CLIENT_CAPABILITIES_META_KEY,
  createMcpHandler,
  ProtocolError,
  Server,
  type AuthInfo,
  type InboundClassificationOutcome,
  type McpHttpHandler,
  type McpRequestContext,
} from '@modelcontextprotocol/server';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/server/validators/ajv';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Caller } from '../../domain.js';
import type { ToolService } from '../../tools/service.js';
import type { CallContext } from '../../tools/types.js';
import { ToolCallError } from '../../tools/types.js';
import { standardHeadersAgree } from '../classify.js';
import { dispatch, LEAN_METHODS } from '../dispatch.js';
import {
  declaresUrlElicitation,
  INSTRUCTIONS,
  MODERN_CAPABILITIES,
  RPC,
  sendRpc,
  SERVER_INFO,
} from '../protocol.js';
import type { StreamHub } from '../streams.js';
import type { McpExchange, Transport } from './transport.js';

export interface ModernDeps {
  tools: ToolService;
  hub: StreamHub;
  onError: (error: unknown) => void;
}

/**
 * A signal that aborts when the client goes away before its response was sent. Aborting after a
 * normal finish would cost a DOMException per request for nothing.
 */
function abortOnDisconnect(reply: FastifyReply): AbortController {
  const abort = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  return abort;
}

/** Each client connection's {@link disconnectSignal}. */
const connectionSignals = new WeakMap<Socket, AbortSignal>();

/**
 * A signal that aborts when the client's connection closes: what cancels a lean tools/call whose
 * client went away. One per connection, not per request (an AbortController and a listener per
 * call cost about 3 µs of its CPU; scripts/bench); an HTTP/1.1 connection carries one request at a
 * time, so its closing mid-request is that request's client going away, and its closing later
 * aborts a signal no finished request listens to any more.
 */
function disconnectSignal(reply: FastifyReply): AbortSignal {
  const socket = reply.raw.socket;
  if (!socket) return abortOnDisconnect(reply).signal;
  let signal = connectionSignals.get(socket);
  if (!signal) {
    const abort = new AbortController();
    socket.once('close', () => abort.abort());
    signal = abort.signal;
    connectionSignals.set(socket, signal);
  }
  return signal;
}

// How the SDK words the refusals it reports through `onerror` as plain Errors (its ladder's cells
// and its media-type check); its other refusals are ProtocolErrors.
const SDK_REFUSAL = /^(Rejected inbound request|Rejected 2025-era request|Unsupported Media Type)/;

/**
 * Whether an error the SDK reported is a request it refused as the client's mistake (headers,
 * envelope, JSON-RPC shape, media type, revision, client capability) rather than a fault of ours:
 * it reports both through one `onerror`, and a key holder must not be able to flood the error log
 * with bad requests (issue 18). The refusal is logged at info with its request (`forward`).
 * test/integration/mcp/conformance-2026.test.ts pins the SDK's wording.
 */
function isClientMistake(error: unknown): boolean {
  if (error instanceof ProtocolError) return error.code !== RPC.INTERNAL_ERROR;
  return error instanceof Error && SDK_REFUSAL.test(error.message);
}

/**
 * What a 2026-07-28 tools/call may use beyond its abort signal: a client whose envelope (`_meta`)
 * declares URL elicitation may be answered `input_required` with a URL for the user
 * (connect_provider's link), and its retry carries the answers (`inputResponses`).
 */
function callContext(envelope: unknown, responses: unknown, signal: AbortSignal): CallContext {
  const capabilities = (envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY];
  if (!declaresUrlElicitation(capabilities)) return { signal };
  return {
    signal,
    urlInput: {
      responses:
        typeof responses === 'object' && responses !== null && !Array.isArray(responses)
          ? (responses as Record<string, unknown>)
          : undefined,
    },
  };
}

function callerOf(authInfo: AuthInfo | undefined): Caller {
  const caller = authInfo?.extra?.caller as Caller | undefined;
  if (!caller) throw new Error('Modern MCP request reached the server factory without a caller');
  return caller;
}

/**
 * The 2026-07-28 transport, built on the SDK's createMcpHandler with a per-request server factory.
 * tools/list and tools/call (and ping) take the lean path once the SDK's classifier has validated
 * the request envelope and headers; everything else (server/discover, error answers, listen
 * streams) is the SDK's. The SDK's `notify` reaches every listen stream of a handler with no notion
 * of scope, so `subscriptions/listen` is served by a handler per scope, kept while it has streams.
 */
export class ModernTransport implements Transport {
  readonly generation = '2026-07-28';
  private readonly validator = new AjvJsonSchemaValidator();
  /** The handler serving every modern request but listen streams. */
  private readonly sharedHandler: McpHttpHandler;
  private readonly listeners = new Map<string, { handler: McpHttpHandler; streams: number }>();

  constructor(private readonly deps: ModernDeps) {
    this.sharedHandler = this.createHandler();
  }

  private createHandler(): McpHttpHandler {
    return createMcpHandler((ctx) => this.server(ctx), {
      legacy: 'reject',
      onerror: (error) => {
        if (!isClientMistake(error)) this.deps.onError(error);
      },
    });
  }

  private server(ctx: McpRequestContext): Server {
    const caller = callerOf(ctx.authInfo);
    const server = new Server(SERVER_INFO, {
      capabilities: MODERN_CAPABILITIES,
      instructions: INSTRUCTIONS,
      // One validator for every instance: each Server would otherwise build its own Ajv.
      jsonSchemaValidator: this.validator,
    });
    server.setRequestHandler('tools/list', async () => ({
      tools: JSON.parse(await this.deps.tools.listJson(caller)) as never[],
    }));
    server.setRequestHandler('tools/call', async (request, handlerCtx) => {
      try {
        const { envelope, inputResponses, signal } = handlerCtx.mcpReq;
        return await this.deps.tools.call(
          caller,
          request.params.name,
          request.params.arguments,
          callContext(envelope, inputResponses, signal),
        );
      } catch (error) {
        if (error instanceof ToolCallError) throw new ProtocolError(error.code, error.message);
        throw error;
      }
    });
    return server;
  }

  /** POSTs the SDK's classifier routes here: 2026-07-28 requests, and those it rejects outright. */
  accepts(exchange: McpExchange): boolean {
    return exchange.path === 'endpoint' && exchange.method === 'POST' && exchange.route().kind !== 'legacy';
  }

  // Not async: the caller awaits serve's own promise (an async frame around it is a promise and a
  // tick more per request); a throw before it reaches the route's async handler, as a rejection would.
  post(exchange: McpExchange): Promise<void> {
    const { request, reply, caller } = exchange;
    const route = exchange.route();
    if (route.kind === 'modern') return this.serve(request, reply, caller, route);
    // A rejection (bad headers, a malformed envelope): the SDK writes the error answer.
    return this.forward(this.sharedHandler, request, reply, caller);
  }

  /**
   * Serves one classified modern POST: on the lean path when its method is one of LEAN_METHODS and
   * its standard headers agree with it (anything else about them is the SDK's to refuse).
   */
  private async serve(
    request: FastifyRequest,
    reply: FastifyReply,
    caller: Caller,
    route: Extract<InboundClassificationOutcome, { kind: 'modern' }>,
  ): Promise<void> {
    if (
      route.messageKind === 'request' &&
      LEAN_METHODS.has(route.message.method) &&
      standardHeadersAgree(request.headers, route.message.method, route.message.params)
    ) {
      const params = route.message.params as Record<string, unknown> | undefined;
      const body = await dispatch(
        { id: route.message.id, method: route.message.method, ...(params ? { params } : {}) },
        caller,
        this.deps.tools,
        'modern',
        callContext(params?._meta, params?.inputResponses, disconnectSignal(reply)),
      );
      return sendRpc(reply, body);
    }
    if (route.messageKind === 'request' && route.message.method === 'subscriptions/listen') {
      await this.listen(request, reply, caller);
      return;
    }
    await this.forward(this.sharedHandler, request, reply, caller);
  }

  /** Requests the lean path does not take (or that the classifier rejected): the SDK answers. */
  private async forward(
    handler: McpHttpHandler,
    request: FastifyRequest,
    reply: FastifyReply,
    caller: Caller,
    onEnd?: () => void,
  ): Promise<void> {
    const abort = abortOnDisconnect(reply);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) {
      // The key stays here: the SDK gets the verified caller through authInfo instead.
      if (typeof value === 'string' && name !== 'x-api-key' && name !== 'authorization')
        headers.set(name, value);
    }
    const webRequest = new Request(`http://gateway${request.url}`, {
      method: 'POST',
      headers,
      signal: abort.signal,
    });
    const authInfo: AuthInfo = {
      token: caller.keyId,
      clientId: caller.clientId,
      scopes: [],
      extra: { caller },
    };
    const response = await handler.fetch(webRequest, { authInfo, parsedBody: request.body });
    if (response.status >= 400 && response.status < 500) {
      // The SDK refused the request (see isClientMistake): the operator's line, at info.
      request.log.info({ code: 'TG_ERR_BAD_REQUEST', status: response.status }, 'MCP request refused');
    }
    void reply.hijack();
    const res = reply.raw;
    res.writeHead(response.status, Object.fromEntries(response.headers));
    if (onEnd) res.on('close', onEnd);
    if (!response.body) {
      res.end();
      return;
    }
    const body = response.body;
    const pump = async (): Promise<void> => {
      for await (const chunk of body as AsyncIterable<Uint8Array>) res.write(chunk);
      res.end();
    };
    pump().catch(() => res.destroy());
  }

  private async listen(request: FastifyRequest, reply: FastifyReply, caller: Caller): Promise<void> {
    let entry = this.listeners.get(caller.scopeKey);
    if (!entry) {
      entry = { handler: this.createHandler(), streams: 0 };
      this.listeners.set(caller.scopeKey, entry);
    }
    const current = entry;
    current.streams++;
    let unregister = (): void => {};
    const ended = (): void => {
      unregister();
      if (--current.streams === 0 && this.listeners.get(caller.scopeKey) === current) {
        this.listeners.delete(caller.scopeKey);
        void current.handler.close();
      }
    };
    await this.forward(current.handler, request, reply, caller, ended);
    unregister = this.deps.hub.add({
      keyId: caller.keyId,
      ...(caller.grantId ? { grantId: caller.grantId } : {}),
      scope: caller.scope,
      scopeKey: caller.scopeKey,
      close: () => reply.raw.destroy(),
    });
    if (reply.raw.destroyed) unregister();
  }

  /** Tells this scope's listen streams that its tool list changed. */
  toolsChanged(scopeKey: string): void {
    this.listeners.get(scopeKey)?.handler.notify.toolsChanged();
  }

  async close(): Promise<void> {
    await Promise.all([
      this.sharedHandler.close(),
      ...[...this.listeners.values()].map((e) => e.handler.close()),
    ]);
    this.listeners.clear();
  }
}
