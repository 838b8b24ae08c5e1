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
  type OutboundError,
  type OutboundResponse,
  OutboundTimeoutError,
} from '../upstream/outbound.js';
import {
  decode,
  headerValue,
  isJsonBody,
  isRecord,
  mediaType,
  parseJsonText,
  providerMessage,
  redact,
  retryAfterSeconds,
} from '../upstream/response.js';
import { compactJson } from './json-compact.js';

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
const GOOGLE_RATE_LIMIT =
  /"(?:reason|status)"\s*:\s*"(?:rateLimitExceeded|userRateLimitExceeded|RESOURCE_EXHAUSTED)"/;

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
  const type = mediaType(contentType);
  if (!type.textual) {
    return text(
      `${tool.provider} returned ${bytes(response.body.length)} of ${contentType}, which is not shown as text.`,
    );
  }
  const body = redact(decode(response.body, type), options.secrets ?? []);
  const notes: string[] = [];
  if (response.truncated) {
    notes.push(
      `The response was longer than the gateway accepts and only its first ${bytes(response.body.length)} arrived.`,
    );
  }

  const isJson = !response.truncated && isJsonBody(body, type);
  // Within budget, compact (json-compact.ts); beyond it the text is cut anyway, so the provider's
  // own form is kept and the CPU of reading a large document is saved.
  let shown = isJson && response.body.length <= budget ? compactJson(body) : body;
  // A UTF-16 unit is at most 3 bytes of UTF-8: a text this short fits unmeasured (measuring a
  // compacted text reads it all, before writing the result out reads it again).
  if (shown.length * 3 > budget) {
    const { kept, total } = cutToBudget(shown, budget);
    if (kept.length < shown.length)
      notes.push(truncationNote(tool, total - Buffer.byteLength(kept), total, budget));
    shown = kept;
  }

  // Most results have no note: their text is the shown one itself, no array joined.
  const joined = notes.length === 0 ? shown : [shown, ...notes].join('\n\n');
  const result: CallToolResult = { content: [{ type: 'text', text: joined }] };
  // Once a tool declares an outputSchema, MCP requires structuredContent on success (clients check).
  const structured = tool.outputSchema !== undefined && isJson ? parseJsonText(body) : undefined;
  if (structured !== undefined && isRecord(structured.value)) result.structuredContent = structured.value;
  return result;
}

/**
 * An upstream MCP server's tool result as the agent gets it: its content and structuredContent
 * passed through (isError included) within the output budget, text cut as REST results are, other
 * blocks (images, resources) kept while they fit, credential values blanked out of text. A
 * structuredContent over the budget is left out, or, where the tool declares an outputSchema (so
 * clients require it), the call fails saying so.
 */
export function upstreamResult(
  tool: ResultTool,
  result: CallToolResult,
  options: ResultOptions = {},
): CallToolResult {
  const budget = options.outputBudget ?? DEFAULT_OUTPUT_BUDGET;
  let left = budget;
  let total = 0;
  let dropped = 0;
  const content: CallToolResult['content'] = [];
  for (const block of result.content) {
    if (block.type === 'text') {
      const { kept, total: size } = cutToBudget(redact(block.text, options.secrets ?? []), left);
      total += size;
      left -= Buffer.byteLength(kept);
      content.push({ ...block, text: kept });
      continue;
    }
    const size = Buffer.byteLength(JSON.stringify(block));
    total += size;
    if (size <= left) {
      content.push(block);
      left -= size;
    } else dropped++;
  }
  const out: CallToolResult = { content, ...(result.isError === true ? { isError: true } : {}) };
  if (result.structuredContent !== undefined) {
    const size = Buffer.byteLength(JSON.stringify(result.structuredContent));
    if (size <= budget) out.structuredContent = result.structuredContent;
    else if (tool.outputSchema !== undefined)
      return failure(
        `${tool.provider} answered with ${bytes(size)} of structured content, over the ${bytes(budget)} output budget. Narrow the request (filters, a smaller range) to get a shorter answer.`,
      );
  }
  const cut = total - (budget - left);
  if (cut > 0 || dropped > 0) {
    const blocks = dropped > 0 ? ` (${dropped} non-text block(s) left out)` : '';
    content.push({ type: 'text', text: `${truncationNote(tool, cut, total, budget)}${blocks}` });
  }
  return out;
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

function bytes(count: number): string {
  return `${count.toLocaleString('en-US')} ${count === 1 ? 'byte' : 'bytes'}`;
}

function text(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }] };
}

function failure(message: string): CallToolResult {
  return { content: [{ type: 'text', text: message }], isError: true };
}
