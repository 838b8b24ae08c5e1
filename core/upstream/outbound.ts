/**
 * The one outbound HTTP client of the gateway (issue 4, Outbound safety): every provider call goes
 * through it, so the private-network guard, timeouts, redirect handling and the response size cap
 * live in one place. Built on undici's `Agent.dispatch` (a keep-alive Pool per origin) rather than
 * the global fetch, which costs several times the CPU per call.
 */
import { lookup as dnsLookup } from 'node:dns';
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import type { Dispatcher } from 'undici';
import type { Config } from '../config.js';
import { readTarget, type Target } from './target.js';
import { lowerHeaderName } from './template.js';

export interface OutboundOptions {
  /** Skip the private-network guard (`TOOLGATE_ALLOW_PRIVATE_NETWORK=1`; tests and trusted networks). */
  allowPrivateNetwork: boolean;
  /** Default deadline of one `send`, covering every redirect hop and the body. */
  timeoutMs: number;
  /** Bytes of response body kept; the rest is dropped and `truncated` set. */
  maxResponseBytes: number;
  maxRedirects: number;
  /** Name resolution with `dns.lookup`'s signature; replaceable so tests need no resolver. */
  lookup?: LookupFunction;
  /**
   * Exact origins (`http://10.0.0.5:8080`) exempt from the guard, e.g. one internal service. Every
   * other hop, including a redirect out of a trusted origin, is still checked.
   */
  trustedOrigins?: readonly string[];
}

export interface OutboundRequest {
  method: Dispatcher.HttpMethod;
  url: string;
  headers: Readonly<Record<string, string>>;
  body?: string | Buffer | undefined;
  /** Overrides the client's default deadline for this call. */
  timeoutMs?: number | undefined;
  /** Overrides the client's cap on the kept response body for this call (a smaller one for metadata). */
  maxResponseBytes?: number | undefined;
  /** The caller's cancellation (e.g. the MCP request was cancelled); rejects with its reason. */
  signal?: AbortSignal | undefined;
}

export interface OutboundResponse {
  status: number;
  /** Lower-case names, as received. */
  headers: Record<string, string | string[]>;
  body: Buffer;
  /** True when the body was longer than `maxResponseBytes` and was cut. */
  truncated: boolean;
  /** The URL that answered, after redirects. */
  url: string;
}

/**
 * Base of the client's failures. Messages name the host only: a URL's path or query may carry
 * secrets (webhook tokens, API keys in query parameters).
 */
