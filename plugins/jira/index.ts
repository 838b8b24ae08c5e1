/**
 * Jira on Atlassian Cloud (manifests/jira.yaml). OAuth 2.0 (3LO) tokens reach a site through
 * https://api.atlassian.com/ex/jira/{cloud_id}; which sites a token may use is only known after
 * consent, from the accessible-resources endpoint
 * (https://developer.atlassian.com/cloud/jira/platform/oauth-2-3lo-apps/). This plugin fills the
 * connection's `cloud_id` from there.
 */
import type { PluginContext, ProviderPlugin } from '../../core/catalog/plugins/types.js';

export const ACCESSIBLE_RESOURCES_URL = 'https://api.atlassian.com/oauth/token/accessible-resources';

interface Site {
  id: string;
  name?: string;
  url?: string;
  scopes?: string[];
}

function isSite(value: unknown): value is Site {
  return typeof value === 'object' && value !== null && typeof (value as Site).id === 'string';
}

async function discoverFields(ctx: PluginContext): Promise<Record<string, string>> {
  const response = await ctx.http.request({ method: 'GET', path: '', url: ACCESSIBLE_RESOURCES_URL });
  if (response.status !== 200 || !Array.isArray(response.body)) {
    throw new Error(`Atlassian did not list the sites this access covers (HTTP ${response.status}).`);
  }
  // Only sites the token may use Jira on (an account may also hold Confluence-only sites).
  const sites = response.body
    .filter(isSite)
    .filter((site) => (site.scopes ?? []).some((scope) => scope.includes('jira')));
  const chosen = ctx.fields.cloud_id;
  if (chosen !== undefined && sites.some((site) => site.id === chosen)) return { cloud_id: chosen };
  if (sites.length === 1) return { cloud_id: sites[0]!.id };
  if (sites.length === 0) throw new Error('The approved Atlassian account gives access to no Jira site.');
  const names = sites.map((site) => `${site.name ?? site.url ?? 'site'} (${site.id})`).join(', ');
  throw new Error(
    `The Atlassian account has several Jira sites: ${names}. Connect again with fields.cloud_id set to the one to use.`,
  );
}

export const jiraPlugin: ProviderPlugin = { id: 'jira', discoverFields };
