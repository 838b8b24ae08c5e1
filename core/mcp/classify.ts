import {
  classifyInboundRequest,
  PROTOCOL_VERSION_META_KEY,
  type InboundClassificationOutcome,
} from '@modelcontextprotocol/server';
import type { FastifyRequest } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import { LEGACY_VERSIONS } from './protocol.js';

/**
 * One request header as a string (a repeated header is not one value: undefined). Of the headers
 * object read once per request: each `request.headers` is two getters and a megamorphic load
 * (about 500 instructions, scripts/bench/instructions.ts).
 */
export function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
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
export function standardHeadersAgree(headers: IncomingHttpHeaders, method: string, params: unknown): boolean {
  if (header(headers, 'mcp-protocol-version') === undefined || header(headers, 'mcp-method') === undefined)
    return false;
  if (method !== 'tools/call') return true;
  const name = (params as { name?: unknown } | undefined)?.name;
  return typeof name !== 'string' || header(headers, 'mcp-name')?.replace(OWS, '') === name;
}

type ModernRequestRoute = Extract<InboundClassificationOutcome, { kind: 'modern'; messageKind: 'request' }>;

/** Optional whitespace at either end of a header value (RFC 9110). */
const OWS_EDGE = /^[ \t]|[ \t]$/;

/** Envelopes seen valid lately, how many: a client sends the same one on every request. */
const ENVELOPES_KEPT = 1_000;

/**
 * The classifier's verdicts on the 2026-07-28 envelopes (`params._meta`, as JSON text) of requests
 * it routed to the modern leg: their classification. The classifier's schema checks cost about
 * 8 µs of a request's CPU (scripts/bench), and those of the envelope depend on the envelope alone.
 */
export class EnvelopeVerdicts {
  private readonly valid = new Map<string, ModernRequestRoute['classification']>();
  /**
   * The envelopes answered lately, as values, newest first: a request's envelope is compared with
   * them before it is turned into JSON text and looked up, which costs a tools/call about 12k
   * instructions (2 %, scripts/bench/instructions.ts), where a comparison with the client's own
   * envelope of the request before costs a tenth of that.
   */
  private readonly recent: { meta: object; classification: ModernRequestRoute['classification'] }[] = [];

  /**
   * The classifier's answer for a 2026-07-28 request whose envelope it accepted before, without
   * running its schema checks; undefined when this cannot tell (the caller asks the SDK). It
   * applies when the body is one JSON-RPC request with only JSON-RPC's keys (so no response or
   * batch), `jsonrpc` "2.0", a string method other than `initialize` (whose own rule comes first),
   * an id that is a string or a safe integer, `params` an object whose `_meta` is an envelope the
   * classifier accepted, and when MCP-Protocol-Version and Mcp-Method are both sent, without
   * surrounding whitespace, equal to the envelope's version and the body's method: then the
   * classifier's rules can only route it to the modern leg with the same classification.
   * test/unit/mcp/classify.test.ts holds the two to the same answers.
   */
  route(
    body: unknown,
    version: string | undefined,
    methodHeader: string | undefined,
  ): ModernRequestRoute | undefined {
    if (version === undefined || methodHeader === undefined || this.valid.size === 0) return undefined;
    // The classifier strips such whitespace before comparing; the envelope's value is compared as is.
    if (OWS_EDGE.test(version) || OWS_EDGE.test(methodHeader)) return undefined;
    const message = plainRequest(body);
    if (message === undefined || message.method !== methodHeader) return undefined;
    const meta = (message.params as { _meta?: unknown } | undefined)?._meta;
    if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return undefined;
    if ((meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY] !== version) return undefined;
    const classification = this.recentMatch(meta) ?? this.byText(meta);
    if (classification === undefined) return undefined;
    return { kind: 'modern', messageKind: 'request', message: message as never, classification };
  }

  /** The classification of an envelope equal in value to one answered lately. */
  private recentMatch(meta: object): ModernRequestRoute['classification'] | undefined {
    for (const entry of this.recent) if (sameJson(meta, entry.meta)) return entry.classification;
    return undefined;
  }

  /** The classification of an envelope by its JSON text, kept among the recent ones when found. */
  private byText(meta: object): ModernRequestRoute['classification'] | undefined {
    const key = JSON.stringify(meta);
    const classification = this.valid.get(key);
    if (classification === undefined) return undefined;
    // A copy of its own: the request's object goes on to the handlers.
    this.recent.unshift({ meta: JSON.parse(key) as object, classification });
    if (this.recent.length > RECENT_ENVELOPES) this.recent.pop();
    return classification;
  }

  /** Keeps the envelope of a request the classifier routed to the modern leg. */
  remember(route: InboundClassificationOutcome): void {
    if (route.kind !== 'modern' || route.messageKind !== 'request') return;
    const meta = (route.message.params as { _meta?: unknown } | undefined)?._meta;
    if (typeof meta !== 'object' || meta === null) return;
    const key = JSON.stringify(meta);
    if (this.valid.has(key)) return;
    if (this.valid.size >= ENVELOPES_KEPT) this.valid.delete(this.valid.keys().next().value!);
    this.valid.set(key, route.classification);
  }
}

/** Envelopes kept as values for {@link EnvelopeVerdicts}' first comparison: a few clients' each. */
const RECENT_ENVELOPES = 8;

/**
 * Whether two parsed JSON values are equal as JSON: the same members (in any order), elements and
 * scalars. Two envelopes equal this way get the same classification.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key)) return false;
    if (!sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/** A body that is one JSON-RPC request with only JSON-RPC's keys, as the SDK's strict schema reads it. */
function plainRequest(body: unknown): { method: string; params?: unknown } | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const message = body as Record<string, unknown>;
  for (const key of Object.keys(message)) if (!JSONRPC_KEYS.has(key)) return undefined;
  if (message.jsonrpc !== '2.0' || typeof message.method !== 'string' || message.method === 'initialize')
    return undefined;
  const id = message.id;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return undefined;
  const params = message.params;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return undefined;
  return message as { method: string; params?: unknown };
}

/** The process's verdicts: they depend on the SDK's rules alone, the same for every request. */
const ENVELOPES = new EnvelopeVerdicts();

/** Classifies a POST the way createMcpHandler would (its own exported classifier). */
export function classify(request: FastifyRequest, envelopes = ENVELOPES): InboundClassificationOutcome {
  const headers = request.headers;
  const version = header(headers, 'mcp-protocol-version');
  const plain = plainLegacyRoute(request.body, version);
  if (plain) return plain;
  const method = header(headers, 'mcp-method');
  const known = envelopes.route(request.body, version, method);
  if (known) return known;
  const input: Parameters<typeof classifyInboundRequest>[0] = { httpMethod: 'POST', body: request.body };
  const name = header(headers, 'mcp-name');
  if (version !== undefined) input.protocolVersionHeader = version;
  if (method !== undefined) input.mcpMethodHeader = method;
  if (name !== undefined) input.mcpNameHeader = name;
  const route = classifyInboundRequest(input);
  envelopes.remember(route);
  return route;
}
