import { classifyInboundRequest, type InboundClassificationOutcome } from '@modelcontextprotocol/server';
import type { FastifyRequest } from 'fastify';
import { LEGACY_VERSIONS } from './protocol.js';

/** One request header as a string (a repeated header is not one value: undefined). */
export function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

const JSONRPC_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * The classifier's answer for a plain 2025-era message, without running its schema checks (about
 * 10 µs per request; scripts/bench). It applies when the body is one JSON-RPC request or
 * notification exactly as the SDK's strict schemas accept it (only JSON-RPC's keys, `jsonrpc`
 * "2.0", a string method, an id that is a string or a safe integer, `params` an object), `params`
 * has no `_meta` (so no 2026-07-28 envelope claim can be in it), and MCP-Protocol-Version is absent
 * or a 2025-era version. For such a message the classifier's rules can only route to the legacy
 * leg; everything else (batches, responses, `_meta`, other headers, odd ids) is classified by the
 * SDK itself. test/unit/mcp/classify.test.ts holds the two to the same answers.
 */
export function plainLegacyRoute(
  body: unknown,
  version: string | undefined,
): InboundClassificationOutcome | undefined {
  if (version !== undefined && !(LEGACY_VERSIONS as readonly string[]).includes(version)) return undefined;
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const message = body as Record<string, unknown>;
  for (const key of Object.keys(message)) if (!JSONRPC_KEYS.has(key)) return undefined;
  if (message.jsonrpc !== '2.0' || typeof message.method !== 'string') return undefined;
  const params = message.params;
  if (params !== undefined) {
    if (typeof params !== 'object' || params === null || Array.isArray(params)) return undefined;
    if (Object.hasOwn(params, '_meta')) return undefined;
  }
  const withVersion = (requestedVersion: unknown) =>
    typeof requestedVersion === 'string' ? { requestedVersion } : {};
  if (!Object.hasOwn(message, 'id'))
    return { kind: 'legacy', reason: 'notification', ...withVersion(version) };
  const id = message.id;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  if (message.method === 'initialize') {
    const requested = (params as Record<string, unknown> | undefined)?.protocolVersion;
    return { kind: 'legacy', reason: 'initialize', ...withVersion(requested) };
  }
  return { kind: 'legacy', reason: 'no-claim', ...withVersion(version) };
}

/** RFC 9110 optional whitespace around a field value, which the SDK strips before comparing. */
const OWS = /^[ \t]+|[ \t]+$/g;

/**
 * Whether a 2026-07-28 request carries the standard headers SEP-2243 requires, agreeing with its
 * body: MCP-Protocol-Version and Mcp-Method on every request (the classifier has already refused
 * values that disagree with the body), and on tools/call an Mcp-Name equal to `params.name`. The
 * SDK's entry checks this on the requests it serves, but not as an export, and the lean path
 * (modern.ts) answers without it; so a request that does not plainly pass goes to the SDK, whose
 * check refuses it with -32020 (HeaderMismatch, HTTP 400) or, for an Mcp-Name in its Base64 form,
 * serves it.
 */
export function standardHeadersAgree(request: FastifyRequest, method: string, params: unknown): boolean {
  if (header(request, 'mcp-protocol-version') === undefined || header(request, 'mcp-method') === undefined)
    return false;
  if (method !== 'tools/call') return true;
  const name = (params as { name?: unknown } | undefined)?.name;
  return typeof name !== 'string' || header(request, 'mcp-name')?.replace(OWS, '') === name;
}

/** Classifies a POST the way createMcpHandler would (its own exported classifier). */
export function classify(request: FastifyRequest): InboundClassificationOutcome {
  const version = header(request, 'mcp-protocol-version');
  const plain = plainLegacyRoute(request.body, version);
  if (plain) return plain;
  const input: Parameters<typeof classifyInboundRequest>[0] = { httpMethod: 'POST', body: request.body };
  const method = header(request, 'mcp-method');
  const name = header(request, 'mcp-name');
  if (version !== undefined) input.protocolVersionHeader = version;
  if (method !== undefined) input.mcpMethodHeader = method;
  if (name !== undefined) input.mcpNameHeader = name;
  return classifyInboundRequest(input);
}
