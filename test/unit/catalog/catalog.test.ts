import { cp, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../../core/catalog/catalog.js';
import { CatalogHolder } from '../../../core/catalog/holder.js';
import type { CatalogReport } from '../../../core/catalog/catalog.js';
import { PluginRegistry } from '../../../core/catalog/plugins/registry.js';
import { fixtureRegistry, linearTools } from '../../fixtures/catalog/plugins.js';

let dir: string;
const registry = fixtureRegistry();

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tg-catalog-'));
  await cp('test/fixtures/catalog/valid', dir, { recursive: true });
  await cp('manifests/linear.yaml', join(dir, 'linear.yaml'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const edit = async (file: string, from: string | RegExp, to: string) => {
  const path = join(dir, file);
  await writeFile(path, (await readFile(path, 'utf8')).replace(from, to));
};

const summary = (report: CatalogReport) => ({
  added: report.added,
  changed: report.changed,
  removed: report.removed,
  unchanged: report.unchanged,
  keptOld: report.keptOld,
  failed: report.failed,
  toolsChanged: report.toolsChanged,
});

describe('buildCatalog', () => {
  it('builds every provider of a directory into one snapshot, pinned', async () => {
    const { snapshot, report } = await buildCatalog({ dir, registry });
    expect(summary(report)).toEqual({
      added: ['linear', 'petshop'],
      changed: [],
      removed: [],
      unchanged: [],
      keptOld: [],
      failed: [],
      toolsChanged: ['linear', 'petshop'],
    });
    expect(snapshot.version).toBe(1);
    expect([...snapshot.tools.keys()].sort()).toEqual([
      'linear_create_issue',
      'linear_get_issue',
      'linear_list_teams',
      'linear_search_issues',
      'linear_update_issue',
      'linear_viewer',
      'petshop_create_pet',
      'petshop_get_pet',
      'petshop_list_pets',
      'petshop_whoami',
    ]);
    // The file path and hash vary with the temporary directory and line endings; the rest is pinned.
    const entry = snapshot.providers.get('petshop');
    const petshop = {
      ...entry,
      file: undefined,
      contentHash: undefined,
      warnings: entry?.warnings.map((w) => ({ ...w, file: undefined })),
    };
    await expect(`${JSON.stringify(petshop, null, 2)}\n`).toMatchFileSnapshot(
      './__snapshots__/petshop.entry.json',
    );
  });

  it('reuses an unchanged provider by identity and keeps the snapshot when nothing changed', async () => {
    const first = await buildCatalog({ dir, registry });
    const second = await buildCatalog({ dir, registry, previous: first.snapshot });
    expect(second.snapshot).toBe(first.snapshot);
    expect(summary(second.report)).toMatchObject({ unchanged: ['linear', 'petshop'], toolsChanged: [] });
    expect(second.report.swapped).toBe(false);

    await edit('petshop.yaml', 'display_name: Pet Shop', 'display_name: Pet Shop Inc.');
    const third = await buildCatalog({ dir, registry, previous: second.snapshot });
    expect(third.snapshot.version).toBe(2);
    expect(third.snapshot.providers.get('linear')).toBe(first.snapshot.providers.get('linear'));
    expect(third.snapshot.providers.get('petshop')?.displayName).toBe('Pet Shop Inc.');
    expect(summary(third.report)).toMatchObject({
      changed: ['petshop'],
      unchanged: ['linear'],
      toolsChanged: [],
    });
  });

  it('recompiles when the referenced document changes', async () => {
    const first = await buildCatalog({ dir, registry });
    await edit('petshop.openapi.yaml', 'summary: Get a pet', 'summary: Fetch a pet');
    const second = await buildCatalog({ dir, registry, previous: first.snapshot });
    expect(summary(second.report)).toMatchObject({ changed: ['petshop'], toolsChanged: ['petshop'] });
    expect(second.snapshot.tools.get('petshop_get_pet')?.title).toBe('Fetch a pet');
  });

  it('hashes a document of several read chunks whole: unchanged on reload, changed by its last byte', async () => {
    const document = join(dir, 'petshop.openapi.yaml');
    await writeFile(document, `${await readFile(document, 'utf8')}# ${'x'.repeat(2_500_000)}a\n`);
    const first = await buildCatalog({ dir, registry });
    expect(first.report.added).toEqual(['linear', 'petshop']);
    const second = await buildCatalog({ dir, registry, previous: first.snapshot });
    expect(summary(second.report)).toMatchObject({ unchanged: ['linear', 'petshop'] });
    await edit('petshop.openapi.yaml', /a\n$/, 'b\n');
    const third = await buildCatalog({ dir, registry, previous: second.snapshot });
    expect(summary(third.report)).toMatchObject({ changed: ['petshop'], unchanged: ['linear'] });
  });

  it('keeps the last good version of a provider whose manifest breaks, and reports it', async () => {
    const first = await buildCatalog({ dir, registry });
    await edit('petshop.yaml', 'kind: api_key', 'kind: apikey');
    const second = await buildCatalog({ dir, registry, previous: first.snapshot });
    expect(summary(second.report)).toMatchObject({
      keptOld: ['petshop'],
      unchanged: ['linear'],
      toolsChanged: [],
    });
    expect(second.snapshot.providers.get('petshop')).toBe(first.snapshot.providers.get('petshop'));
    expect(
      second.snapshot.stale.get('petshop')?.map((f) => `${f.line}:${f.col} ${f.code} ${f.path.join(' > ')}`),
    ).toEqual(['7:9 TG_MANIFEST_BAD_VALUE auth > kind']);
    expect(second.snapshot.version).toBe(2);

    await edit('petshop.yaml', 'kind: apikey', 'kind: api_key');
    const third = await buildCatalog({ dir, registry, previous: second.snapshot });
    expect(third.snapshot.stale.size).toBe(0);
    expect(third.report.unchanged).toEqual(['linear', 'petshop']);
  });

  it('keeps the last good version of a provider whose document disappears', async () => {
    const first = await buildCatalog({ dir, registry });
    await unlink(join(dir, 'petshop.openapi.yaml'));
    const second = await buildCatalog({ dir, registry, previous: first.snapshot });
    expect(summary(second.report)).toMatchObject({ keptOld: ['petshop'], unchanged: ['linear'] });
    expect(second.snapshot.stale.get('petshop')?.map((f) => f.code)).toContain('TG_MANIFEST_FILE_NOT_FOUND');
  });

  it('recompiles a provider whose plugin declaration changed', async () => {
    const first = await buildCatalog({ dir, registry });
    const described = linearTools.map((t) =>
      t.name === 'linear_viewer' ? { ...t, description: 'Who I am.' } : t,
    );
    const changed = new PluginRegistry()
      .declare({ id: 'slack-webhook' })
      .declare({ id: 'linear', tools: described });
    const second = await buildCatalog({ dir, registry: changed, previous: first.snapshot });
    expect(summary(second.report)).toMatchObject({
      changed: ['linear'],
      unchanged: ['petshop'],
      toolsChanged: ['linear'],
    });
    expect(second.snapshot.tools.get('linear_viewer')?.description).toBe('Who I am.');
  });

  it('reports a new broken provider as failed and a deleted one as removed', async () => {
    const first = await buildCatalog({ dir, registry });
    await writeFile(join(dir, 'broken.yaml'), 'schema_version: 1\nid: broken\n');
    await unlink(join(dir, 'linear.yaml'));
    const second = await buildCatalog({ dir, registry, previous: first.snapshot });
    expect(summary(second.report)).toMatchObject({
      failed: ['broken'],
      removed: ['linear'],
      toolsChanged: ['linear'],
    });
    expect(second.snapshot.failed.get('broken')?.map((f) => f.code)).toContain('TG_MANIFEST_MISSING_KEY');
    expect(second.snapshot.providers.has('linear')).toBe(false);
    expect(second.snapshot.tools.has('linear_viewer')).toBe(false);
  });
});

describe('CatalogHolder', () => {
  it('swaps snapshots on reload and names the providers whose tools changed', async () => {
    const holder = new CatalogHolder({ dir, registry });
    expect(holder.current.version).toBe(0);
    const changes: string[][] = [];
    holder.on('changed', (ids) => changes.push([...ids]));
    await holder.reload();
    const loaded = holder.current;
    await edit('petshop.yaml', '"GET /me": { name: petshop_whoami', '"GET /me": { name: petshop_me');
    await edit('petshop.yaml', 'identity: { tool: petshop_whoami', 'identity: { tool: petshop_me');
    await edit('petshop.yaml', 'tools: [petshop_whoami]', 'tools: [petshop_me]');
    const report = await holder.reload();
    expect(report.toolsChanged).toEqual(['petshop']);
    expect(changes).toEqual([['linear', 'petshop'], ['petshop']]);
    expect(holder.current).not.toBe(loaded);
    expect(loaded.tools.has('petshop_whoami')).toBe(true);
    expect(holder.current.tools.has('petshop_me')).toBe(true);
  });

  it('reloads by itself when a manifest changes on disk', async () => {
    const holder = new CatalogHolder({ dir, registry, debounceMs: 20 });
    await holder.reload();
    holder.start();
    try {
      const reloaded = once(holder, 'reloaded') as Promise<[CatalogReport]>;
      await edit('linear.yaml', 'display_name: Linear', 'display_name: Linear App');
      const [report] = await reloaded;
      expect(report.changed).toEqual(['linear']);
      expect(holder.current.providers.get('linear')?.displayName).toBe('Linear App');
    } finally {
      holder.stop();
    }
  });
});
