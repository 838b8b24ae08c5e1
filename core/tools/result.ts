/**
 * Turns an upstream response, or an outbound failure, into the MCP tool result an agent reads
 * (issue 3, Executor; STYLE.md 5: provider failures are `isError` results, never protocol errors).
 * Texts name the provider, the HTTP status and the provider's own words, and say what to do next;
 * they never repeat request headers or credentials.
 */
import { STATUS_CODES } from 'node:http';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { CompiledTool } from '../catalog/types.js';
import {
  OutboundBlockedError,
  OutboundTimeoutError,
  type OutboundError,
  type OutboundResponse,
} from '../connections/outbound.js';

/** What result shaping needs of a tool (provider tools and plugin tools alike). */
export type ResultTool = Pick<CompiledTool, 'provider' | 'inputSchema' | 'outputSchema'>;

export interface ResultOptions {
  /** Bytes of text the agent receives before the rest is cut; default {@link DEFAULT_OUTPUT_BUDGET}. */
  outputBudget?: number;
  /** The connection's credential values, blanked out wherever the provider echoes them. */
  secrets?: readonly string[];
}

/** Default per-tool output budget in bytes (issue 3: "default e.g. 50 KB"). */
export const DEFAULT_OUTPUT_BUDGET = 50_000;

const PAGING_ARGUMENTS = [
  'page',
  'per_page',
  'page_size',
  'pageSize',
  'limit',
  'cursor',
  'offset',
  'after',
  'before',
  'starting_after',
  'page_token',
  'pageToken',
  'max_results',
  'maxResults',
];
const PROVIDER_MESSAGE_MAX = 300;
const GOOGLE_RATE_LIMIT =
  /"(?:reason|status)"\s*:\s*"(?:rateLimitExceeded|userRateLimitExceeded|RESOURCE_EXHAUSTED)"/;
// Credentials shorter than this are not searched for: blanking "1234" would garble unrelated text.
const SECRET_MIN_LENGTH = 6;

/** Shapes a response that arrived (any status) into a tool result. */
export function responseResult(
  tool: ResultTool,
  response: OutboundResponse,
  options: ResultOptions = {},
): CallToolResult {
  if (response.status < 200 || response.status > 299) return providerErrorResult(tool, response, options);
  if (response.body.length === 0) return text(`Done (HTTP ${response.status}).`);

  const budget = options.outputBudget ?? DEFAULT_OUTPUT_BUDGET;
  const contentType = headerValue(response.headers, 'content-type') ?? '';
  const body = redact(decode(response.body, contentType), options.secrets ?? []);
  const notes: string[] = [];
  if (response.truncated) {
    notes.push(
      `The response was longer than the gateway accepts and only its first ${bytes(response.body.length)} arrived.`,
    );
  }

  const json = response.truncated ? undefined : parseJson(body, contentType);
  if (json === undefined && !isTextual(contentType)) {
    return text(
      `${tool.provider} returned ${bytes(response.body.length)} of ${contentType}, which is not shown as text.`,
    );
  }
  // Within budget, re-indent for readability; beyond it the text is cut anyway, so the provider's
  // own (usually compact) form is kept and the CPU of re-formatting a large document is saved.
  const shown = json !== undefined && response.body.length <= budget ? formatJson(json.value) : body;
  const { kept, total } = cutToBudget(shown, budget);
  if (kept.length < shown.length)
    notes.push(truncationNote(tool, total - Buffer.byteLength(kept), total, budget));

  const result: CallToolResult = { content: [{ type: 'text', text: [kept, ...notes].join('\n\n') }] };
  // Once a tool declares an outputSchema, MCP requires structuredContent on success (clients check).
  if (tool.outputSchema !== undefined && json !== undefined && isRecord(json.value)) {
    result.structuredContent = json.value;
  }
  return result;
}

/** Shapes a failure of the outbound client (refusal, timeout, network) into a tool result. */
export function outboundErrorResult(tool: ResultTool, error: OutboundError): CallToolResult {
  const provider = tool.provider;
  if (error instanceof OutboundBlockedError) {
    const hint =
      error.reason === 'private_address'
        ? ' The gateway only calls public internet addresses; an operator can allow a private network with TOOLGATE_ALLOW_PRIVATE_NETWORK=1.'
        : ' Check the connection settings of this provider.';
    return failure(`Refused to call ${provider}: ${error.message}.${hint}`);
  }
  if (error instanceof OutboundTimeoutError) {
    const seconds = Math.round(error.timeoutMs / 100) / 10;
    return failure(
      `${provider} did not answer within ${seconds} seconds. It may still have carried out the request: ` +
        'check before repeating a change, or try again later.',
    );
  }
  return failure(
    `Calling ${provider} failed: ${error.message}. The provider may be down or unreachable; try again later.`,
  );
}

