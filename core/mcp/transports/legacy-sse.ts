import type { FastifyReply } from 'fastify';
import { GatewayError } from '../../errors.js';
import { header } from '../classify.js';
import { isRequest } from '../dispatch.js';
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
import {
  encodeResult,
  INSTRUCTIONS,
  negotiateLegacyVersion,
  rpcText,
  SERVER_CAPABILITIES,
  SERVER_INFO,
} from '../protocol.js';
import { SseWriter, type StreamHub } from '../streams.js';
import type { McpExchange, Transport } from './transport.js';

export interface LegacySseDeps extends LegacyDeps {
  hub: StreamHub;
  /** Path of the public base URL ('' or '/prefix'), so the endpoint event works behind a proxy. */
  basePath: string;
}

/**
 * The 2024-11-05 HTTP+SSE transport, as a thin adapter over the same request handling: a GET
 * opens the stream and its `endpoint` event names where to POST; each POSTed message is accepted
 * with 202 and answered on the stream. The v2 SDK has no SSE server transport, hence ours.
 */
export class LegacySseTransport implements Transport {
  readonly generation = '2024 SSE';

  constructor(private readonly deps: LegacySseDeps) {}

  /** A GET asking for an event stream without a session id opens one; POSTs to /mcp/messages. */
  accepts(exchange: McpExchange): boolean {
    if (exchange.path === 'messages') return exchange.method === 'POST';
    if (exchange.method !== 'GET') return false;
    const { headers } = exchange.request;
    return (
      header(headers, 'mcp-session-id') === undefined && (headers.accept ?? '').includes('text/event-stream')
    );
  }

  async get({ reply, caller }: McpExchange): Promise<void> {
    const id = await newSession(this.deps, caller, 'sse', undefined, false);
    void reply.hijack();
    const writer = new SseWriter(reply.raw, {});
    this.deps.streams.hold(id, writer);
    attachWriter(this.deps.hub, caller, id, writer, () => {
      void this.deps.sessions.delete(id);
    });
    // The scope parameters ride along so each POST resolves to the session's own scope; the key
    // travels in headers, never in this URL.
    const query = new URLSearchParams({ sessionId: id });
    if (caller.scope.orgId !== null) query.set('org_id', caller.scope.orgId);
    if (caller.scope.userId !== null) query.set('user_id', caller.scope.userId);
    writer.write(`event: endpoint\ndata: ${this.deps.basePath}/mcp/messages?${query.toString()}\n\n`);
  }

  async post({ request, reply, caller }: McpExchange): Promise<FastifyReply> {
    const sessionId = (request.query as Record<string, unknown>).sessionId;
    if (typeof sessionId !== 'string')
      throw new GatewayError(
        'TG_ERR_SESSION_REQUIRED',
        'POST /mcp/messages needs the sessionId the SSE endpoint event gave.',
      );
    const session = await ownedSession(this.deps, sessionId, caller, 'sse');
    const [message] = messagesOf(request.body, false);
    void reply.code(202).type('text/plain').send('Accepted');
    if (isInitialize(message)) {
      const protocolVersion = negotiateLegacyVersion(message.params?.protocolVersion);
      await this.deps.sessions.update(session.id, { protocolVersion });
      const result = JSON.stringify({
        protocolVersion,
        capabilities: SERVER_CAPABILITIES,
        serverInfo: SERVER_INFO,
        instructions: INSTRUCTIONS,
      });
      this.deps.streams.send(session.id, encodeResult(message.id, result));
    } else if (isRequest(message)) {
      const served = sessionCaller(caller, session);
      this.deps.streams.send(session.id, rpcText(await answer(this.deps, request, message, served)));
    }
    return reply;
  }
}
