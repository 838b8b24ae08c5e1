/**
 * Tool search in a fresh process (the context section of run.ts):
 * `context.js <manifests dir> <GitHub-all dir> <requests file> <held-out file> <passes>`. Indexes
 * the bundled catalog and a synthetic one of at least SYNTHETIC_TOOLS tools (each index timed as
 * it is built), measures recall@k of both retrieval sets over the bundled one, and times the
 * search of every request of the first `passes` times over each, after one pass of warm-up.
 * Prints one JSON line (SearchProbe).
 */
import { performance } from 'node:perf_hooks';
import { buildCatalog, type CatalogSnapshot, type ProviderEntry } from '../../core/catalog/index.js';
import { toolPrefix } from '../../core/catalog/openapi/names.js';
import { PluginRegistry } from '../../core/catalog/plugins/registry.js';
import { ToolIndex } from '../../core/tools/search.js';
import { PLUGINS } from '../../plugins/index.js';
import { RECALL_AT, readRequests, recallAt } from '../../test/fixtures/retrieval/recall.js';
import type { SearchProbe, SearchTimes } from './lib/ipc.js';
import { median, percentile } from './lib/load.js';

/** The synthetic catalog's size: issue 15's "a synthetic catalog of 2,000 tools". */
const SYNTHETIC_TOOLS = 2_000;

/** The provider under another id: its tools renamed to the new prefix, nothing else changed. */
function renamed(provider: ProviderEntry, id: string, displayName: string): ProviderEntry {
  const from = toolPrefix(provider.id).length;
  const name = (tool: string): string => `${toolPrefix(id)}${tool.slice(from)}`;
  return {
    ...provider,
    id,
    displayName,
    tools: provider.tools.map((tool) => ({ ...tool, name: name(tool.name), provider: id })),
    categories: provider.categories.map((category) => ({ ...category, tools: category.tools.map(name) })),
  };
}

/**
 * A catalog as text-rich as real ones and at least `size` tools large: the bundled providers, every
 * operation of GitHub's REST description (1,221 tools written by another hand than the bundled
 * manifests), and renamed copies of the bundled providers until the size is reached. The copies
 * repeat the bundled text, so each query word matches more tools than in a catalog of distinct
 * providers: if anything, a slower search than such a catalog would see.
 */
function synthetic(bundled: CatalogSnapshot, githubAll: ProviderEntry, size: number): CatalogSnapshot {
  const providers = [...bundled.providers.values(), renamed(githubAll, 'github-rest', 'GitHub REST')];
  const count = (): number => providers.reduce((n, p) => n + p.tools.length, 0);
  for (let copy = 2; count() < size; copy++) {
    providers.push(
      ...[...bundled.providers.values()].map((p) =>
        renamed(p, `${p.id}-${copy}`, `${p.displayName} ${copy}`),
      ),
    );
  }
  providers.sort((a, b) => (a.id < b.id ? -1 : 1));
  return {
    version: 1,
    fingerprint: 'synthetic',
    loadedAt: new Date(),
    providers: new Map(providers.map((p) => [p.id, p])),
    tools: new Map(providers.flatMap((p) => p.tools.map((tool) => [tool.name, tool] as const))),
    failed: new Map(),
    stale: new Map(),
  };
}

function timeSearch(snapshot: CatalogSnapshot, queries: readonly string[], passes: number): SearchTimes {
  const started = performance.now();
  const index = ToolIndex.of(snapshot);
  const indexMs = performance.now() - started;
  for (const query of queries) index.search(query, { limit: RECALL_AT });
  const p50: number[] = [];
  const p95: number[] = [];
  for (let pass = 0; pass < passes; pass++) {
    const times = queries
      .map((query) => {
        const t0 = performance.now();
        index.search(query, { limit: RECALL_AT });
        return performance.now() - t0;
      })
      .sort((a, b) => a - b);
    p50.push(percentile(times, 0.5));
    p95.push(percentile(times, 0.95));
  }
  return { tools: snapshot.tools.size, indexMs, p50: median(p50), p95: median(p95) };
}

async function main(): Promise<void> {
  const [dir, githubDir, requestsFile, heldOutFile, passes] = process.argv.slice(2);
  if (!dir || !githubDir || !requestsFile || !heldOutFile || !passes)
    throw new Error(
      'usage: context.ts <manifests dir> <GitHub-all dir> <requests file> <held-out file> <passes>',
    );
  const registry = new PluginRegistry();
  for (const plugin of PLUGINS) registry.register(plugin);
  const { snapshot: bundled } = await buildCatalog({ dir, registry });
  const githubAll = (await buildCatalog({ dir: githubDir, registry })).snapshot.providers.get('github');
  if (!githubAll) throw new Error(`${githubDir}: GitHub's description did not load`);
  const requests = readRequests(requestsFile);
  const queries = requests.map((r) => r.request);
  const { recall, misses } = recallAt(ToolIndex.of(bundled), requests, RECALL_AT);
  const heldOut = readRequests(heldOutFile);
  const probe: SearchProbe = {
    type: 'search',
    requests: requests.length,
    passes: Number(passes),
    // A snapshot of its own, so that its index is built (and timed) afresh.
    bundled: timeSearch({ ...bundled }, queries, Number(passes)),
    synthetic: timeSearch(synthetic(bundled, githubAll, SYNTHETIC_TOOLS), queries, Number(passes)),
    recall,
    misses,
    heldOut: { requests: heldOut.length, ...recallAt(ToolIndex.of(bundled), heldOut, RECALL_AT) },
  };
  process.stdout.write(`${JSON.stringify(probe)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});
