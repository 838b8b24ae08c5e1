/**
 * Writes README's table of the bundled providers from manifests/ (core/admin/providers-table.ts);
 * `--check` writes nothing and exits 1 when README's table is stale.
 *
 *   npx tsx scripts/gen-providers-table.ts [--check]
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { withProvidersTable } from '../core/admin/providers-table.js';
import { buildCatalog } from '../core/catalog/index.js';
import { PluginRegistry } from '../core/catalog/plugins/registry.js';
import { PLUGINS } from '../plugins/index.js';

const readmeFile = fileURLToPath(new URL('../README.md', import.meta.url));
const dir = fileURLToPath(new URL('../manifests', import.meta.url));

const { snapshot } = await buildCatalog({ dir, registry: new PluginRegistry(PLUGINS) });
const readme = await readFile(readmeFile, 'utf8');
const next = withProvidersTable(readme, snapshot);
if (next === readme) process.stdout.write(`${readmeFile}'s providers table is up to date\n`);
else if (process.argv.includes('--check')) {
  process.stderr.write(
    `${readmeFile}'s providers table is stale: run npx tsx scripts/gen-providers-table.ts\n`,
  );
  process.exitCode = 1;
} else {
  await writeFile(readmeFile, next);
  process.stdout.write(`wrote ${readmeFile}'s providers table\n`);
}
