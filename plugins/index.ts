/**
 * Every code plugin, for the composition root to register (core never imports plugins/; DESIGN.md,
 * Layout). A manifest names its plugin by id (`plugin: <id>`).
 */
import type { ProviderPlugin } from '../core/plugins/types.js';
import { linearPlugin } from './linear/index.js';
import { slackWebhookPlugin } from './slack-webhook/index.js';

/** The plugins, by id order. */
export const PLUGINS: ProviderPlugin[] = [linearPlugin, slackWebhookPlugin];
