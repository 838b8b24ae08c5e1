import { beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog, type CatalogSnapshot } from '../../../core/catalog/index.js';
import { PluginRegistry } from '../../../core/catalog/plugins/registry.js';
import { ToolIndex } from '../../../core/tools/search.js';
import { PLUGINS } from '../../../plugins/index.js';
import {
  formatMisses,
  HELD_OUT_FILE,
  HELD_OUT_TARGET,
  RECALL_AT,
  RECALL_TARGET,
  readRequests,
  recallAt,
} from '../../fixtures/retrieval/recall.js';

let snapshot: CatalogSnapshot;

beforeAll(async () => {
  const registry = new PluginRegistry();
  for (const plugin of PLUGINS) registry.register(plugin);
  ({ snapshot } = await buildCatalog({ dir: 'manifests', registry }));
});

// requests.yaml: the set the search was tuned on; held-out.yaml: requests it never saw.
describe.each([
  { set: 'requests.yaml', requests: readRequests(), perProvider: 5, target: RECALL_TARGET },
  { set: 'held-out.yaml', requests: readRequests(HELD_OUT_FILE), perProvider: 3, target: HELD_OUT_TARGET },
])('the retrieval set test/fixtures/retrieval/$set', ({ requests, perProvider, target }) => {
  it('names tools of the bundled catalog, each under its provider', () => {
    const wrong = requests
      .filter((r) => snapshot.tools.get(r.tool)?.provider !== r.provider)
      .map((r) => `${r.provider} ${r.tool}: ${r.request}`);
    expect(wrong).toEqual([]);
  });

  it(`asks at least ${perProvider} things of every bundled provider`, () => {
    // An upstream MCP server's tools are listed per connection, not known to the catalog.
    const thin = [...snapshot.providers.values()]
      .filter((provider) => !provider.spec.mcp)
      .map((provider) => provider.id)
      .filter((id) => requests.filter((r) => r.provider === id).length < perProvider);
    expect(thin).toEqual([]);
  });

  it(`has the tool search find the tool asked for among the first ${RECALL_AT} hits of ${target * 100}% of its requests`, () => {
    const { recall, misses } = recallAt(ToolIndex.of(snapshot), requests, RECALL_AT);
    const report = `recall@${RECALL_AT} ${recall.toFixed(3)}; misses (request -> expected, got):\n${formatMisses(misses)}`;
    expect(recall, report).toBeGreaterThanOrEqual(target);
  });
});

it('keeps the held-out set apart from the tuning set (no request in both)', () => {
  const tuning = new Set(readRequests().map((r) => r.request.toLowerCase()));
  expect(readRequests(HELD_OUT_FILE).filter((r) => tuning.has(r.request.toLowerCase()))).toEqual([]);
});
