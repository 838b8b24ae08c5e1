/**
 * Writes manifests/manifest.schema.json from the TypeBox manifest schema, the one source of truth
 * (STYLE.md, practice 1). `--check` writes nothing and exits 1 when the file is stale (CI).
 *
 *   npx tsx scripts/gen-manifest-schema.ts [--check]
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { manifestJsonSchema } from '../core/catalog/manifest-schema.js';

const target = fileURLToPath(new URL('../manifests/manifest.schema.json', import.meta.url));
const expected = `${JSON.stringify(manifestJsonSchema(), null, 2)}\n`;

if (process.argv.includes('--check')) {
  const actual = await readFile(target, 'utf8').catch(() => '');
  if (actual !== expected) {
    console.error(`${target} is stale; run: npx tsx scripts/gen-manifest-schema.ts`);
    process.exit(1);
  }
  console.log(`${target} is up to date`);
} else {
  await writeFile(target, expected);
  console.log(`wrote ${target}`);
}