export abstract class OutboundError extends Error {
  constructor(
    readonly host: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export type OutboundBlockReason = 'invalid_url' | 'unsupported_scheme' | 'private_address';

/** The guard refused the call; nothing was sent to the refused address. */
export class OutboundBlockedError extends OutboundError {
  override readonly name = 'OutboundBlockedError';

  constructor(
    host: string,
    readonly reason: OutboundBlockReason,
    message: string,
  ) {
    super(host, message);
  }
}

/** The deadline passed before the response body was complete. */
export class OutboundTimeoutError extends OutboundError {
  override readonly name = 'OutboundTimeoutError';

  constructor(
    host: string,
    readonly timeoutMs: number,
  ) {
    super(host, `${host} did not answer within ${timeoutMs} ms`);
  }
}

/** Connecting or talking to the host failed (DNS, refused, reset, TLS, too many redirects). */
export class OutboundNetworkError extends OutboundError {
  override readonly name = 'OutboundNetworkError';

  constructor(
    host: string,
    /** The system or undici code (`ECONNREFUSED`, `UND_ERR_SOCKET`), or `TOO_MANY_REDIRECTS`. */
    readonly code: string,
    options?: ErrorOptions,
  ) {
    super(host, `could not reach ${host}: ${describeNetworkCode(code)}`, options);
  }
}

/** A response body was longer than the caller accepts; the rest was not read. */
export class OutboundTooLargeError extends OutboundError {
  override readonly name = 'OutboundTooLargeError';

  constructor(
    host: string,
    readonly maxBytes: number,
  ) {
    super(host, `${host} answered with more than ${Math.round(maxBytes / 2 ** 20)} MB`);
  }
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);
// Headers that may follow a redirect to another origin. An allowlist, not a denylist, because a
// manifest can inject a credential under any header name (`X-Api-Key`, `DD-API-KEY`, ...).
const CROSS_ORIGIN_HEADERS = new Set([
  'accept',
  'accept-language',
  'content-language',
  'content-type',
  'user-agent',
]);
const USER_AGENT = 'toolgate';

/** The gateway's outbound HTTP client; one instance is shared by every provider call. */
export class OutboundClient {
  readonly #options: OutboundOptions;
  // Connects only after every resolved address passed the guard.
  readonly #guarded: Agent;
  // Connects anywhere: used when private networks are allowed, and for trusted origins.
  readonly #open: Agent;
  readonly #trusted: ReadonlySet<string>;
  readonly #nodeAgents: { http?: HttpAgent; https?: HttpsAgent } = {};

  constructor(options: OutboundOptions) {
    this.#options = options;
    const lookup = options.lookup ?? dnsLookup;
    this.#guarded = new Agent({ connect: { lookup: guardLookup(lookup) } });
    this.#open = new Agent({ connect: { lookup } });
    this.#trusted = new Set((options.trustedOrigins ?? []).map((origin) => new URL(origin).origin));
  }

  /**
   * Sends one request, following up to `maxRedirects` redirects itself so that every hop passes the
   * guard. Rejects with an {@link OutboundError}, or with the caller's abort reason.
   */
  async send(request: OutboundRequest): Promise<OutboundResponse> {
    const callerSignal = request.signal;
    callerSignal?.throwIfAborted();
    let url = parseTarget(request.url);
    const timeoutMs = request.timeoutMs ?? this.#options.timeoutMs;
    // One deadline for the whole exchange (every hop and the body), kept by undici's own timers
    // (each hop's wait for headers and for each body chunk gets what is left of it) and checked as
    // the body arrives: no AbortController and no timer of ours per call, which cost about 5 µs of
    // a tools/call's CPU (scripts/bench). undici's timers fire within about a second of their time,
    // and a body stalling just before the deadline may take what was left at its hop's start again.
    const deadline = performance.now() + timeoutMs;
    try {
      let { method, body } = request;
      let headers = headerList(request.headers);
      const maxBytes = request.maxResponseBytes ?? this.#options.maxResponseBytes;
      for (let hop = 0; ; hop++) {
        // The first hop's is the setting itself: undici re-arms a connection's timer when it changes.
        const left = hop === 0 ? timeoutMs : Math.max(1, Math.ceil(deadline - performance.now()));
        const response = await this.#exchange(
          url,
          method,
          headers,
          body,
          left,
          maxBytes,
          deadline,
          callerSignal,
        );
        if (response.location === undefined)
          return {
            status: response.status,
            headers: response.headers,
            body: response.body,
            truncated: response.truncated,
            url: url.href,
          };

        if (hop === this.#options.maxRedirects)
          throw new OutboundNetworkError(url.hostname, 'TOO_MANY_REDIRECTS');
        const next = parseRedirect(response.location, url);
        if (next.origin !== url.origin)
          headers = pickHeaders(headers, (name) => CROSS_ORIGIN_HEADERS.has(name));
        // As browsers do: 303 always, and 301/302 after a POST, continue as a GET without the body.
        const status = response.status;
        if (status === 303 || ((status === 301 || status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
          headers = pickHeaders(headers, (name) => name !== 'content-type' && name !== 'content-length');
        }
        url = next;
      }
    } catch (error) {
      if (callerSignal?.aborted) throw callerSignal.reason;
      if (error === PAST_DEADLINE) throw new OutboundTimeoutError(url.hostname, timeoutMs);
      throw toOutboundError(error, url.hostname, timeoutMs);
    }
  }

  /**
   * A Node agent for a library that brings its own HTTP client (simple-oauth2, for the token and
   * revocation endpoints an upstream's metadata named): it connects only to addresses that pass the
   * guard, as `send` does. Undefined where the guard is off. Throws {@link OutboundBlockedError} for
   * a URL that is invalid or names a special-purpose IP address; the library must not follow redirects.
   */
  nodeAgent(raw: string): HttpAgent | undefined {
    const url = parseTarget(raw);
    if (this.#options.allowPrivateNetwork || this.#trusted.has(url.origin)) return undefined;
    const literal = bareHost(url.hostname);
    if (isIP(literal) !== 0) assertPublic(literal, literal);
    const options = { keepAlive: true, lookup: guardLookup(this.#options.lookup ?? dnsLookup) };
    if (url.protocol === 'https:') return (this.#nodeAgents.https ??= new HttpsAgent(options));
    return (this.#nodeAgents.http ??= new HttpAgent(options));
  }

  /**
   * A WHATWG `fetch` through the same guard and connection pools, for an SDK that takes one (the
   * MCP client of upstream MCP servers). The body streams (an event stream stays open as long as
   * the server keeps it), at most `maxBytes` of it are read before it fails with
   * {@link OutboundTooLargeError}; a redirect is returned, not followed, so the caller's next
   * request for it passes the guard again. The caller's `signal` is its deadline.
   */
  fetch(maxBytes: number): (input: string | URL, init?: RequestInit) => Promise<Response> {
    return async (input, init = {}) => {
      const url = parseTarget(input instanceof URL ? input.href : input);
      const open = this.#options.allowPrivateNetwork || this.#trusted.has(url.origin);
      const literal = bareHost(url.hostname);
      if (!open && isIP(literal) !== 0) assertPublic(literal, literal);
      let response: Response;
      try {
        response = await undiciFetch(url.href, {
          ...(init as unknown as Parameters<typeof undiciFetch>[1]),
          redirect: 'manual',
          dispatcher: open ? this.#open : this.#guarded,
        });
      } catch (error) {
        if (init.signal?.aborted) throw error;
        throw toOutboundError(error, url.hostname, this.#options.timeoutMs);
      }
      return capped(response, url.hostname, maxBytes);
    };
  }

  /** Closes the pooled connections; in-flight requests finish first. */
  async close(): Promise<void> {
    this.#nodeAgents.http?.destroy();
    this.#nodeAgents.https?.destroy();
    await Promise.all([this.#guarded.close(), this.#open.close()]);
  }

  /** One hop: the request sent, and its response read (see {@link Exchange}). */
  #exchange(
    url: Target,
    method: Dispatcher.HttpMethod,
    headers: HeaderList,
    body: string | Buffer | undefined,
    timeoutMs: number,
    maxBytes: number,
    deadline: number,
    signal: AbortSignal | undefined,
  ): Promise<Received> {
    const open = this.#options.allowPrivateNetwork || this.#trusted.has(url.origin);
    const literal = bareHost(url.hostname);
    // A host written as an IP address is never looked up, so the lookup guard cannot see it.
    if (!open && isIP(literal) !== 0) assertPublic(literal, literal);
    const agent = open ? this.#open : this.#guarded;
    return new Promise((resolve, reject) => {
      agent.dispatch(
        {
          origin: url.origin,
          path: url.path,
          method,
          headers,
          body: body ?? null,
          headersTimeout: timeoutMs,
          bodyTimeout: timeoutMs,
        },
        new Exchange(maxBytes, deadline, signal, resolve, reject),
      );
    });
  }
}

/**
 * The IANA special-purpose range (RFC 6890 and successors) an IP address falls in, e.g.
 * `loopback`, or undefined when the address is globally routable. IPv4 embedded in IPv6
 * (mapped, NAT64, 6to4) is judged by its IPv4 part.
 */
export function specialPurposeRange(address: string): string | undefined {
  const ip = bareHost(address);
  switch (isIP(ip)) {
    case 4:
      return ipv4Range(parseIPv4(ip));
    case 6:
      return ipv6Range(parseIPv6(ip));
    default:
      return 'not an IP address';
  }
}

interface Range<T> {
  base: T;
  bits: number;
  label: string;
}

const v4 = (base: string, bits: number, label: string): Range<number> => ({
  base: parseIPv4(base),
  bits,
  label,
});
const v6 = (base: string, bits: number, label: string): Range<bigint> => ({
  base: parseIPv6(base),
  bits,
  label,
});

const IPV4_RANGES: readonly Range<number>[] = [
  v4('0.0.0.0', 8, 'unspecified'),
  v4('10.0.0.0', 8, 'private'),
  v4('100.64.0.0', 10, 'shared (CGNAT)'),
  v4('127.0.0.0', 8, 'loopback'),
  v4('169.254.0.0', 16, 'link-local'),
  v4('172.16.0.0', 12, 'private'),
  v4('192.0.0.0', 24, 'IETF protocol assignment'),
  v4('192.0.2.0', 24, 'documentation'),
  v4('192.88.99.0', 24, '6to4 relay'),
  v4('192.168.0.0', 16, 'private'),
  v4('198.18.0.0', 15, 'benchmarking'),
  v4('198.51.100.0', 24, 'documentation'),
  v4('203.0.113.0', 24, 'documentation'),
  v4('224.0.0.0', 4, 'multicast'),
  v4('240.0.0.0', 4, 'reserved'),
];

// First match wins: the /128s come before the ::/96 that contains them.
const IPV6_RANGES: readonly Range<bigint>[] = [
  v6('::', 128, 'unspecified'),
  v6('::1', 128, 'loopback'),
  v6('::', 96, 'IPv4-compatible (deprecated)'),
  v6('64:ff9b:1::', 48, 'NAT64 local-use'),
  v6('100::', 64, 'discard-only'),
  v6('2001:db8::', 32, 'documentation'),
  v6('2001::', 23, 'IETF protocol assignment'),
  v6('3fff::', 20, 'documentation'),
  v6('fc00::', 7, 'private (unique local)'),
  v6('fe80::', 10, 'link-local'),
  v6('fec0::', 10, 'site-local (deprecated)'),
  v6('ff00::', 8, 'multicast'),
];

const IPV4_MAPPED = parseIPv6('::ffff:0:0');
const NAT64 = parseIPv6('64:ff9b::');
const SIX_TO_FOUR = parseIPv6('2002::');
const GLOBAL_UNICAST = parseIPv6('2000::');

function ipv4Range(address: number): string | undefined {
  return IPV4_RANGES.find((range) => address >>> (32 - range.bits) === range.base >>> (32 - range.bits))
    ?.label;
}

function ipv6Range(address: bigint): string | undefined {
  const within = (base: bigint, bits: number): boolean =>
    address >> BigInt(128 - bits) === base >> BigInt(128 - bits);
  if (within(IPV4_MAPPED, 96) || within(NAT64, 96)) return ipv4Range(Number(address & 0xffffffffn));
  if (within(SIX_TO_FOUR, 16)) return ipv4Range(Number((address >> 80n) & 0xffffffffn));
  const special = IPV6_RANGES.find((range) => within(range.base, range.bits))?.label;
  return special ?? (within(GLOBAL_UNICAST, 3) ? undefined : 'reserved');
}

function parseIPv4(address: string): number {
  return address.split('.').reduce((value, octet) => value * 256 + Number(octet), 0);
}

// Parses an address `isIP` accepted as IPv6 (zone id allowed, dotted IPv4 tail allowed).
function parseIPv6(address: string): bigint {
  let text = address.replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (dotted !== undefined) {
    const v4 = parseIPv4(dotted);
    text = `${text.slice(0, -dotted.length)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const groups = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return all.reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}

function bareHost(hostname: string): string {
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

function assertPublic(host: string, address: string): void {
  const range = specialPurposeRange(address);
  if (range === undefined) return;
  const subject = host === address ? `${address} is` : `${host} resolves to ${address},`;
  throw new OutboundBlockedError(host, 'private_address', `${subject} not a public address (${range})`);
}

// Wraps name resolution so that a connection is only opened to addresses that passed the guard:
// the address checked is the address connected, so DNS rebinding between check and use cannot
// happen. One special-purpose address among several refuses the whole name.
function guardLookup(lookup: LookupFunction): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, result) => {
      if (error) return callback(error, '');
      const addresses = typeof result === 'string' ? [{ address: result, family: isIP(result) }] : result;
      try {
        for (const { address } of addresses) assertPublic(hostname, address);
      } catch (refusal) {
        return callback(refusal as OutboundBlockedError, '');
      }
      const first: LookupAddress | undefined = addresses[0];
      if (options.all === true) callback(null, addresses);
      else if (first === undefined)
        callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '');
      else callback(null, first.address, first.family);
    });
  };
}

function parseTarget(raw: string): Target {
  const url = readTarget(raw);
  // Not `new URL`'s own TypeError: it carries the whole input, secrets included, into logs.
  if (url === undefined) throw new OutboundBlockedError('', 'invalid_url', 'the URL is not valid');
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new OutboundBlockedError(
      url.hostname,
      'unsupported_scheme',
      `${url.protocol.slice(0, -1)} URLs are not called; only http and https`,
    );
  }
  return url;
}

function parseRedirect(location: string, from: Target): Target {
  let resolved: string;
  try {
    resolved = new URL(location, from.href).href;
  } catch {
    throw new OutboundNetworkError(from.hostname, 'BAD_REDIRECT');
  }
  return parseTarget(resolved);
}

/**
 * Request headers as undici takes them: a flat list, name (lower case) then value. An object built
 * name by name cost a provider call about 8k instructions of keyed stores, one shape change each
 * (scripts/bench/instructions.ts); the list costs a push per header.
 */
type HeaderList = string[];

/**
 * A request's headers, names in lower case, our User-Agent first unless the request sets its own;
 * names that differ only in case are one header, the last value at the first's place.
 */
function headerList(headers: Readonly<Record<string, string>>): HeaderList {
  const list: HeaderList = ['user-agent', USER_AGENT];
  for (const name of Object.keys(headers)) {
    const lower = lowerHeaderName(name);
    let at = 0;
    while (at < list.length && list[at] !== lower) at += 2;
    if (at < list.length) list[at + 1] = headers[name]!;
    else list.push(lower, headers[name]!);
  }
  return list;
}

function pickHeaders(headers: HeaderList, keep: (name: string) => boolean): HeaderList {
  const kept: HeaderList = [];
  for (let at = 0; at < headers.length; at += 2)
    if (keep(headers[at]!)) kept.push(headers[at]!, headers[at + 1]!);
  return kept;
}

function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * What a hop received: the response but its URL (the caller knows it), and `location`, set for a
 * redirect status with a Location header (its body then dropped, not kept).
 */
type Received = Omit<OutboundResponse, 'url'> & { location: string | undefined };

/** What an exchange fails with when the body is still arriving at the deadline. */
const PAST_DEADLINE = new Error('past the deadline');
/** Bytes of a redirect's body read and dropped before its connection is closed instead (as undici's `dump`). */
const REDIRECT_BODY_BYTES = 128 * 1024;
const EMPTY = Buffer.alloc(0);
/** The reason an exchange gives undici when it stops a download it has already settled. */
const STOPPED = new Error('the rest of the body is not read');

/**
 * The exchanges in flight under each caller's signal, all failed by the one `abort` listener the
 * signal gets when first seen. A signal usually outlives many exchanges (modern.ts: one per client
 * connection), and adding and removing a listener per exchange cost a tools/call about 5k
 * instructions (1.5 %; scripts/bench/instructions.ts), where a set's add and delete cost a tenth.
 */
const watched = new WeakMap<AbortSignal, Set<Exchange>>();

function watch(signal: AbortSignal, exchange: Exchange): void {
  // Its listener has run (or the signal aborted before any exchange): fail at once.
  if (signal.aborted) {
    exchange.aborted();
    return;
  }
  let exchanges = watched.get(signal);
  if (exchanges === undefined) {
    const set = (exchanges = new Set<Exchange>());
    watched.set(signal, set);
    signal.addEventListener(
      'abort',
      () => {
        for (const each of set) each.aborted();
        set.clear();
      },
      { once: true },
    );
  }
  exchanges.add(exchange);
}

/** An exchange that settled: its signal's abort no longer concerns it. */
function unwatch(signal: AbortSignal | undefined, exchange: Exchange): void {
  if (signal) watched.get(signal)?.delete(exchange);
}

/**
 * One request's handler for undici's `dispatch`: it keeps the body's chunks as they arrive, at most
 * `maxBytes` of them (then it stops the download), and settles once, with the response or with the
 * failure: undici's (its timeouts, a reset), a chunk arriving after `deadline` (a
 * `performance.now()` time; PAST_DEADLINE), or the caller's abort reason as soon as `signal` aborts.
 * undici's `request` put a Readable stream, a request handler and an abort listener of its own
 * between the socket and this: 446k -> 377k instructions per tools/call (scripts/bench/instructions.ts).
 */
class Exchange implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | undefined;
  #settled = false;
  #status = 0;
  #headers: Record<string, string | string[]> = {};
  #location: string | undefined;
  readonly #chunks: Buffer[] = [];
  #size = 0;
  #truncated = false;

  constructor(
    private readonly maxBytes: number,
    private readonly deadline: number,
    private readonly signal: AbortSignal | undefined,
    private readonly resolve: (received: Received) => void,
    private readonly reject: (error: unknown) => void,
  ) {
    if (signal) watch(signal, this);
  }

  /** The caller's signal aborted: fail now, even while the request still waits for a connection. */
  aborted(): void {
    const reason: unknown = this.signal!.reason;
    this.#fail(reason);
    this.#controller?.abort(reason as Error);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#settled) controller.abort(this.signal?.reason as Error);
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    this.#status = statusCode;
    // undici's header parser gives no undefined values.
    this.#headers = headers as Record<string, string | string[]>;
    this.#location = REDIRECT_STATUSES.has(statusCode) ? firstValue(headers.location) : undefined;
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    if (performance.now() > this.deadline) {
      this.#fail(PAST_DEADLINE);
      controller.abort(PAST_DEADLINE);
      return;
    }
    this.#size += chunk.length;
    if (this.#location !== undefined) {
      if (this.#size > REDIRECT_BODY_BYTES) {
        this.#finish();
        controller.abort(STOPPED);
      }
      return;
    }
    if (this.#size > this.maxBytes) {
      this.#chunks.push(chunk.subarray(0, chunk.length - (this.#size - this.maxBytes)));
      this.#size = this.maxBytes;
      this.#truncated = true;
      // Aborting closes the connection: the rest is never read.
      this.#finish();
      controller.abort(STOPPED);
      return;
    }
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    this.#finish();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.#fail(error);
  }

  #finish(): void {
    if (this.#settled) return;
    this.#settled = true;
    unwatch(this.signal, this);
    const redirect = this.#location !== undefined;
    this.resolve({
      status: this.#status,
      headers: this.#headers,
      body: redirect ? EMPTY : Buffer.concat(this.#chunks, this.#size),
      truncated: this.#truncated,
      location: this.#location,
    });
  }

  #fail(error: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    unwatch(this.signal, this);
    this.reject(error);
  }
}

/** `response` whose body fails with OutboundTooLargeError once more than `maxBytes` arrived. */
function capped(response: Response, host: string, maxBytes: number): Response {
  if (response.body === null || [204, 205, 304].includes(response.status)) return response;
  let size = 0;
  const limit = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      size += chunk.byteLength;
      if (size > maxBytes) controller.error(new OutboundTooLargeError(host, maxBytes));
      else controller.enqueue(chunk);
    },
  });
  return new Response(response.body.pipeThrough(limit), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

function toOutboundError(error: unknown, host: string, timeoutMs: number): unknown {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof OutboundError) return cause;
  }
  const code = errorCode(error);
  if (code !== undefined && TIMEOUT_CODES.has(code)) return new OutboundTimeoutError(host, timeoutMs);
  if (code === 'UND_ERR_INVALID_ARG') return error; // our own bug, not the network's
  return new OutboundNetworkError(host, code ?? 'NETWORK_ERROR', { cause: error });
}

/** The system or undici code of a failure, or of its cause (fetch reports one as `fetch failed`). */
function errorCode(error: unknown): string | undefined {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    const code = (cause as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

const NETWORK_CODE_TEXT: Readonly<Record<string, string>> = {
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved right now',
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was closed unexpectedly',
  UND_ERR_SOCKET: 'the connection was closed unexpectedly',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  TOO_MANY_REDIRECTS: 'too many redirects',
  BAD_REDIRECT: 'it redirected to an invalid URL',
};

function describeNetworkCode(code: string): string {
  const known = NETWORK_CODE_TEXT[code];
  if (known !== undefined) return known;
  if (/CERT|TLS|SSL/.test(code)) return `its TLS certificate could not be verified (${code})`;
  return `network error (${code})`;
}

/**
 * The gateway's outbound client as configured: the private-network guard (off only in tests), 30 s
 * per request, 5 MB per response, 5 redirects; the operator's own webhooks are trusted to live on
 * the operator's network.
 */
export function outboundClient(config: Config): OutboundClient {
  return new OutboundClient({
    allowPrivateNetwork: config.allowPrivateNetwork,
    timeoutMs: 30_000,
    maxResponseBytes: 5 * 1024 * 1024,
    maxRedirects: 5,
    trustedOrigins: [config.reportWebhookUrl, config.eventsWebhookUrl].filter(
      (u): u is string => u !== undefined,
    ),
  });
}
