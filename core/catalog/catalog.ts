/**
 * The catalog snapshot: every manifest of a directory built into one immutable CatalogSnapshot.
 * A build never mutates the previous snapshot; a provider whose manifest fails keeps its last good
 * entry (DESIGN.md, Principles; STYLE.md, practice 3).
 */
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { PluginRegistry } from './plugins/registry.js';
import type { CatalogBuildLimits } from '../config.js';
import { buildInWorker } from './build-pool.js';
import { sortFindings } from './findings.js';
import { idFromFile } from './load.js';
import { unchangedBuild, type ProviderBuild } from './provider.js';
import type { CatalogSnapshot, CompiledTool, Finding, ProviderEntry } from './types.js';

/** What a build did, provider by provider (ids sorted in each list). */
export interface CatalogReport {
  /** The version of the snapshot now in force. */
  version: number;
  /** Whether the build produced a new snapshot (false: nothing changed, the previous one stands). */
  swapped: boolean;
  added: string[];
  changed: string[];
  removed: string[];
  /** Reused without recompiling: content hash unchanged. */
  unchanged: string[];
  /** Manifest now fails; the last good version keeps serving. */
  keptOld: string[];
  /** Manifest fails and there is no earlier version. */
  failed: string[];
  /** Providers whose tools differ from the previous snapshot's (added and removed included). */
  toolsChanged: string[];
  /** Findings (errors and warnings) by provider id, for providers that have any. */
  findings: Record<string, Finding[]>;
  /** The largest resident set of a build worker, in MB (0: nothing was built, no worker ran). */
  workerRssPeakMb: number;
}

export interface BuildCatalogOptions {
  dir: string;
  registry: PluginRegistry;
  previous?: CatalogSnapshot;
  /** Time and memory limits of each manifest's build (build-pool.ts); defaults CATALOG_BUILD_DEFAULTS. */
  limits?: CatalogBuildLimits;
}

/** The manifest files of a directory: `*.yaml`/`*.yml` except OpenAPI documents (`*.openapi.yaml`). */
async function manifestFiles(dir: string): Promise<string[]> {
  const names = await readdir(dir);
  return names
    .filter((name) => /\.ya?ml$/.test(name) && !/\.openapi\.ya?ml$/.test(name))
    .sort()
    .map((name) => join(dir, name));
}

/** Builds a snapshot of `dir`, reusing unchanged providers of `previous`. */
export async function buildCatalog(
  options: BuildCatalogOptions,
): Promise<{ snapshot: CatalogSnapshot; report: CatalogReport }> {
  const { dir, registry, previous, limits } = options;
  const { builds, rssPeak } = await buildAll(await manifestFiles(dir), registry, limits, (file) =>
    unchangedBuild(file, registry, previous?.providers.get(idFromFile(file))),
  );

  const report: CatalogReport = {
    version: previous?.version ?? 0,
    swapped: false,
    added: [],
    changed: [],
    removed: [],
    unchanged: [],
    keptOld: [],
    failed: [],
    toolsChanged: [],
    findings: {},
    workerRssPeakMb: Math.round(rssPeak / 2 ** 20),
  };
  const providers = new Map<string, ProviderEntry>();
  const tools = new Map<string, CompiledTool>();
  const failed = new Map<string, Finding[]>();
  const stale = new Map<string, Finding[]>();

  for (const build of builds) {
    const old = previous?.providers.get(build.id);
    const clashes = toolClashes(build, tools);
    const findings = [...build.findings, ...clashes];
    if (findings.length > 0) report.findings[build.id] = findings;
    const entry = clashes.length === 0 ? build.entry : undefined;
    if (!entry) {
      if (old) {
        stale.set(build.id, findings);
        report.keptOld.push(build.id);
        add(old);
      } else {
        failed.set(build.id, findings);
        report.failed.push(build.id);
      }
      continue;
    }
    if (!old) report.added.push(build.id);
    else if (old === entry) report.unchanged.push(build.id);
    else report.changed.push(build.id);
    if (old !== entry && (!old || !sameTools(old, entry))) report.toolsChanged.push(build.id);
    add(entry);
  }
  for (const id of previous?.providers.keys() ?? []) {
    if (!providers.has(id)) {
      report.removed.push(id);
      report.toolsChanged.push(id);
    }
  }
  report.toolsChanged.sort();

  function add(entry: ProviderEntry): void {
    providers.set(entry.id, entry);
    for (const tool of entry.tools) tools.set(tool.name, tool);
  }

  const same =
    previous !== undefined &&
    report.added.length + report.changed.length + report.removed.length === 0 &&
    sameFindings(previous.failed, failed) &&
    sameFindings(previous.stale, stale);
  if (same) return { snapshot: previous, report };
  const snapshot: CatalogSnapshot = {
    version: (previous?.version ?? 0) + 1,
    fingerprint: fingerprintOf(providers, failed),
    loadedAt: new Date(),
    providers,
    tools,
    failed,
    stale,
  };
  return { snapshot, report: { ...report, version: snapshot.version, swapped: true } };
}

