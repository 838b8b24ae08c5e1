/**
 * Slack Web API (manifests/slack.yaml). The manifest's OpenAPI subset builds the requests; this
 * plugin covers what the default handling cannot: Slack answers failures with HTTP 200 and
 * `{"ok": false, "error": "<code>"}` (https://docs.slack.dev/apis/web-api#responses), so those
 * become error results that explain the code, and JSON bodies carry the charset Slack asks for
 * (without it every answer carries a `missing_charset` warning).
 */
import type {
  PluginContext,
  PluginHttpResponse,
  PluginToolResult,
  ProviderPlugin,
} from '../../core/catalog/plugins/types.js';
import { ERROR_MEANINGS } from './errors.js';

interface SlackFailure {
  ok: false;
  error?: unknown;
  needed?: unknown;
  provided?: unknown;
  response_metadata?: { messages?: unknown };
}

/** The slack plugin: Slack's `ok: false` answers as error results, and a credential check on auth.test. */
export const slackPlugin: ProviderPlugin = {
  id: 'slack',

  onRequest(request) {
    const type = request.headers['content-type'];
    if (type !== undefined && /^application\/json\s*$/i.test(type))
      request.headers['content-type'] = 'application/json; charset=utf-8';
  },

  shapeResponse(response, tool) {
    const failure = slackFailure(response);
    return failure ? failureResult(describeFailure(failure, response, tool.name)) : undefined;
  },

  // auth.test answers {ok: true, team, user, ...} for a working token and HTTP 200 {ok: false}
  // for a refused one (https://docs.slack.dev/reference/methods/auth.test).
  async checkCredential(ctx: PluginContext) {
    const response = await ctx.http.request({ method: 'POST', path: '/auth.test' });
    const failure = slackFailure(response);
    if (failure) return { ok: false, message: describeFailure(failure, response, 'auth.test') };
    const body = isRecord(response.body) ? response.body : {};
    if (body.ok !== true)
      return { ok: false, message: `Slack answered HTTP ${response.status} without a result.` };
    const team = typeof body.team === 'string' && body.team !== '' ? body.team : undefined;
    return team === undefined ? { ok: true } : { ok: true, account: team };
  },
};

function slackFailure(response: PluginHttpResponse): SlackFailure | undefined {
  const body = response.body;
  return isRecord(body) && body.ok === false ? (body as unknown as SlackFailure) : undefined;
}

function describeFailure(failure: SlackFailure, response: PluginHttpResponse, method: string): string {
  const code = typeof failure.error === 'string' && failure.error !== '' ? failure.error : 'unknown_error';
  const meaning = ERROR_MEANINGS[code] ?? 'see the method\'s "Errors" table in Slack\'s reference.';
  const lines = [`Slack refused ${method}: ${meaning} (Slack error "${code}".)`];
  if (code === 'missing_scope') {
    const needed = typeof failure.needed === 'string' ? failure.needed : 'a scope this method lists';
    lines.push(
      `It needs ${needed}. An operator adds the scope to the Slack app, then the user reconnects with connect_provider (provider "slack") to grant it.`,
    );
  }
  const details = failure.response_metadata?.messages;
  if (Array.isArray(details)) {
    const said = details.filter((m): m is string => typeof m === 'string').slice(0, 3);
    if (said.length > 0) lines.push(`Slack said: ${said.join('; ')}`);
  }
  if (response.status === 429 || code === 'ratelimited') lines.push(retryHint(response.headers));
  return lines.join('\n');
}

function retryHint(headers: Readonly<Record<string, string>>): string {
  const seconds = headers['retry-after']?.trim();
  return seconds !== undefined && /^\d+$/.test(seconds)
    ? `Retry after ${seconds} ${seconds === '1' ? 'second' : 'seconds'}.`
    : 'Wait a minute before retrying.';
}

function failureResult(text: string): PluginToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
