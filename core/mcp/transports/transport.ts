import type { InboundClassificationOutcome } from '@modelcontextprotocol/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Caller } from '../../domain.js';
import { classify } from '../classify.js';

/**
 * One HTTP exchange on the MCP endpoint, as every transport sees it: the request and reply, the
 * authenticated caller, which of the endpoint's paths it arrived on, and (for a POST to the
 * endpoint) the SDK classifier's verdict, computed once however many transports ask.
 */
export class McpExchange {
  private classified: InboundClassificationOutcome | undefined;

  constructor(
    readonly request: FastifyRequest,
    readonly reply: FastifyReply,
    readonly caller: Caller,
    /** `endpoint`: `/mcp/` (or `/mcp`); `messages`: `/mcp/messages`, the 2024 transport's POSTs. */
    readonly path: 'endpoint' | 'messages',
  ) {}

  get method(): string {
    return this.request.method;
  }

  /** The SDK's classification of a POSTed body: which generation it speaks. */
  route(): InboundClassificationOutcome {
    this.classified ??= classify(this.request);
    return this.classified;
  }
}

/**
 * One MCP protocol generation on the shared endpoint (DESIGN.md, Fixed interfaces). http/mcp.ts
 * asks each transport in turn whether it `accepts` an exchange and hands it to the first that
 * does, at the method's handler. A new generation is one more implementation of this interface,
 * added to the list in mcp/index.ts; nothing in http/ changes.
 */
export interface Transport {
  /** The generation, for logs and docs (`2026-07-28`, `2025 sessions`, `2024 SSE`). */
  readonly generation: string;
  accepts(exchange: McpExchange): boolean;
  post?(exchange: McpExchange): Promise<unknown>;
  get?(exchange: McpExchange): Promise<unknown>;
  delete?(exchange: McpExchange): Promise<unknown>;
  /** Ends what the transport holds open (streams, SDK handlers) at shutdown. */
  close?(): Promise<void>;
}
