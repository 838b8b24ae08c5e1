/**
 * One GraphQL call to Linear and what its failures mean to an agent. Linear answers
 * `{ data }` or `{ errors: [{ message, extensions: { type, code, userPresentableMessage } }] }`,
 * with HTTP 200 or 400 alike; over a rate limit it answers HTTP 400 with `extensions.code`
 * RATELIMITED and `X-RateLimit-*-Reset` headers in epoch milliseconds
 * (https://linear.app/developers/graphql, https://linear.app/developers/rate-limiting).
 */
import type { PluginContext, PluginHttpResponse } from '../../core/catalog/plugins/types.js';

export type GraphqlOutcome = { ok: true; data: Record<string, unknown> } | { ok: false; message: string };

interface GraphqlError {
  message?: unknown;
  extensions?: { type?: unknown; code?: unknown; userPresentableMessage?: unknown };
}

const MESSAGE_MAX = 300;
// Linear limits requests, query complexity and some endpoints separately; each has its own reset.
const LIMITS = ['requests', 'complexity', 'endpoint-requests'] as const;

/** Sends `query` to Linear's GraphQL endpoint; the context's client adds the base URL and token. */
export async function graphql(
  ctx: PluginContext,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<GraphqlOutcome> {
  const response = await ctx.http.request({ method: 'POST', path: '/graphql', json: { query, variables } });
  const body = isRecord(response.body) ? response.body : {};
  const errors = Array.isArray(body.errors) ? (body.errors.filter(isRecord) as GraphqlError[]) : [];
  const ok = response.status >= 200 && response.status < 300;
  if (ok && errors.length === 0 && isRecord(body.data)) return { ok: true, data: body.data };
  return { ok: false, message: failureMessage(response, errors) };
}

/** Whether `value` is a JSON object, for reading fields of an untyped answer. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function failureMessage(response: PluginHttpResponse, errors: GraphqlError[]): string {
  const { status } = response;
  const said = linearSaid(response, errors);
  const quote = said === undefined ? '' : ` Linear said: ${said}`;
  const types = errors.map((e) => e.extensions?.type);
  const rateLimited =
    status === 429 ||
    types.includes('ratelimited') ||
    errors.some((e) => e.extensions?.code === 'RATELIMITED');

  if (rateLimited) return `Linear is rate limiting this connection: ${retryHint(response.headers)}.${quote}`;
  if (status === 401 || types.includes('authentication error')) {
    return (
      "Linear refused this connection's access token: it may have expired or been revoked. " +
      `Reconnect with connect_provider (provider "linear").${quote}`
    );
  }
  if (status === 403 || types.includes('forbidden')) {
    return (
      'Linear does not allow this for the connected account: it may lack access to the team or issue, ' +
      'or the connection may lack the "write" scope that creating and updating need ' +
      `(reconnect with connect_provider to grant it).${quote}`
    );
  }
  if (errors.length > 0) {
    return (
      `Linear rejected the request: ${said ?? 'it gave no reason.'} Check the ids and values in the ` +
      'arguments; linear_list_teams lists team, workflow state and label ids.'
    );
  }
  if (status >= 500) return `Linear failed with HTTP ${status}; try again in a little while.${quote}`;
  if (status >= 200 && status < 300) return 'Linear answered without data; try again.';
  return `Linear answered HTTP ${status}.${quote}`;
}

// Linear's own words, as a sentence: each error's message for people where it has one, else its
// message; for a non-GraphQL answer (a proxy's error page, say) the start of the text.
function linearSaid(response: PluginHttpResponse, errors: GraphqlError[]): string | undefined {
  const messages = errors
    .map((e) => e.extensions?.userPresentableMessage ?? e.message)
    .filter((m): m is string => typeof m === 'string' && m.trim() !== '')
    .map((m) => clip(m.trim()));
  const text = response.body === undefined ? response.text.trim() : '';
  const said = messages.length > 0 ? [...new Set(messages)].join('; ') : clip(text);
  if (said === '') return undefined;
  return /[.!?]$/.test(said) ? said : `${said}.`;
}

function retryHint(headers: Readonly<Record<string, string>>): string {
  const retryAfter = headers['retry-after']?.trim();
  if (retryAfter !== undefined && /^\d+$/.test(retryAfter)) return `retry after ${retryAfter} seconds`;
  // The limit that ran out is the one with nothing remaining; when several did, the latest reset counts.
  const resets = LIMITS.filter((limit) => headers[`x-ratelimit-${limit}-remaining`]?.trim() === '0')
    .map((limit) => headers[`x-ratelimit-${limit}-reset`]?.trim() ?? '')
    .filter((reset) => /^\d+$/.test(reset))
    .map(Number);
  if (resets.length === 0) return 'wait a minute before retrying';
  const at = Math.max(...resets);
  const seconds = Math.max(0, Math.ceil((at - Date.now()) / 1000));
  return `retry after ${new Date(at).toISOString()} (in about ${seconds} seconds)`;
}

function clip(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length <= MESSAGE_MAX ? flat : `${flat.slice(0, MESSAGE_MAX - 1)}…`;
}
