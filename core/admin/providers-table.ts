/**
 * README's table of the bundled providers, generated from the catalog so that it cannot drift from
 * manifests/: `npx tsx scripts/gen-providers-table.ts` rewrites the block between the markers, and
 * a test fails when README's block is not what the bundled catalog gives.
 */
import type { CatalogSnapshot, ProviderEntry } from '../catalog/index.js';
import { markdownRow, replaceBlock } from './markdown.js';

export const PROVIDERS_BEGIN =
  '<!-- providers:begin (generated from manifests/ by npx tsx scripts/gen-providers-table.ts; do not edit) -->';
export const PROVIDERS_END = '<!-- providers:end -->';

const KIND: Record<ProviderEntry['auth']['kind'], string> = {
  api_key: 'API key',
  oauth2: 'OAuth2',
  webhook_url: 'Webhook URL',
  none: 'nothing (no credentials)',
};

/**
 * How a user connects: the auth kind, and what they type when it is more than one key; a provider
 * whose tools come from an upstream MCP server says so, and whether its OAuth endpoints are
 * discovered from that server.
 */
function connectsWith(provider: ProviderEntry): string {
  const { auth, connection_fields: fields, mcp } = provider.spec;
  if (mcp) {
    const discovered = auth.kind === 'oauth2' && auth.discovery === 'mcp';
    return `MCP server, ${discovered ? 'OAuth2 (discovered)' : KIND[auth.kind]}`;
  }
  const kind = KIND[auth.kind];
  if (auth.kind !== 'api_key') return kind;
  const credentials = Object.values(auth.credentials).map((c) => c.title);
  const typed = [...Object.values(fields ?? {}).map((f) => f.title), credentials.join(' + ')];
  return credentials.length > 1 || typed.length > 1 ? `${kind} (${typed.join(', ')})` : kind;
}

/** The block, markers included: one row per provider in id order. */
export function providersTable(snapshot: CatalogSnapshot): string {
  const rows = [...snapshot.providers.values()].map((p) =>
    markdownRow([
      p.displayName,
      `\`${p.id}\``,
      connectsWith(p),
      p.categories.map((c) => c.title).join(', '),
      // An MCP server's tools are listed per connection, so the catalog alone cannot count them.
      p.spec.mcp ? 'listed per user' : String(p.tools.length),
    ]),
  );
  return [
    PROVIDERS_BEGIN,
    '| Provider | id | Connects with | Categories | Tools |',
    '|---|---|---|---|---|',
    ...rows,
    PROVIDERS_END,
  ].join('\n');
}

/** README's text with its providers block replaced by the one `snapshot` gives. */
export function withProvidersTable(readme: string, snapshot: CatalogSnapshot): string {
  return replaceBlock(readme, PROVIDERS_BEGIN, PROVIDERS_END, providersTable(snapshot));
}
