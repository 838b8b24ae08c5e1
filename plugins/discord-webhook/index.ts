/**
 * Discord webhooks (manifests/discord-webhook.yaml). The manifest's inline tools send the requests;
 * this plugin reads the Discord answers the default shaping would flatten
 * (https://docs.discord.com/developers/topics/rate-limits, .../topics/opcodes-and-status-codes):
 * a 429's JSON body `{message, retry_after, global}` (seconds, with decimals, and whether the limit
 * is global rather than this webhook's), a 400's nested form errors, and the codes that mean the
 * webhook itself is gone. It also keeps the webhook's token (part of the secret URL) out of the
 * webhook object Discord returns. Other answers keep the default shaping.
 */
import type {
  PluginHttpResponse,
  PluginToolResult,
  ProviderPlugin,
} from '../../core/catalog/plugins/types.js';

/** JSON error codes meaning the webhook URL no longer works (Unknown Webhook, Invalid Webhook Token). */
const WEBHOOK_GONE = new Set([10015, 50027]);
const MAX_FIELD_ERRORS = 5;
/** Fields of Discord's webhook object that carry (part of) the secret webhook URL. */
const SECRET_KEYS = new Set(['token', 'url']);

/** The discord-webhook plugin: clear rate-limit, validation and revoked-webhook messages. */
export const discordWebhookPlugin: ProviderPlugin = {
  id: 'discord-webhook',

  shapeResponse(response) {
    const body = isRecord(response.body) ? response.body : {};
    const said = typeof body.message === 'string' ? body.message : undefined;
    if (
      response.status >= 200 &&
      response.status < 300 &&
      Object.keys(body).some((key) => SECRET_KEYS.has(key))
    ) {
      const webhook = Object.fromEntries(Object.entries(body).filter(([key]) => !SECRET_KEYS.has(key)));
      return { content: [{ type: 'text', text: JSON.stringify(webhook) }] };
    }
    if (response.status === 429) return failure(rateLimited(response, body));
    if (typeof body.code === 'number' && WEBHOOK_GONE.has(body.code)) {
      return failure(
        `Discord no longer accepts this webhook URL (${said ?? 'unknown webhook'}, HTTP ${response.status}): ` +
          'the webhook was deleted or its token reset. Ask the user for a new webhook URL and reconnect ' +
          'with connect_provider (provider "discord-webhook").',
      );
    }
    if (response.status === 400 && said !== undefined) {
      const fields = fieldErrors(body.errors);
      return failure(
        `Discord rejected the request (HTTP 400): ${said}${fields.length > 0 ? ` (${fields.join('; ')})` : ''}. ` +
          'Fix the arguments named and try again.',
      );
    }
    return undefined;
  },
};

// Discord's body says how long to wait in seconds with decimals; the Retry-After header rounds it.
function rateLimited(response: PluginHttpResponse, body: Record<string, unknown>): string {
  const seconds =
    typeof body.retry_after === 'number'
      ? body.retry_after
      : Number.parseFloat(response.headers['retry-after'] ?? '');
  const wait = Number.isFinite(seconds)
    ? `retry after ${Math.ceil(seconds * 10) / 10} seconds`
    : 'wait a few seconds before retrying';
  const scope =
    body.global === true
      ? 'Discord is rate limiting all webhook requests from this gateway (a global limit)'
      : 'Discord is rate limiting this webhook (it accepts about 2 requests per second)';
  const said = typeof body.message === 'string' ? ` Discord said: "${body.message}"` : '';
  return `${scope}: ${wait}. The message was not posted.${said}`;
}

// {"embeds": {"0": {"description": {"_errors": [{"code": "...", "message": "..."}]}}} -> "embeds.0.description: ..."
function fieldErrors(errors: unknown, path: string[] = []): string[] {
  if (!isRecord(errors)) return [];
  const here = Array.isArray(errors._errors)
    ? errors._errors
        .map((e) => (isRecord(e) && typeof e.message === 'string' ? e.message : undefined))
        .filter((m): m is string => m !== undefined)
        .map((m) => (path.length > 0 ? `${path.join('.')}: ${m}` : m))
    : [];
  const nested = Object.entries(errors)
    .filter(([key]) => key !== '_errors')
    .flatMap(([key, value]) => fieldErrors(value, [...path, key]));
  return [...here, ...nested].slice(0, MAX_FIELD_ERRORS);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function failure(text: string): PluginToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
