/**
 * Holds the catalog snapshot in force. A reload builds the next snapshot aside and swaps it in one
 * assignment, so a call in flight finishes on the snapshot it started with (DESIGN.md,
 * Principles). Reloads run one at a time, in the order asked.
 */
import { EventEmitter } from 'node:events';
import { watch, type FSWatcher } from 'node:fs';
import type { FastifyBaseLogger } from 'fastify';
import type { CatalogBuildLimits } from '../config.js';
import type { PluginRegistry } from './plugins/registry.js';
import { buildCatalog, emptySnapshot, type CatalogReport } from './catalog.js';
import { formatFindings } from './findings.js';
import type { CatalogSnapshot } from './types.js';

export interface CatalogHolderEvents {
  /** Providers whose tools changed, and the snapshot now in force (for tools/list_changed). */
  changed: [providers: ReadonlySet<string>, snapshot: CatalogSnapshot];
  /** A reload triggered by the file watcher finished (reloads asked with `reload()` return it). */
  reloaded: [report: CatalogReport];
  /** A watcher-triggered reload or the watcher itself failed. Listen to it: an unheard 'error' throws. */
  error: [error: Error];
}

export interface CatalogHolderOptions {
  dir: string;
  registry: PluginRegistry;
  /** Limits of each manifest's build (settings TOOLGATE_CATALOG_BUILD_*); defaults when absent. */
  limits?: CatalogBuildLimits;
  /** Quiet time after the last file event before a watcher-triggered reload; default 250 ms. */
  debounceMs?: number;
}

export class CatalogHolder extends EventEmitter<CatalogHolderEvents> {
  private snapshot: CatalogSnapshot = emptySnapshot();
  private queue: Promise<unknown> = Promise.resolve();
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: CatalogHolderOptions) {
    super();
  }

  /** The snapshot in force; version 0 (empty) until the first `reload()`. */
  get current(): CatalogSnapshot {
    return this.snapshot;
  }

  /** Rebuilds the catalog from the directory and swaps it in when anything changed. */
  reload(): Promise<CatalogReport> {
    const run = this.queue.then(() => this.rebuild());
    this.queue = run.catch(() => undefined);
    return run;
  }

  /**
   * Watches the manifests directory and reloads after changes settle. Documents outside the
   * directory are not watched; `reload()` picks their changes up.
   */
  start(): void {
    if (this.watcher) return;
    this.watcher = watch(this.options.dir, () => this.schedule());
    this.watcher.on('error', (error) => this.emit('error', error));
  }

  stop(): void {
    this.watcher?.close();
    this.watcher = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.reload().then(
        (report) => this.emit('reloaded', report),
        (error: unknown) => this.emit('error', error instanceof Error ? error : new Error(String(error))),
      );
    }, this.options.debounceMs ?? 250);
  }

  private async rebuild(): Promise<CatalogReport> {
    const { snapshot, report } = await buildCatalog({ ...this.options, previous: this.snapshot });
    if (snapshot !== this.snapshot) {
      this.snapshot = snapshot;
      if (report.toolsChanged.length > 0) this.emit('changed', new Set(report.toolsChanged), snapshot);
    }
    return report;
  }
}

/** Logs a reload's outcome: one line for the swap, one error line per provider that failed. */
export function logCatalogReport(log: FastifyBaseLogger, report: CatalogReport, trigger: string): void {
  const { version, added, changed, removed, keptOld, failed, workerRssPeakMb } = report;
  log.info(
    {
      code: 'TG_CATALOG_LOADED',
      trigger,
      version,
      added,
      changed,
      removed,
      keptOld,
      failed,
      workerRssPeakMb,
    },
    'catalog loaded',
  );
  for (const [provider, findings] of Object.entries(report.findings)) {
    const errors = findings.filter((f) => f.severity === 'error');
    if (errors.length > 0) {
      log.error(
        { code: 'TG_CATALOG_PROVIDER_FAILED', provider, findings: formatFindings(errors) },
        `provider ${provider} failed to load`,
      );
    }
  }
}
