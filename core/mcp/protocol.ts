import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import packageJson from '../../package.json' with { type: 'json' };

const { version } = packageJson;

/** What the gateway calls itself on the wire. */
export const SERVER_INFO = { name: 'toolgate', version } as const;

/** The modern revision, served stateless through the SDK's createMcpHandler. */
export const MODERN_VERSION = '2026-07-28';

/** 2025-era Streamable HTTP and 2024-11-05 HTTP+SSE revisions, newest first; ours to serve. */
export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const;
export const DEFAULT_LEGACY_VERSION = '2025-03-26';

export const SERVER_CAPABILITIES = { tools: { listChanged: true } } as const;

/**
 * What `server/discover` declares: the 2026-07-28 transport also serves the prompt and resource
 * lists (empty, with caching hints; dispatch.ts), so it declares them, as a server must for the
 * methods it serves. The 2025-era `initialize` keeps {@link SERVER_CAPABILITIES}.
 */
export const MODERN_CAPABILITIES = { ...SERVER_CAPABILITIES, prompts: {}, resources: {} } as const;

export const INSTRUCTIONS =
  "Toolgate gives you the tools of many SaaS providers through this one server. Call list_providers to see what can be connected, connect_provider to connect one, inspect_provider to see what a provider can do, and report_problem when something does not work. When the tool list is compact, search_tools finds any provider's tools and call_tool runs them.";

/** Whether client capabilities (2025 `initialize`, a 2026-07-28 envelope) declare URL elicitation. */
export function declaresUrlElicitation(capabilities: unknown): boolean {
  const elicitation = (capabilities as { elicitation?: { url?: unknown } } | undefined)?.elicitation;
  return typeof elicitation === 'object' && elicitation !== null && elicitation.url !== undefined;
}

/** The version a 2025-era initialize is answered with: the client's own when we speak it. */
export function negotiateLegacyVersion(requested: unknown): string {
  return typeof requested === 'string' && (LEGACY_VERSIONS as readonly string[]).includes(requested)
    ? requested
    : LEGACY_VERSIONS[0];
}

export type JsonRpcId = string | number;

/** JSON-RPC error codes used on the wire. */
export const RPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
} as const;

/** A JSON-RPC success response around an already-encoded result. */
export function encodeResult(id: JsonRpcId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${encodeId(id)},"result":${resultJson}}`;
}

/** A request id as JSON; a finite number (nearly every id) as its digits, without a JSON.stringify call. */
function encodeId(id: JsonRpcId): string {
  return typeof id === 'number' && Number.isFinite(id) ? String(id) : JSON.stringify(id);
}

/**
 * An encoded JSON-RPC message: text, or the parts of one assembled around cached bytes (tools/list),
 * which an HTTP response sends without copying them into one buffer ({@link sendRpc}); SSE frames
 * and batches need the text (`rpcText`).
 */
export type RpcBody = string | readonly Buffer[];

/** What JSON answers are sent as; named in full because Fastify adds the charset to strings only. */
export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export function rpcText(body: RpcBody): string {
  return typeof body === 'string' ? body : Buffer.concat(body).toString('utf8');
}

// Above this size the parts of a message are streamed one after the other: one contiguous copy of
// a 300-tool list (360 KB) costs 30–100 µs, the upper end when the allocator maps fresh pages for it.
const COPY_LIMIT = 64 * 1024;

/**
 * Answers an HTTP request with one JSON-RPC message: written before this returns (undefined), or
 * streamed, a long list (a promise of its end, for the handler to wait on: Fastify would otherwise
 * send its own answer after the handler's). Not the reply itself: awaiting a thenable costs a
 * request two more ticks of the event loop than returning nothing.
 */
export function sendRpc(reply: FastifyReply, body: RpcBody): Promise<void> | undefined {
  void reply.code(200).type(JSON_CONTENT_TYPE);
  if (typeof body === 'string') {
    void reply.send(body);
    return undefined;
  }
  const length = body.reduce((total, part) => total + part.length, 0);
  if (length <= COPY_LIMIT) {
    void reply.send(Buffer.concat(body, length));
    return undefined;
  }
  const streaming = reply.header('content-length', length).send(Readable.from(body, { objectMode: false }));
  return new Promise((resolve, reject) => streaming.then(resolve, reject));
}

const RESULT_END = Buffer.from('}');

/** A JSON-RPC success response whose result is the concatenation of already-encoded parts. */
export function encodeResultBytes(id: JsonRpcId, resultParts: readonly Buffer[]): Buffer[] {
  return [Buffer.from(`{"jsonrpc":"2.0","id":${encodeId(id)},"result":`), ...resultParts, RESULT_END];
}

export function encodeError(id: JsonRpcId | null, code: number, message: string): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } });
}

/** The SSE frame carrying one JSON-RPC message. */
export function sseMessage(json: string): string {
  return `event: message\ndata: ${json}\n\n`;
}

export const TOOLS_LIST_CHANGED = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}';
