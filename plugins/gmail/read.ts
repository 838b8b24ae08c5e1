/**
 * Gmail returns a message's text parts base64url-encoded (`payload.parts[].body.data`, format
 * full), which an agent cannot read. For gmail_get_message and gmail_get_thread the plugin
 * decodes each text/* part into `body.text`, in the part's charset, and leaves the rest of
 * Gmail's answer as it is.
 */
import type { CompiledTool } from '../../core/catalog/types.js';
import type { PluginHttpResponse, PluginToolResult } from '../../core/catalog/plugins/types.js';
import { isRecord } from './errors.js';

const READ_TOOLS = new Set(['gmail_get_message', 'gmail_get_thread']);
/** Characters of text the agent receives (the gateway's default output budget is 50 KB). */
export const READ_BUDGET = 50_000;

/** The readable result of a message or thread; `undefined` leaves other answers to the default. */
export function readableResult(
  response: PluginHttpResponse,
  tool: CompiledTool,
): PluginToolResult | undefined {
  const ok = response.status >= 200 && response.status < 300;
  if (!READ_TOOLS.has(tool.name) || !ok || !isRecord(response.body)) return undefined;
  const text = JSON.stringify(decodeParts(response.body));
  if (text.length <= READ_BUDGET) return { content: [{ type: 'text', text }] };
  const note =
    `[Output truncated: ${(text.length - READ_BUDGET).toLocaleString('en-US')} of ` +
    `${text.length.toLocaleString('en-US')} characters were cut. Read one message at a time with ` +
    'gmail_get_message, or ask for format "metadata" to see only the headers.]';
  return { content: [{ type: 'text', text: `${text.slice(0, READ_BUDGET)}\n\n${note}` }] };
}

/** A copy of `value` in which every text/* part carries `body.text` instead of `body.data`. */
export function decodeParts(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(decodeParts);
  if (!isRecord(value)) return value;
  const copy = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, decodeParts(item)]));
  const { mimeType, body } = copy;
  if (
    typeof mimeType === 'string' &&
    mimeType.startsWith('text/') &&
    isRecord(body) &&
    typeof body.data === 'string'
  ) {
    const { data, ...rest } = body;
    copy.body = { ...rest, text: decode(Buffer.from(data, 'base64url'), charsetOf(copy.headers)) };
  }
  return copy;
}

// The charset of a part's Content-Type header (Gmail lists the part's headers next to its body).
function charsetOf(headers: unknown): string {
  const contentType: unknown = Array.isArray(headers)
    ? headers.find(
        (h) => isRecord(h) && typeof h.name === 'string' && h.name.toLowerCase() === 'content-type',
      )
    : undefined;
  const value = isRecord(contentType) && typeof contentType.value === 'string' ? contentType.value : '';
  return /charset="?([^";\s]+)/i.exec(value)?.[1] ?? 'utf-8';
}

function decode(bytes: Buffer, charset: string): string {
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    // An unknown charset label: UTF-8 is the best guess.
    return bytes.toString('utf8');
  }
}
