/**
 * Linear (manifests/linear.yaml): a GraphQL API at POST https://api.linear.app/graphql, so every
 * tool is defined here. The context's HTTP client is bound to the base URL and sends the OAuth
 * access token as `Authorization: Bearer ...` (https://linear.app/developers/graphql).
 */
import type { ProviderPlugin } from '../../core/catalog/plugins/types.js';
import { graphql, isRecord } from './graphql.js';
import { VIEWER } from './queries.js';
import { linearTools } from './tools.js';

/** The linear plugin: its tools, and a connect-time check that asks who the token belongs to. */
export const linearPlugin: ProviderPlugin = {
  id: 'linear',
  tools: linearTools,

  async checkCredential(ctx) {
    const outcome = await graphql(ctx, VIEWER);
    if (!outcome.ok) return { ok: false, message: outcome.message };
    const viewer = isRecord(outcome.data.viewer) ? outcome.data.viewer : {};
    const account = [viewer.email, viewer.name].find((v): v is string => typeof v === 'string' && v !== '');
    return account === undefined ? { ok: true } : { ok: true, account };
  },
};
