import { beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog, type CatalogSnapshot } from '../../../core/catalog/index.js';
import { PluginRegistry } from '../../../core/catalog/plugins/registry.js';
import { ToolIndex } from '../../../core/tools/search.js';
import { PLUGINS } from '../../../plugins/index.js';
import {
  formatMisses,
  RECALL_AT,
  RECALL_TARGET,
  readRequests,
  recallAt,
} from '../../fixtures/retrieval/recall.js';

const MIN_PER_PROVIDER = 5;

const requests = readRequests();
let snapshot: CatalogSnapshot;

beforeAll(async () => {
  const registry = new PluginRegistry();
  for (const plugin of PLUGINS) registry.register(plugin);
  ({ snapshot } = await buildCatalog({ dir: 'manifests', registry }));
});

describe('the retrieval set (test/fixtures/retrieval/requests.yaml)', () => {
  it('names tools of the bundled catalog, each under its provider', () => {
    const wrong = requests
      .filter((r) => snapshot.tools.get(r.tool)?.provider !== r.provider)
      .map((r) => `${r.provider} ${r.tool}: ${r.request}`);
    expect(wrong).toEqual([]);
  });

  it(`asks at least ${MIN_PER_PROVIDER} things of every bundled provider`, () => {
    const thin = [...snapshot.providers.keys()].filter(
      (id) => requests.filter((r) => r.provider === id).length < MIN_PER_PROVIDER,
    );
    expect(thin).toEqual([]);
  });
});

describe('tool search over the bundled catalog', () => {
  it(`finds the tool asked for among the first ${RECALL_AT} hits of ${RECALL_TARGET * 100}% of the requests`, () => {
    const { recall, misses } = recallAt(ToolIndex.of(snapshot), requests, RECALL_AT);
    const report = `recall@${RECALL_AT} ${recall.toFixed(3)}; misses (request -> expected, got):\n${formatMisses(misses)}`;
    expect(recall, report).toBeGreaterThanOrEqual(RECALL_TARGET);
  });
});
