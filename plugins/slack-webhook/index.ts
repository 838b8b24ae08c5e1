/**
 * Slack incoming webhooks (manifests/slack-webhook.yaml). The manifest's inline tool sends the
 * message; this plugin reads Slack's plain-text answers: `ok` on success, otherwise an error code
 * with a 4xx/5xx status (https://api.slack.com/messaging/webhooks,
 * https://api.slack.com/changelog/2016-05-17-changes-to-errors-for-incoming-webhooks).
 */
import type {
  PluginHttpResponse,
  PluginToolResult,
  ProviderPlugin,
} from '../../core/catalog/plugins/types.js';

const RECONNECT =
  'Ask the user for a new webhook URL (Slack app settings > Incoming Webhooks) and reconnect with ' +
  'connect_provider (provider "slack-webhook").';
const NEW_CHANNEL =
  'Ask the user for a webhook bound to another channel and reconnect with connect_provider (provider "slack-webhook").';

// What each documented error code means, and what to do about it.
const ERROR_CODES: Readonly<Record<string, string>> = {
  invalid_payload:
    'the request could not be read as a message. Check that `blocks` is a list of valid Block Kit blocks, or send `text` alone.',
  user_not_found: 'the user named in the request does not exist in the workspace.',
  no_text: 'the message had no text. Send a non-empty `text`.',
  invalid_blocks:
    'Slack rejected `blocks`: a block is malformed or uses a type or field Slack does not accept. Fix the blocks, or send `text` alone.',
  invalid_blocks_format:
    '`blocks` is not a list of block objects. Send a JSON array of blocks, or `text` alone.',
  too_many_attachments: 'the message carries more attachments than Slack allows. Send fewer.',
  invalid_token: `the webhook's token is no longer valid: the webhook was removed or revoked. ${RECONNECT}`,
  no_service: `the webhook is disabled, removed or invalid. ${RECONNECT}`,
  no_active_hooks: `the webhook is no longer active (its app's incoming webhooks were turned off or removed). ${RECONNECT}`,
  channel_not_found: `the channel the webhook posts to no longer exists. ${NEW_CHANNEL}`,
  channel_is_archived: `the webhook's channel is archived. Unarchive it in Slack, or: ${NEW_CHANNEL}`,
  action_prohibited:
    'a workspace admin has restricted posting through this webhook. Retrying will not help; ask a Slack admin.',
  posting_to_general_channel_denied: `an admin has restricted posting to #general. ${NEW_CHANNEL}`,
  rollup_error:
    'Slack had an internal error that was not caused by the message. Try again in a little while.',
};

/** The slack-webhook plugin: shapes Slack's text answers and accepts any URL the manifest's pattern allows. */
export const slackWebhookPlugin: ProviderPlugin = {
  id: 'slack-webhook',

  shapeResponse(response) {
    const said = response.text.trim();
    if (response.status >= 200 && response.status < 300 && said === 'ok') {
      return { content: [{ type: 'text', text: "Message posted to the webhook's channel." }] };
    }
    if (response.status === 429) return failure(rateLimited(response));
    const meaning = ERROR_CODES[said];
    if (meaning === undefined) return undefined;
    return failure(
      `Slack did not post the message: ${meaning} (Slack answered HTTP ${response.status} "${said}".)`,
    );
  },

  // Slack has no side-effect-free call for an incoming webhook: any POST to the URL either posts a
  // message to the channel or fails in a way the channel's members may see. The manifest's pattern
  // has already checked the URL's shape, so the connection is accepted without a probe and the
  // first real message reports a revoked or mistyped webhook.
  checkCredential() {
    return Promise.resolve({ ok: true });
  },
};

function rateLimited(response: PluginHttpResponse): string {
  const seconds = response.headers['retry-after']?.trim();
  const wait =
    seconds !== undefined && /^\d+$/.test(seconds)
      ? `retry after ${seconds} ${seconds === '1' ? 'second' : 'seconds'}`
      : 'wait a few seconds before retrying';
  return `Slack is rate limiting this webhook (it accepts about one message per second): ${wait}.`;
}

function failure(text: string): PluginToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
