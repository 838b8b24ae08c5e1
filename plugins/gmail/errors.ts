/**
 * Gmail's failures in words an agent can act on. Google APIs answer
 * `{error: {code, message, status, errors: [{reason, domain, message}]}}`; over a quota they
 * answer 429, or 403 with reason rateLimitExceeded / userRateLimitExceeded
 * (https://developers.google.com/workspace/gmail/api/guides/handle-errors).
 */
import type { PluginHttpResponse, PluginToolResult } from '../../core/catalog/plugins/types.js';

const RATE_LIMITED = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'RESOURCE_EXHAUSTED']);
const MISSING_SCOPE = new Set(['insufficientPermissions', 'ACCESS_TOKEN_SCOPE_INSUFFICIENT']);
const MESSAGE_MAX = 300;

/** Whether `value` is a JSON object, for reading fields of an untyped answer. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An `isError` result an agent reads. */
export function failure(text: string): PluginToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** The tool result for a Gmail answer outside 2xx. */
export function gmailFailure(response: PluginHttpResponse): PluginToolResult {
  const error = isRecord(response.body) && isRecord(response.body.error) ? response.body.error : {};
  const said = typeof error.message === 'string' ? error.message : response.text.trim();
  const reasons = [
    error.status,
    ...(Array.isArray(error.errors) ? error.errors.map((e) => (isRecord(e) ? e.reason : undefined)) : []),
  ].filter((r): r is string => typeof r === 'string');
  const quote = said === '' ? '' : `: ${clip(said.replace(/\s+/g, ' '))}`;
  return failure(`Gmail answered HTTP ${response.status}${quote}\n${advice(response, reasons)}`);
}

function advice(response: PluginHttpResponse, reasons: string[]): string {
  const { status } = response;
  if (status === 429 || reasons.some((r) => RATE_LIMITED.has(r))) {
    const seconds = response.headers['retry-after']?.trim();
    const wait =
      seconds !== undefined && /^\d+$/.test(seconds)
        ? `retry after ${seconds} seconds`
        : 'wait a minute, then retry';
    return `Gmail is rate limiting this account (sending costs 100 quota units a message): ${wait}.`;
  }
  const reconnect = 'Reconnect with connect_provider (provider "gmail").';
  if (status === 401)
    return `Google refused the connection's access token: it expired or was revoked. ${reconnect}`;
  if (status === 403 && reasons.some((r) => MISSING_SCOPE.has(r))) {
    return `The Gmail connection was not granted the permission this needs. ${reconnect}`;
  }
  if (status === 403) return 'Google does not allow this for the connected account.';
  if (status === 404)
    return 'Check the ids in the arguments (thread_id): Gmail has no such thread or message.';
  if (status === 400) return 'Check the arguments: the addresses, thread_id and the message text.';
  if (status >= 500) return "This is a failure on Gmail's side: try again in a little while.";
  return 'Nothing was sent or saved.';
}

function clip(text: string): string {
  return text.length <= MESSAGE_MAX ? text : `${text.slice(0, MESSAGE_MAX - 1)}…`;
}