/** See CatalogSnapshot.fingerprint; 16 hex digits name a catalog well enough for an operator. */
function fingerprintOf(
  providers: ReadonlyMap<string, ProviderEntry>,
  failed: ReadonlyMap<string, unknown>,
): string {
  const hash = createHash('sha256');
  for (const [id, entry] of [...providers].sort(([a], [b]) => (a < b ? -1 : 1)))
    hash.update(`${id}\0${entry.contentHash}\n`);
  for (const id of [...failed.keys()].sort()) hash.update(`${id}\0failed\n`);
  return hash.digest('hex').slice(0, 16);
}

/** A catalog with no provider (version 0), what serves before the first build. */
export function emptySnapshot(): CatalogSnapshot {
  return {
    version: 0,
    fingerprint: fingerprintOf(new Map(), new Map()),
    loadedAt: new Date(0),
    providers: new Map(),
    tools: new Map(),
    failed: new Map(),
    stale: new Map(),
  };
}

/** Every finding of every manifest in `dir`, sorted; what `toolgate catalog validate` prints. */
export async function validateCatalogDir(
  dir: string,
  registry: PluginRegistry,
  limits?: CatalogBuildLimits,
): Promise<Finding[]> {
  const { builds } = await buildAll(await manifestFiles(dir), registry, limits);
  return sortFindings(builds.flatMap((build) => build.findings));
}

/**
 * The builds of `files`, in their order: `reuse`'s when it has one (an unchanged provider, checked
 * on this thread), else one from a build worker; and the workers' peak resident set, in bytes.
 */
async function buildAll(
  files: readonly string[],
  registry: PluginRegistry,
  limits: CatalogBuildLimits | undefined,
  reuse: (file: string) => Promise<ProviderBuild | undefined> = () => Promise.resolve(undefined),
): Promise<{ builds: ProviderBuild[]; rssPeak: number }> {
  let rssPeak = 0;
  const builds = await Promise.all(
    files.map(async (file) => {
      const reused = await reuse(file);
      if (reused) return reused;
      const built = await buildInWorker(file, registry, limits);
      rssPeak = Math.max(rssPeak, built.rssPeak);
      return built.build;
    }),
  );
  return { builds, rssPeak };
}

/**
 * Tool names another provider already holds. Prefixes keep providers apart except in corner
 * cases (provider `a` naming a tool `a_b_x` next to provider `a-b`), where the later id loses.
 */
function toolClashes(build: ProviderBuild, tools: ReadonlyMap<string, CompiledTool>): Finding[] {
  return (build.entry?.tools ?? [])
    .filter((tool) => tools.has(tool.name))
    .map((tool) => ({
      file: build.file,
      line: 1,
      col: 1,
      code: 'TG_MANIFEST_DUPLICATE_TOOL',
      path: [],
      message: `tool "${tool.name}" is also a tool of provider "${tools.get(tool.name)?.provider ?? ''}"; rename it with an override`,
      severity: 'error' as const,
    }));
}

function sameTools(a: ProviderEntry, b: ProviderEntry): boolean {
  return a.tools === b.tools || JSON.stringify(a.tools) === JSON.stringify(b.tools);
}

function sameFindings(a: ReadonlyMap<string, Finding[]>, b: ReadonlyMap<string, Finding[]>): boolean {
  return a.size === b.size && JSON.stringify([...a]) === JSON.stringify([...b]);
}
