/**
 * Every code plugin, for the composition root to register (core never imports plugins/; DESIGN.md,
 * Layout). A manifest names its plugin by id (`plugin: <id>`).
 */
import type { ProviderPlugin } from '../core/catalog/plugins/types.js';
import { discordWebhookPlugin } from './discord-webhook/index.js';
import { gmailPlugin } from './gmail/index.js';
import { jiraPlugin } from './jira/index.js';
import { linearPlugin } from './linear/index.js';
import { slackWebhookPlugin } from './slack-webhook/index.js';
import { slackPlugin } from './slack/index.js';
import { teamsWebhookPlugin } from './teams-webhook/index.js';
import { twilioPlugin } from './twilio/index.js';
import { zendeskPlugin } from './zendesk/index.js';

/** The plugins, by id order. */
export const PLUGINS: ProviderPlugin[] = [
  discordWebhookPlugin,
  gmailPlugin,
  jiraPlugin,
  linearPlugin,
  slackPlugin,
  slackWebhookPlugin,
  teamsWebhookPlugin,
  twilioPlugin,
  zendeskPlugin,
];
