import { jsonString } from '../json.js';
import type { ToolService } from '../tools/service.js';
import { ToolCallError, type CallContext, type ToolResult } from '../tools/types.js';
import {
  encodeError,
  encodeResult,
  encodeResultBytes,
  RPC,
  SERVER_INFO,
  type JsonRpcId,
  type RpcBody,
} from './protocol.js';
import type { Caller } from '../domain.js';

/**
 * The lean JSON-RPC path: answers the methods an agent calls all the time (tools/list, tools/call,
 * ping) without building an SDK server per request. The 2025-era sessions and the 2024 SSE
 * transport use it for every request; the 2026-07-28 transport uses it for {@link LEAN_METHODS}
 * once the SDK's own classifier has validated the envelope and headers (see modern.ts), and the
 * SDK for the rest.
 */
export type Era = 'legacy' | 'modern';

export interface RpcRequest {
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

// Fields 2026-07-28 results carry (resultType, server identity); 2025-era results carry none. An
// input_required result (a tool asking for the user's input first) names its own resultType.
const SERVER_INFO_META = `"_meta":${JSON.stringify({ 'io.modelcontextprotocol/serverInfo': SERVER_INFO })}`;
const MODERN_RESULT_TAIL = `"resultType":"complete",${SERVER_INFO_META}`;
/** A list result's caching hints: `private` where the answer depends on the caller's scope. */
function listTail(cacheScope: 'private' | 'public'): string {
  return `"resultType":"complete","ttlMs":0,"cacheScope":"${cacheScope}",${SERVER_INFO_META}`;
}

// tools/list results around the cached tools array (ToolService.listBytes): `{"tools":[...]}`, and
// on 2026-07-28 the same object with the modern fields appended.
const LIST_HEAD = Buffer.from('{"tools":');
const LIST_END: Readonly<Record<Era, Buffer>> = {
  legacy: Buffer.from('}'),
  // Each scope has its own tools (connections, policy).
  modern: Buffer.from(`,${listTail('private')}}`),
};

/**
 * The empty lists a 2026-07-28 request is served, with the caching hints tools/list has: the
 * conformance checks expect every list method of the revision answered with `ttlMs`/`cacheScope`,
 * and the gateway has no prompts or resources of its own (issue 18). They are the same for every
 * caller, so a shared cache may keep them (`public`). 2025-era sessions are not
 * told of these capabilities in `initialize`, so there they stay method-not-found (see README,
 * Protocol generations).
 */
const MODERN_EMPTY_LISTS: ReadonlyMap<string, string> = new Map(
  Object.entries({
    'prompts/list': 'prompts',
    'resources/list': 'resources',
    'resources/templates/list': 'resourceTemplates',
  }).map(([method, field]) => [method, `{"${field}":[],${listTail('public')}}`]),
);

/**
 * The 2026-07-28 methods this path answers; anything else goes to the SDK. `ping` is not among
 * them: the revision removed it, and the SDK answers it 404 with -32601 like any other method the
 * revision does not define. The legacy transports send every request here.
 */
export const LEAN_METHODS: ReadonlySet<string> = new Set([
  'tools/list',
  'tools/call',
  ...MODERN_EMPTY_LISTS.keys(),
]);

function withTail(objectJson: string, tail: string): string {
  return objectJson === '{}' ? `{${tail}}` : `${objectJson.slice(0, -1)},${tail}}`;
}

/** The keys a tool result is spelled out with, and a text block's, in the order JSON.stringify meets them. */
const RESULT_KEYS = ['content', 'isError'];
const TEXT_BLOCK_KEYS = ['type', 'text'];

/** How many keys `object` has when they are the first of `expected`, in its order; -1 otherwise. */
function keysInOrder(object: object, expected: readonly string[]): number {
  let count = 0;
  for (const key in object) if (key !== expected[count++]) return -1;
  return count;
}

/**
 * A tool result as JSON text, as JSON.stringify writes it: spelled out for the shape nearly every
 * call returns (text blocks, optionally `isError`), which spares the generic walk of the object
 * and its blocks (about 1 % of a tools/call's instructions, scripts/bench/instructions.ts); any
 * other shape is stringified.
 */
export function resultJson(result: ToolResult): string {
  const keys = keysInOrder(result, RESULT_KEYS);
  const { content, isError } = result as { content?: unknown; isError?: unknown };
  if (keys < 1 || !Array.isArray(content) || (keys === 2 && typeof isError !== 'boolean'))
    return JSON.stringify(result);
  let blocks = '';
  for (let i = 0; i < content.length; i++) {
    const block = content[i] as { type?: unknown; text?: unknown } | null;
    if (
      typeof block !== 'object' ||
      block === null ||
      keysInOrder(block, TEXT_BLOCK_KEYS) !== 2 ||
      block.type !== 'text' ||
      typeof block.text !== 'string'
    )
      return JSON.stringify(result);
    blocks += `${i === 0 ? '' : ','}{"type":"text","text":${jsonString(block.text)}}`;
  }
  return `{"content":[${blocks}]${keys === 2 ? `,"isError":${String(isError)}` : ''}}`;
}

/** Answers one JSON-RPC request with the encoded response. Never throws for protocol errors. */
export async function dispatch(
  request: RpcRequest,
  caller: Caller,
  tools: ToolService,
  era: Era,
  context: CallContext = {},
): Promise<RpcBody> {
  const { id, method, params } = request;
  try {
    switch (method) {
      case 'ping':
        // 2025-era only: modern.ts leaves a 2026-07-28 ping to the SDK (see LEAN_METHODS).
        return encodeResult(id, '{}');
      case 'tools/list':
        // Bytes around cached bytes: one copy per request, no string building or re-encoding.
        return encodeResultBytes(id, [LIST_HEAD, await tools.listBytes(caller), LIST_END[era]]);
      case 'tools/call': {
        const name = params?.name;
        if (typeof name !== 'string')
          return encodeError(id, RPC.INVALID_PARAMS, 'tools/call needs params.name (a string).');
        const result = await tools.call(caller, name, params?.arguments, context);
        const json = resultJson(result);
        if (era === 'legacy') return encodeResult(id, json);
        const tail = 'resultType' in result ? SERVER_INFO_META : MODERN_RESULT_TAIL;
        return encodeResult(id, withTail(json, tail));
      }
      default: {
        const empty = era === 'modern' ? MODERN_EMPTY_LISTS.get(method) : undefined;
        if (empty !== undefined) return encodeResult(id, empty);
        return encodeError(id, RPC.METHOD_NOT_FOUND, `Method not found: ${method}`);
      }
    }
  } catch (error) {
    if (error instanceof ToolCallError) return encodeError(id, error.code, error.message);
    throw error;
  }
}

/** Whether a parsed message is a JSON-RPC request (has an id and a method). */
export function isRequest(message: unknown): message is RpcRequest {
  if (typeof message !== 'object' || message === null) return false;
  const m = message as Record<string, unknown>;
  return (
    m.jsonrpc === '2.0' &&
    typeof m.method === 'string' &&
    (typeof m.id === 'string' || (typeof m.id === 'number' && Number.isFinite(m.id))) &&
    (m.params === undefined ||
      (typeof m.params === 'object' && m.params !== null && !Array.isArray(m.params)))
  );
}

/** Whether a parsed message is a JSON-RPC notification (a method, no id). */
export function isNotification(message: unknown): boolean {
  if (typeof message !== 'object' || message === null) return false;
  const m = message as Record<string, unknown>;
  return m.jsonrpc === '2.0' && typeof m.method === 'string' && !('id' in m);
}

/** Whether a parsed message is a JSON-RPC response (a client answering a server request). */
export function isResponse(message: unknown): boolean {
  if (typeof message !== 'object' || message === null) return false;
  const m = message as Record<string, unknown>;
  return m.jsonrpc === '2.0' && 'id' in m && ('result' in m || 'error' in m) && !('method' in m);
}