function providerErrorResult(
  tool: ResultTool,
  response: OutboundResponse,
  options: ResultOptions,
): CallToolResult {
  const { provider } = tool;
  const { status, headers } = response;
  const reason = STATUS_CODES[status];
  const said = providerMessage(response, options.secrets ?? []);
  const lines = [
    `${provider} returned HTTP ${status}${reason === undefined ? '' : ` ${reason}`}${said === undefined ? '.' : `: ${said}`}`,
  ];

  // GitHub answers 403, not 429, when a rate limit is hit (remaining 0, or a Retry-After); Google
  // answers 403 with a reason such as rateLimitExceeded, or RESOURCE_EXHAUSTED.
  const rateLimited =
    status === 429 ||
    (status === 403 &&
      (headerValue(headers, 'x-ratelimit-remaining') === '0' ||
        headerValue(headers, 'retry-after') !== undefined ||
        GOOGLE_RATE_LIMIT.test(response.body.toString('utf8', 0, 4096))));
  const wait = retryAfterSeconds(headers);
  const retry =
    wait === undefined ? 'wait before retrying' : `retry after ${wait} ${wait === 1 ? 'second' : 'seconds'}`;
  const reconnect = `To store a new credential, reconnect with connect_provider (provider "${provider}").`;
  if (rateLimited) {
    lines.push(`${provider} is rate limiting these calls: ${retry}.`);
  } else if (status === 401) {
    lines.push(
      `The credential of this ${provider} connection was refused: it may be wrong, expired or revoked. ${reconnect}`,
    );
  } else if (status === 403) {
    lines.push(
      `The credential of this ${provider} connection was refused for this operation: it may lack a permission or scope, or have been revoked. ${reconnect}`,
    );
  } else if (status === 404) {
    lines.push(
      'Check the identifiers in the arguments; the connected account may also lack access to this resource.',
    );
  } else if (status === 400 || status === 422) {
    lines.push("Check the arguments against the tool's input schema and the provider's message.");
  } else if (status >= 500) {
    lines.push(`This is a failure on ${provider}'s side: ${retry}.`);
  }
  return failure(lines.join('\n'));
}

// The provider's own explanation, from the error shapes APIs commonly use, short and redacted.
/** The provider's own explanation of a failed response, from the error shapes APIs commonly use. */
export function providerMessage(response: OutboundResponse, secrets: readonly string[]): string | undefined {
  const contentType = headerValue(response.headers, 'content-type') ?? '';
  const body = redact(decode(response.body, contentType), secrets).trim();
  if (body === '') return undefined;
  const json = parseJson(body, contentType);
  let message: string | undefined;
  if (json !== undefined) message = messageFromJson(json.value);
  else if (/html/i.test(contentType) || body.startsWith('<'))
    message = /<title[^>]*>([^<]*)<\/title>/i.exec(body)?.[1];
  else message = body;
  if (message === undefined) return undefined;
  const short = clip(message.replace(/\s+/g, ' ').trim(), PROVIDER_MESSAGE_MAX);
  return short === '' ? undefined : short;
}

function messageFromJson(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (!isRecord(value)) return undefined;
  const { error, errors } = value;
  const code = typeof error === 'string' ? error : undefined;
  const description = stringField(value, 'error_description');
  const main =
    // OAuth-style `{error: "invalid_token", error_description: "..."}`: both halves say something.
    (code !== undefined && description !== undefined ? `${code}: ${description}` : undefined) ??
    stringField(value, 'message') ??
    (isRecord(error) ? stringField(error, 'message') : undefined) ??
    code ??
    description ??
    stringField(value, 'detail') ??
    stringField(value, 'title');
  // Lists of details: `errors: [{message}]`, Jira's `errorMessages: [...]` and `errors: {field: text}`.
  const listed: unknown[] = [
    ...(Array.isArray(errors) ? (errors as unknown[]) : []),
    ...(Array.isArray(value.errorMessages) ? (value.errorMessages as unknown[]) : []),
    ...(isRecord(errors)
      ? Object.entries(errors).map(([field, text]) =>
          typeof text === 'string' ? `${field}: ${text}` : undefined,
        )
      : []),
  ];
  const details = listed
    .slice(0, 3)
    .map((item) =>
      typeof item === 'string'
        ? item
        : isRecord(item)
          ? (stringField(item, 'message') ??
            stringField(item, 'detail') ??
            // GitHub's validation errors: {resource, field, code} without a message.
            (stringField(item, 'field') !== undefined && stringField(item, 'code') !== undefined
              ? `${stringField(item, 'field')!}: ${stringField(item, 'code')!}`
              : undefined))
          : undefined,
    )
    .filter((item): item is string => item !== undefined && item !== main);
  if (main === undefined) return details.length > 0 ? details.join('; ') : undefined;
  return details.length > 0 ? `${main} (${details.join('; ')})` : main;
}

