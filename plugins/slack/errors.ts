/**
 * What Slack's Web API error codes mean to an agent, and what to do about each
 * (https://docs.slack.dev/reference/methods, the "Errors" table of each method used here, and
 * https://docs.slack.dev/apis/web-api#errors for the codes every method shares).
 */

const RECONNECT = 'Reconnect Slack with connect_provider (provider "slack").';

export const ERROR_MEANINGS: Readonly<Record<string, string>> = {
  not_authed: `no token reached Slack. ${RECONNECT}`,
  invalid_auth: `Slack does not accept this connection's token. ${RECONNECT}`,
  account_inactive: `the app's installation or its user was deactivated. ${RECONNECT}`,
  token_revoked: `the app was uninstalled or its token revoked. ${RECONNECT}`,
  token_expired: `the token expired and could not be refreshed. ${RECONNECT}`,
  no_permission: `the workspace does not let this app do that. ${RECONNECT}`,
  org_login_required: `the workspace is migrating to an Enterprise organization; try again later, then ${RECONNECT}`,
  team_access_not_granted: `the app is not installed in that workspace of the organization. ${RECONNECT}`,
  missing_scope: 'the app was not granted the scope this method needs.',
  not_allowed_token_type:
    'this method needs a different kind of token (a user token) than this connection holds.',
  channel_not_found:
    'no channel with that ID is visible to the app. Check the ID with slack_list_channels; private channels need the app invited first.',
  not_in_channel:
    'the app is not a member of that channel. Call slack_join_channel (public channels) or ask a member to invite the app, then retry.',
  is_archived: 'the channel is archived.',
  is_private: 'the channel is private: the app cannot join it by itself; a member must invite it.',
  method_not_supported_for_channel_type: 'this method does not work for that kind of conversation.',
  msg_too_long: 'the message text is too long; shorten it or split it into several messages.',
  no_text: 'the message has no content: give `text` (or `blocks`).',
  invalid_blocks: 'a block in `blocks` is malformed; fix it or send `text` alone.',
  invalid_blocks_format: '`blocks` must be a JSON array of block objects.',
  too_many_attachments: 'the message has too many attachments.',
  thread_not_found: 'no thread starts at that `thread_ts` in this channel.',
  message_not_found: 'no message with that ts in this channel.',
  cant_update_message: 'the app can only edit messages it posted itself.',
  edit_window_closed: 'the workspace no longer allows editing that message.',
  already_reacted: 'the app already added that reaction to the message.',
  too_many_reactions: 'the message has as many reactions as Slack allows.',
  invalid_name: 'no emoji has that name; give it without colons, e.g. thumbsup.',
  no_item_specified: 'say which message: give `channel` and `timestamp`.',
  restricted_action: 'a workspace setting prevents the app from doing that; a Slack admin can change it.',
  users_not_found: 'no member of the workspace has that email address.',
  user_not_found: 'no member has that user ID.',
  user_not_visible: 'the app may not see that member.',
  invalid_cursor: 'the cursor is not valid (expired or from another call); start again without it.',
  invalid_limit: '`limit` is out of range.',
  invalid_ts_latest: '`latest` is not a valid Slack timestamp.',
  invalid_ts_oldest: '`oldest` is not a valid Slack timestamp.',
  invalid_arguments: 'an argument is missing or malformed.',
  invalid_types: 'a channel type in `types` is unknown or not covered by the granted scopes.',
  ratelimited: 'Slack is rate limiting this method.',
  ekm_access_denied: 'the workspace administrators have suspended the ability to read or post this content.',
  fatal_error: 'Slack failed to carry out the request; check before retrying a change.',
  internal_error: 'Slack had an internal error; try again in a little while.',
  request_timeout: 'Slack timed out; check before retrying a change.',
  service_unavailable: 'Slack is temporarily unavailable; try again in a little while.',
};
