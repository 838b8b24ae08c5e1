/**
 * Builds the upstream HTTP request of a compiled tool from its RequestPlan and validated arguments
 * (issue 3, Executor). Pure: no I/O, no credentials; the provider client adds auth and static headers.
 * Serialization follows OpenAPI 3 `style`/`explode`; percent-encoding follows RFC 3986, so every
 * reserved character inside a value is encoded and only the delimiters we add stay literal.
 */
import { randomUUID } from 'node:crypto';
import type { ParameterBinding, RequestPlan } from '../catalog/types.js';
import type { PluginHttpRequest } from '../catalog/plugins/types.js';
import { lowerHeaderName, Template } from './template.js';

/** What the outbound client sends, before the provider client injects credentials and static headers. */
export interface UpstreamRequest {
  method: RequestPlan['method'];
  url: string;
  /** Lower-case names. */
  headers: Record<string, string>;
  body?: string | Buffer;
}

/** Why arguments cannot be used: which field (`owner`, `filter.state`, `labels[0]`) and what is wrong. */
export interface ArgumentProblem {
  ok: false;
  /** Path of the offending argument; `''` for the arguments object itself. */
  field: string;
  message: string;
}

export type BuiltRequest = { ok: true; request: UpstreamRequest } | ArgumentProblem;

type Style = NonNullable<ParameterBinding['style']>;

const DELIMITERS: Readonly<Record<Exclude<Style, 'deepObject'>, string>> = {
  form: ',',
  simple: ',',
  spaceDelimited: '%20',
  pipeDelimited: '%7C',
};

const TEMPLATE_VARIABLE = /\{([^}]+)\}/g;

// What undici accepts in a header value (RFC 9110 field-vchar, SP and HTAB).
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Turns validated arguments into the upstream request. `baseUrl` may carry a path
 * (`https://api.example.com/v2`) and a query (a webhook URL's token), both kept. Arguments that are
 * undefined, and for parameters also null, are left out. Fails with an {@link ArgumentProblem}
 * when an argument cannot be placed (a required path value missing, `..` as a path segment, a
 * line break in a header).
 */
export function buildRequest(
  plan: RequestPlan,
  args: Readonly<Record<string, unknown>>,
  baseUrl: string,
): BuiltRequest {
  const headers: Record<string, string> = { accept: 'application/json, */*;q=0.8' };
  const query = (plan.fixedQuery ?? []).map(({ name, value }) =>
    value === undefined ? encode(name) : `${encode(name)}=${encode(value)}`,
  );
  const pathValues = new Map<string, string>();

  for (const binding of plan.parameters) {
    const value = args[binding.arg];
    if (!given(value)) continue;
    const style = binding.style ?? (binding.in === 'query' ? 'form' : 'simple');
    const explode = binding.explode ?? style === 'form';
    if (binding.in === 'query') {
      query.push(...queryPairs(encode(binding.name), value, style, explode));
    } else if (binding.in === 'header') {
      const text = simple(value, explode, (s) => s);
      if (!HEADER_VALUE.test(text))
        return problem(binding.arg, 'contains characters not allowed in an HTTP header');
      headers[lowerHeaderName(binding.name)] = text;
    } else {
      const segment = simple(value, explode, encode);
      // `.` and `..` would be resolved away by the URL parser (even percent-encoded), reaching
      // another endpoint with the user's credential; an empty one would produce `//`.
      if (segment === '' || segment === '.' || segment === '..') {
        return problem(binding.arg, 'must not be empty, `.` or `..`');
      }
      pathValues.set(binding.name, segment);
    }
  }

  const path = Template.of(plan.path, TEMPLATE_VARIABLE);
  const missing = path.names.find((name) => !pathValues.has(name));
  if (missing !== undefined) {
    const binding = plan.parameters.find((p) => p.in === 'path' && p.name === missing);
    return problem(binding?.arg ?? missing, 'is required');
  }
  const request: UpstreamRequest = {
    method: plan.method,
    url: joinUrl(
      baseUrl,
      path.fill((name) => pathValues.get(name) ?? ''),
      query,
    ),
    headers,
  };
  const body = plan.body;
  if (body !== undefined) {
    const { from } = body;
    const value = from.kind === 'property' ? args[from.arg] : pickDefined(args, from.args);
    if (value === undefined && body.required && from.kind === 'property')
      return problem(from.arg, 'is required');
    // A spread body none of whose fields were given is no body, unless the operation requires one.
    const absent = value === undefined || (from.kind === 'spread' && !body.required && isEmptyObject(value));
    if (!absent) {
      const at = from.kind === 'property' ? `${from.arg}.` : '';
      const encoded = encodeBody(body, value, at);
      if (!encoded.ok) return encoded;
      headers['content-type'] = encoded.contentType;
      request.body = encoded.body;
    }
  }
  return { ok: true, request };
}

/**
 * What the files of one request may weigh decoded: their base64 must fit, with the rest of the
 * call, in the 4 MB an MCP request may carry (core/http/app.ts BODY_LIMIT).
 */
export const MAX_UPLOAD_BYTES = 2 * 1024 * 1024;

type EncodedBody = { ok: true; contentType: string; body: string | Buffer } | ArgumentProblem;

// A media type as a header carries it: type/subtype and parameters, no line breaks.
const MEDIA_TYPE = /^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;[\t\x20-\x7e]*)?$/;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** The body of a request plan's content type; `at` prefixes the field names of problems. */
function encodeBody(body: NonNullable<RequestPlan['body']>, value: unknown, at: string): EncodedBody {
  switch (body.contentType) {
    case 'application/json':
      return { ok: true, contentType: body.contentType, body: JSON.stringify(value) };
    case 'application/x-www-form-urlencoded':
      return { ok: true, contentType: body.contentType, body: formBody(value) };
    case 'application/octet-stream': {
      const field = at.slice(0, -1);
      const bytes = base64Bytes(value, field);
      if (!Buffer.isBuffer(bytes)) return bytes;
      return bytes.length > MAX_UPLOAD_BYTES
        ? tooLarge(field, bytes.length)
        : { ok: true, contentType: body.contentType, body: bytes };
    }
    case 'multipart/form-data':
      return multipartBody(isRecord(value) ? value : {}, new Set(body.files), at);
  }
}