function stringField(record: Record<string, unknown>, name: string): string | undefined {
  const value = record[name];
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

// Seconds to wait, from `Retry-After` (delta seconds or an HTTP-date), else from the rate-limit
// reset headers GitHub and others send (epoch seconds or delta seconds).
function retryAfterSeconds(headers: OutboundResponse['headers']): number | undefined {
  const retryAfter = headerValue(headers, 'retry-after')?.trim();
  if (retryAfter !== undefined && retryAfter !== '') {
    if (/^\d+$/.test(retryAfter)) return Number(retryAfter);
    const at = Date.parse(retryAfter);
    if (!Number.isNaN(at)) return Math.max(0, Math.ceil((at - Date.now()) / 1000));
  }
  const reset = headerValue(headers, 'x-ratelimit-reset') ?? headerValue(headers, 'ratelimit-reset');
  if (reset === undefined || !/^\d+$/.test(reset.trim())) return undefined;
  const value = Number(reset);
  // A value past 2001 in epoch seconds is a moment, not a delay.
  return value > 1_000_000_000 ? Math.max(0, value - Math.floor(Date.now() / 1000)) : value;
}

function truncationNote(tool: ResultTool, cut: number, total: number, budget: number): string {
  const properties = isRecord(tool.inputSchema.properties) ? tool.inputSchema.properties : {};
  const paging = PAGING_ARGUMENTS.filter((name) => name in properties);
  const how =
    paging.length > 0
      ? `Request less at a time with this tool's ${paging.map((name) => `\`${name}\``).join(', ')} arguments, or narrow the request.`
      : 'Narrow the request (filters, a smaller range) to get a shorter answer.';
  return `[Output truncated: ${bytes(cut)} of ${bytes(total)} were cut to fit the ${bytes(budget)} output budget. ${how}]`;
}

// Cuts text to at most `budget` UTF-8 bytes without splitting a character; `total` is its full size.
function cutToBudget(value: string, budget: number): { kept: string; total: number } {
  const total = Buffer.byteLength(value);
  if (total <= budget) return { kept: value, total };
  // Every character is at least one byte, so the first `budget` characters hold enough bytes;
  // encoding only those keeps a multi-megabyte body from being copied whole.
  const encoded = Buffer.from(value.slice(0, budget));
  let end = budget;
  while (end > 0 && ((encoded[end] ?? 0) & 0xc0) === 0x80) end--;
  return { kept: encoded.subarray(0, end).toString('utf8'), total };
}

const INLINE_WIDTH = 80;

// JSON indented by two spaces, except that an object or array whose one-line form fits in
// INLINE_WIDTH columns stays on one line: readable, without the token cost of putting
// every short array element on its own line.
function formatJson(value: unknown, indent = ''): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  const inner = `${indent}  `;
  const entries = Array.isArray(value)
    ? value.map((item) => formatJson(item, inner))
    : Object.entries(value).map(([key, item]) => `${JSON.stringify(key)}: ${formatJson(item, inner)}`);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  if (entries.length === 0) return `${open}${close}`;
  const oneLine = `${open}${entries.join(', ')}${close}`;
  if (!oneLine.includes('\n') && indent.length + oneLine.length <= INLINE_WIDTH) return oneLine;
  return `${open}\n${inner}${entries.join(`,\n${inner}`)}\n${indent}${close}`;
}

function parseJson(body: string, contentType: string): { value: unknown } | undefined {
  const declared = /^[^;]*[/+]json\s*(;|$)/i.test(contentType);
  // Without a content type, a body that looks like JSON is tried as JSON.
  if (!declared && !(contentType === '' && /^\s*[[{]/.test(body))) return undefined;
  try {
    return { value: JSON.parse(body) as unknown };
  } catch {
    return undefined;
  }
}

function isTextual(contentType: string): boolean {
  return (
    contentType === '' ||
    /^\s*text\//i.test(contentType) ||
    /json|xml|javascript|yaml|csv|x-www-form-urlencoded|graphql/i.test(contentType.split(';')[0] ?? '')
  );
}

function decode(body: Buffer, contentType: string): string {
  const charset = /charset="?([^";\s]+)/i.exec(contentType)?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    try {
      return new TextDecoder(charset).decode(body);
    } catch {
      // An unknown charset label: UTF-8 is the best guess for an API.
    }
  }
  return body.toString('utf8');
}

function headerValue(headers: OutboundResponse['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function redact(value: string, secrets: readonly string[]): string {
  return secrets
    .filter((secret) => secret.length >= SECRET_MIN_LENGTH)
    .reduce((result, secret) => result.split(secret).join('[redacted]'), value);
}

function clip(value: string, max: number): string {
  return value.length <= max ? value : `${value.slice(0, max - 1)}…`;
}

function bytes(count: number): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? 'byte' : 'bytes'}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }] };
}

function failure(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}
