/**
 * One cold catalog build in a fresh process: `tsx scripts/bench/catalog.ts <manifests dir>`.
 * Everything is imported first, so the time is the build alone (read, parse, compile), as at a
 * gateway's start; the peak resident set is the process's, read after the build. Prints one JSON
 * line (CatalogProbe).
 */
import { performance } from 'node:perf_hooks';
import { buildCatalog } from '../../core/catalog/index.js';
import { PluginRegistry } from '../../core/catalog/plugins/registry.js';
import { PLUGINS } from '../../plugins/index.js';
import type { CatalogProbe } from './lib/ipc.js';
import { schemaSize } from '../../core/catalog/openapi/schema.js';

async function main(): Promise<void> {
  const dir = process.argv[2];
  if (!dir) throw new Error('usage: catalog.ts <manifests dir>');
  const registry = new PluginRegistry();
  for (const plugin of PLUGINS) registry.register(plugin);
  const rssBefore = process.memoryUsage().rss;
  const started = performance.now();
  const { snapshot, report } = await buildCatalog({ dir, registry });
  const ms = performance.now() - started;
  const probe: CatalogProbe = {
    type: 'catalog',
    ms,
    providers: snapshot.providers.size,
    tools: snapshot.tools.size,
    failed: report.failed,
    rssBefore,
    // maxRSS is in KiB: the peak of the whole process, reached during the build, plus that of the
    // build workers (child processes) beside it: an upper bound of the memory the build took.
    rssPeak: process.resourceUsage().maxRSS * 1024 + report.workerRssPeakMb * 2 ** 20,
    heapUsedAfter: process.memoryUsage().heapUsed,
    maxInputBytes: Math.max(0, ...[...snapshot.tools.values()].map((t) => schemaSize(t.inputSchema).bytes)),
  };
  process.stdout.write(`${JSON.stringify(probe)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});