function base64Bytes(value: unknown, field: string): Buffer | ArgumentProblem {
  const text = typeof value === 'string' ? value.replace(/\s+/g, '') : '';
  if (!BASE64.test(text) || text.length % 4 === 1) return problem(field, 'must be base64 text');
  return Buffer.from(text, 'base64');
}

function tooLarge(field: string, size: number): ArgumentProblem {
  const mb = (n: number) => `${(n / 2 ** 20).toFixed(1)} MB`;
  return problem(
    field,
    `makes the files of this call ${mb(size)} decoded; at most ${mb(MAX_UPLOAD_BYTES)} can be sent in one call`,
  );
}

// RFC 7578 and the WHATWG encoding: `"`, CR and LF escaped in names and file names.
function quoted(text: string): string {
  return `"${text.replace(/"/g, '%22').replace(/\r/g, '%0D').replace(/\n/g, '%0A')}"`;
}

/**
 * `multipart/form-data` (RFC 7578): a file field is an object {content (base64), filename?,
 * media_type?}, or an array of them, each one part; an array of scalars repeats its field; other
 * objects and arrays are sent as JSON parts, as OpenAPI's default for them says.
 */
function multipartBody(fields: Record<string, unknown>, files: ReadonlySet<string>, at: string): EncodedBody {
  const boundary = `toolgate-${randomUUID()}`;
  const parts: Buffer[] = [];
  let uploaded = 0;
  const part = (name: string, headers: string, content: string | Buffer) =>
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name=${quoted(name)}${headers}\r\n\r\n`),
      Buffer.isBuffer(content) ? content : Buffer.from(content),
      Buffer.from('\r\n'),
    );
  for (const [name, value] of Object.entries(fields)) {
    if (!given(value)) continue;
    if (files.has(name)) {
      const list = Array.isArray(value) ? value : [value];
      for (const [i, file] of list.entries()) {
        const field = `${at}${name}${Array.isArray(value) ? `[${i}]` : ''}`;
        const { content, filename, media_type: type } = isRecord(file) ? file : {};
        const bytes = base64Bytes(content, `${field}.content`);
        if (!Buffer.isBuffer(bytes)) return bytes;
        uploaded += bytes.length;
        if (uploaded > MAX_UPLOAD_BYTES) return tooLarge(`${field}.content`, uploaded);
        const media = typeof type === 'string' ? type : 'application/octet-stream';
        if (!MEDIA_TYPE.test(media))
          return problem(`${field}.media_type`, 'must be a media type such as image/png');
        const fileName = typeof filename === 'string' && filename !== '' ? filename : name;
        part(name, `; filename=${quoted(fileName)}\r\nContent-Type: ${media}`, bytes);
      }
    } else if (Array.isArray(value) && value.every((item) => !isRecord(item) && !Array.isArray(item))) {
      for (const item of value.filter(given)) part(name, '', scalar(item));
    } else if (isRecord(value) || Array.isArray(value)) {
      part(name, '\r\nContent-Type: application/json', JSON.stringify(value));
    } else {
      part(name, '', scalar(value));
    }
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { ok: true, contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat(parts) };
}

function problem(field: string, rule: string): ArgumentProblem {
  return { ok: false, field, message: `argument \`${field}\` ${rule}` };
}

