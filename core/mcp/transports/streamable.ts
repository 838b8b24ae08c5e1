import { randomUUID } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../../errors.js';
import type { CallContext } from '../../tools/types.js';
import { isRequest, type RpcRequest } from '../dispatch.js';
import type { Caller } from '../../domain.js';
import { header } from '../classify.js';
import {
  answer,
  attachWriter,
  isInitialize,
  messagesOf,
  newSession,
  ownedSession,
  sessionCaller,
  type LegacyDeps,
} from './legacy-common.js';
import type { McpExchange, Transport } from './transport.js';
import {
  declaresUrlElicitation,
  encodeResult,
  INSTRUCTIONS,
  LEGACY_VERSIONS,
  negotiateLegacyVersion,
  rpcText,
  sendRpc,
  SERVER_CAPABILITIES,
  SERVER_INFO,
  sseMessage,
} from '../protocol.js';
import { SseWriter, type StreamHub } from '../streams.js';

export interface StreamableDeps extends LegacyDeps {
  hub: StreamHub;
}

function acceptsJson(request: FastifyRequest): boolean {
  const accept = header(request.headers, 'accept') ?? '*/*';
  return (
    accept.includes('application/json') || accept.includes('*/*') || !accept.includes('text/event-stream')
  );
}

/**
 * The 2025-era Streamable HTTP transport (2025-03-26 … 2025-11-25) with sessions: POST carries
 * requests (answered as JSON, or as a one-shot SSE stream to clients that accept only that), GET
 * opens the session's notification stream, DELETE ends the session. The SDK's own 2025 leg is
 * stateless, so this one is ours (issue 2); requests are answered on the lean path (dispatch.ts).
 */
export class StreamableTransport implements Transport {
  readonly generation = '2025 sessions';

  constructor(private readonly deps: StreamableDeps) {}

  /** POSTs without a 2026-07-28 envelope; GET and DELETE that name a session. */
  accepts(exchange: McpExchange): boolean {
    if (exchange.path !== 'endpoint') return false;
    if (exchange.method === 'POST') return exchange.route().kind === 'legacy';
    return header(exchange.request.headers, 'mcp-session-id') !== undefined;
  }

  async post({ request, reply, caller }: McpExchange): Promise<unknown> {
    const { headers } = request;
    const version = header(headers, 'mcp-protocol-version');
    if (version !== undefined && !(LEGACY_VERSIONS as readonly string[]).includes(version)) {
      throw new GatewayError(
        'TG_ERR_BAD_REQUEST',
        `Unsupported MCP-Protocol-Version: ${version}. Supported: ${LEGACY_VERSIONS.join(', ')}, 2026-07-28.`,
      );
    }
    const sessionId = header(headers, 'mcp-session-id');
    // 2025-03-26 allowed JSON-RPC batches; later revisions removed them.
    const messages = messagesOf(request.body, version === undefined || version === '2025-03-26');
    if (messages.some(isInitialize)) {
      if (messages.length !== 1)
        throw new GatewayError('TG_ERR_BAD_REQUEST', 'initialize must be sent alone, not in a batch.');
      return this.initialize(request, reply, caller, messages[0] as RpcRequest);
    }
    // Without a session id the request is served statelessly (clients that never initialize);
    // with one, it must be a live session of this caller.
    const owned =
      sessionId !== undefined ? ownedSession(this.deps, sessionId, caller, 'streamable') : undefined;
    const session = owned instanceof Promise ? await owned : owned;
    const requests = messages.filter(isRequest);
    if (requests.length === 0) return reply.code(202).send();
    const context = session?.elicitUrl ? this.elicitation(session.id) : {};
    const served = session ? sessionCaller(caller, session) : caller;
    // One request (every call but a 2025-03-26 batch) is answered without a Promise.all around it.
    const answers =
      requests.length === 1
        ? [await answer(this.deps, request, requests[0]!, served, context)]
        : await Promise.all(requests.map((m) => answer(this.deps, request, m, served, context)));
    if (acceptsJson(request)) {
      return sendRpc(
        reply,
        Array.isArray(request.body) ? `[${answers.map(rpcText).join(',')}]` : answers[0]!,
      );
    }
    return reply
      .code(200)
      .header('content-type', 'text/event-stream')
      .header('cache-control', 'no-cache')
      .send(answers.map((answer) => sseMessage(rpcText(answer))).join(''));
  }

  private async initialize(
    request: FastifyRequest,
    reply: FastifyReply,
    caller: Caller,
    message: RpcRequest,
  ): Promise<FastifyReply> {
    const protocolVersion = negotiateLegacyVersion(message.params?.protocolVersion);
    const id = await newSession(
      this.deps,
      caller,
      'streamable',
      protocolVersion,
      protocolVersion >= '2025-11-25' && declaresUrlElicitation(message.params?.capabilities),
    );
    const result = JSON.stringify({
      protocolVersion,
      capabilities: SERVER_CAPABILITIES,
      serverInfo: SERVER_INFO,
      instructions: INSTRUCTIONS,
    });
    const body = encodeResult(message.id, result);
    void reply.header('mcp-session-id', id);
    if (acceptsJson(request)) return reply.code(200).type('application/json').send(body);
    return reply
      .code(200)
      .header('content-type', 'text/event-stream')
      .header('cache-control', 'no-cache')
      .send(sseMessage(body));
  }

  /**
   * URL-mode elicitation over the session's stream: the client shows the user the URL (a
   * one-time link) itself. Fire and forget: the tool result carries the link too, and the client's
   * answer (accept/decline) arrives as a POSTed response, acknowledged with 202.
   */
  private elicitation(sessionId: string): CallContext {
    return {
      elicitUrl: (message, url) => {
        this.deps.streams.send(
          sessionId,
          JSON.stringify({
            jsonrpc: '2.0',
            id: `elicit-${randomUUID()}`,
            method: 'elicitation/create',
            params: { mode: 'url', message, url, elicitationId: randomUUID() },
          }),
        );
      },
    };
  }

  /** GET with a session id: the stream on which this session receives notifications. */
  async get({ request, reply, caller }: McpExchange): Promise<void> {
    const { headers } = request;
    const session = await ownedSession(this.deps, header(headers, 'mcp-session-id')!, caller, 'streamable');
    if (!(header(headers, 'accept') ?? '').includes('text/event-stream')) {
      throw new GatewayError(
        'TG_ERR_NOT_ACCEPTABLE',
        'The session stream is served as text/event-stream; send Accept: text/event-stream.',
      );
    }
    if (this.deps.streams.has(session.id)) throw new GatewayError('TG_ERR_STREAM_CONFLICT');
    void reply.hijack();
    const writer = new SseWriter(reply.raw, { 'mcp-session-id': session.id });
    this.deps.streams.hold(session.id, writer);
    attachWriter(this.deps.hub, caller, session.id, writer);
  }

  /** DELETE with a session id: ends the session and closes its stream. */
  async delete({ request, reply, caller }: McpExchange): Promise<FastifyReply> {
    const id = header(request.headers, 'mcp-session-id')!;
    const session = await ownedSession(this.deps, id, caller, 'streamable');
    await this.deps.sessions.delete(session.id);
    this.deps.streams.end(session.id);
    return reply.code(200).send();
  }
}
