import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { providersTable, PROVIDERS_BEGIN, PROVIDERS_END } from '../../core/admin/providers-table.js';
import { buildCatalog } from '../../core/catalog/index.js';
import { PluginRegistry } from '../../core/catalog/plugins/registry.js';
import { PLUGINS } from '../../plugins/index.js';

const README = fileURLToPath(new URL('../../README.md', import.meta.url));
const MANIFESTS = fileURLToPath(new URL('../../manifests', import.meta.url));

describe("README's providers table", () => {
  it('is the one the bundled manifests give (npx tsx scripts/gen-providers-table.ts rewrites it)', async () => {
    const { snapshot } = await buildCatalog({ dir: MANIFESTS, registry: new PluginRegistry(PLUGINS) });
    const readme = readFileSync(README, 'utf8');
    const block = readme.slice(
      readme.indexOf(PROVIDERS_BEGIN),
      readme.indexOf(PROVIDERS_END) + PROVIDERS_END.length,
    );
    expect(block).toBe(providersTable(snapshot));
    // Every bundled provider has its row, with its connection kind and tool count.
    expect(block).toContain('| Twilio | `twilio` | API key (Account SID + Auth Token) |');
    // A provider whose tools come from an upstream MCP server: its kind, and no count before listing.
    expect(block).toContain('| DeepWiki | `deepwiki` | MCP server, nothing (no credentials) |');
    expect(block).toMatch(/\| `sentry` \| MCP server, OAuth2 \(discovered\) \| .* \| listed per user \|/);
    expect(block.split('\n').filter((line) => line.startsWith('| ') && line.includes('`'))).toHaveLength(
      snapshot.providers.size,
    );
  });
});