/** RFC 3986's unreserved characters (ALPHA, DIGIT, `-`, `.`, `_`, `~`) by their codes: 1, else 0. */
const UNRESERVED = new Uint8Array(128);
for (const c of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~')
  UNRESERVED[c.charCodeAt(0)] = 1;

// RFC 3986: everything but unreserved characters is percent-encoded (`encodeURIComponent` keeps `!'()*`).
function encode(text: string): string {
  // Nearly every value (an id, a name, a number) is unreserved characters alone, its own encoding:
  // told by this loop, it costs neither encodeURIComponent's call into the runtime (a new string)
  // nor the test below.
  let plain = true;
  for (let i = 0; i < text.length && plain; i++) {
    const c = text.charCodeAt(i);
    plain = c < 128 && UNRESERVED[c] === 1;
  }
  if (plain) return text;
  const encoded = encodeURIComponent(text);
  // Tested first: a replace with a callback costs a call into the runtime even where nothing matches.
  return SUB_DELIMS.test(encoded)
    ? encoded.replace(SUB_DELIMS_ALL, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    : encoded;
}

const SUB_DELIMS = /[!'()*]/;
const SUB_DELIMS_ALL = /[!'()*]/g;

function scalar(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint')
    return String(value);
  return JSON.stringify(value) ?? '';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isEmptyObject(value: unknown): boolean {
  return isRecord(value) && Object.keys(value).length === 0;
}

// Undefined and null are "not given" wherever a parameter value is serialized.
function given(value: unknown): boolean {
  return value !== undefined && value !== null;
}

function present(entries: [string, unknown][]): [string, unknown][] {
  return entries.filter(([, v]) => given(v));
}

function pickDefined(
  args: Readonly<Record<string, unknown>>,
  names: readonly string[],
): Record<string, unknown> {
  return Object.fromEntries(
    names.filter((name) => args[name] !== undefined).map((name) => [name, args[name]]),
  );
}

// OpenAPI `simple` style (path and header): `a,b`; objects `k,v,k2,v2`, exploded `k=v,k2=v2`.
function simple(value: unknown, explode: boolean, enc: (text: string) => string): string {
  if (Array.isArray(value))
    return value
      .filter(given)
      .map((item) => enc(scalar(item)))
      .join(',');
  if (isRecord(value)) {
    const pair = explode ? '=' : ',';
    return present(Object.entries(value))
      .map(([k, v]) => `${enc(k)}${pair}${enc(scalar(v))}`)
      .join(',');
  }
  return enc(scalar(value));
}

// Encoded `key=value` pairs of one query parameter; `key` is already encoded.
function queryPairs(key: string, value: unknown, style: Style, explode: boolean): string[] {
  if (style === 'deepObject') return bracketPairs(key, value);
  const delimiter = DELIMITERS[style];
  if (Array.isArray(value)) {
    const items = value.filter(given).map((item) => encode(scalar(item)));
    if (items.length === 0) return [];
    return explode ? items.map((item) => `${key}=${item}`) : [`${key}=${items.join(delimiter)}`];
  }
  if (isRecord(value)) {
    const entries = present(Object.entries(value)).map(([k, v]) => [encode(k), encode(scalar(v))] as const);
    if (explode) return entries.map(([k, v]) => `${k}=${v}`);
    return entries.length === 0 ? [] : [`${key}=${entries.flat().join(delimiter)}`];
  }
  return [`${key}=${encode(scalar(value))}`];
}

// `a[b]=1&a[c][0]=x`: OpenAPI deepObject, extended to nesting and arrays (indices) the way qs,
// Rails and Stripe read it. Brackets stay literal, as those APIs document them.
function bracketPairs(prefix: string, value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => bracketPairs(`${prefix}[${i}]`, item));
  if (isRecord(value))
    return Object.entries(value).flatMap(([k, v]) => bracketPairs(`${prefix}[${encode(k)}]`, v));
  return given(value) ? [`${prefix}=${encode(scalar(value))}`] : [];
}

// `application/x-www-form-urlencoded`: top-level arrays of scalars repeat the key (OpenAPI's form
// default, as Twilio reads it); nested objects and arrays use brackets (as Stripe reads them).
function formBody(value: unknown): string {
  if (!isRecord(value)) return scalar(value);
  return Object.entries(value)
    .flatMap(([name, v]) => {
      const key = encode(name);
      const scalars = Array.isArray(v) && v.every((item) => !isRecord(item) && !Array.isArray(item));
      return scalars ? queryPairs(key, v, 'form', true) : bracketPairs(key, v);
    })
    .join('&');
}

// Appends `path` (already encoded) to the base URL's path without doubling or dropping a `/`, and
// `query` after the base URL's own query. An empty `path` (a webhook posting to its URL) leaves the
// base path exactly as it is.
/** A base URL taken apart once: what precedes its path, its path without trailing slashes, its query. */
interface BaseParts {
  /** http: or https:, whose paths and queries the rules below describe. */
  web: boolean;
  head: string;
  pathname: string;
  trimmed: string;
  search: string;
}

/** Base URLs seen, taken apart (a deployment has a few per provider); bounded all the same. */
const baseParts = new Map<string, BaseParts>();
const BASES_KEPT = 1_000;

function partsOf(baseUrl: string): BaseParts {
  let parts = baseParts.get(baseUrl);
  if (parts === undefined) {
    const url = new URL(baseUrl);
    parts = {
      web: url.protocol === 'http:' || url.protocol === 'https:',
      // Scheme, user info and host: up to the path's first slash (neither holds one).
      head: url.href.slice(0, url.href.indexOf('/', url.protocol.length + 2)),
      pathname: url.pathname,
      trimmed: url.pathname.replace(/\/+$/, ''),
      search: url.search.slice(1),
    };
    if (baseParts.size >= BASES_KEPT) baseParts.clear();
    baseParts.set(baseUrl, parts);
  }
  return parts;
}

// Characters the URL parser keeps as they are in an http(s) path and query: RFC 3986's unreserved
// and sub-delimiters, `:`, `@`, `%`, `/` (and in a query `[`, `]`, but not `'`).
const PLAIN_PATH = /^[\w\-.~!$&'()*+,;=:@%/]*$/;
const PLAIN_QUERY = /^[\w\-.~!$&()*+,;=:@%/[\]]*$/;
// A segment the URL parser would resolve (`.`, `..`, their percent-encoded forms) starts so.
const DOT_SEGMENT = /(?:^|\/)(?:\.|%2e)/i;

/**
 * The request URL: `path` under the base URL's path, the base's query then `query`, no fragment.
 * Where the path and query hold only characters the URL parser leaves alone (what buildRequest
 * encodes always does) the parts are joined as text around the base URL parsed once; a URL
 * parse and two setters per call cost about 2 µs of a tools/call's CPU (scripts/bench). Anything
 * else goes through the URL parser, which normalises it. test/unit/tools/request.test.ts holds
 * the two to the same answers.
 */
export function joinUrl(baseUrl: string, path: string, query: readonly string[]): string {
  if (!PLAIN_PATH.test(path) || DOT_SEGMENT.test(path) || !query.every((part) => PLAIN_QUERY.test(part)))
    return parsedJoin(baseUrl, path, query);
  const base = partsOf(baseUrl);
  if (!base.web) return parsedJoin(baseUrl, path, query);
  const pathname = path === '' ? base.pathname : base.trimmed + (path.startsWith('/') ? path : `/${path}`);
  let search = base.search;
  for (const part of query) if (part !== '') search = search === '' ? part : `${search}&${part}`;
  return `${base.head}${pathname}${search === '' ? '' : `?${search}`}`;
}

/** {@link joinUrl} through the URL parser. */
export function parsedJoin(baseUrl: string, path: string, query: readonly string[]): string {
  const url = new URL(baseUrl);
  if (path !== '') {
    url.pathname = url.pathname.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`);
  }
  const search = [url.search.slice(1), ...query].filter((part) => part !== '').join('&');
  url.search = search;
  url.hash = '';
  return url.href;
}

/**
 * A raw request to a provider (credential checks, identity, plugins), relative to its base URL:
 * what a plugin may send, plus which of the manifest's named servers to use.
 */
export interface ProviderRequest extends PluginHttpRequest {
  server?: string;
}

/**
 * Turns a raw request into the upstream request: its own absolute `url`, else `path` under
 * `baseUrl`; `query` appended (undefined values left out); a `json` or `form` body encoded with
 * its content type.
 */
export function rawRequest(request: ProviderRequest, baseUrl: string | undefined): UpstreamRequest {
  let url: string;
  if (request.url !== undefined || baseUrl === undefined) {
    url = request.url ?? '';
  } else {
    url =
      request.path === '' ? baseUrl : `${baseUrl.replace(/\/+$/, '')}/${request.path.replace(/^\/+/, '')}`;
  }
  const query = Object.entries(request.query ?? {}).filter(
    (entry): entry is [string, string | number | boolean] => entry[1] !== undefined,
  );
  if (query.length > 0)
    url +=
      (url.includes('?') ? '&' : '?') +
      query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&');
  const headers: Record<string, string> = { accept: 'application/json, */*;q=0.8' };
  for (const [name, value] of Object.entries(request.headers ?? {})) headers[name.toLowerCase()] = value;
  if (request.json !== undefined) {
    headers['content-type'] = 'application/json';
    return { method: request.method, url, headers, body: JSON.stringify(request.json) };
  }
  if (request.form !== undefined) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    return { method: request.method, url, headers, body: new URLSearchParams(request.form).toString() };
  }
  return { method: request.method, url, headers };
}
