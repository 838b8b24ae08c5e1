/**
 * `npx tsx scripts/bench/readme.ts [--check]`: writes README's Performance figures from
 * scripts/bench/results.json (a full `npm run bench` does it too); `--check` (part of `npm run
 * check`) exits 1 when README's block is not what the results file gives.
 */
import { join } from 'node:path';
import { REPO } from './lib/fixtures.js';
import { updateReadme } from './lib/readme.js';

const check = process.argv.includes('--check');
const current = updateReadme(join(REPO, 'README.md'), join(REPO, 'scripts/bench/results.json'), check);
if (check && !current) {
  process.stderr.write(
    "README.md's Performance figures differ from scripts/bench/results.json: run npx tsx scripts/bench/readme.ts\n",
  );
  process.exit(1);
}
