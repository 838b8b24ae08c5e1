/**
 * Catalog builds off the event loop (issue 16): each changed manifest is built (YAML, OpenAPI
 * parse, compile, schema check: provider.ts `buildProvider`) in a worker thread, so the main thread
 * keeps answering MCP requests while a reload compiles a large document. A worker builds one
 * manifest at a time, under a time limit (a timer terminates it) and a memory limit (V8's old
 * generation, `resourceLimits`); a manifest over either, or one that kills its worker, fails with
 * a finding and the other manifests build on a fresh worker.
 *
 * The seam: a worker gets the plugin declarations (ids and tool descriptors, no code) and returns
 * a ProviderBuild, plain data that structured clone copies as it is. What cannot cross threads
 * stays on the main thread and is looked up there by provider id when a tool runs: plugin code
 * (PluginRegistry.get), the provider client, and the argument validators, compiled on first use
 * (tools/args.ts).
 */
import { Worker } from 'node:worker_threads';
import type { FindingCode } from './findings.js';
import { idFromFile } from './load.js';
import type { PluginRegistry } from './plugins/registry.js';
import type { PluginDeclaration } from './plugins/types.js';
import type { ProviderBuild } from './provider.js';

/** Per manifest; settings TOOLGATE_CATALOG_BUILD_TIMEOUT_MS and TOOLGATE_CATALOG_BUILD_MEMORY_MB. */
export interface BuildLimits {
  timeoutMs: number;
  memoryMb: number;
}

/**
 * GitHub's full description (1,221 tools) builds in ~2 s on a quiet machine, ~11 s under heavy
 * load, and its worker's heap peaks near 200 MB: both limits leave it several times that room.
 */
export const DEFAULT_BUILD_LIMITS: BuildLimits = { timeoutMs: 60_000, memoryMb: 1_024 };

/**
 * Workers per build: two, so the 18 bundled manifests build on two cores at start (a worker costs
 * its module loading, so not one per manifest); a reload of one manifest starts one.
 */
const POOL_SIZE = 2;

/** What a worker is started with (workerData). */
export interface WorkerSetup {
  declarations: PluginDeclaration[];
}

/** Main thread -> worker: build this manifest. */
export interface BuildRequest {
  file: string;
}

/** Worker -> main thread: loaded and waiting, or the outcome of the request it was given. */
export type WorkerMessage = { ready: true } | { build: ProviderBuild } | { error: string };

interface Task {
  file: string;
  resolve(build: ProviderBuild): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  task: Task | undefined;
  timer?: NodeJS.Timeout;
}

/**
 * Builds manifests in at most POOL_SIZE workers, started on demand; `close()` ends them. An
 * unchanged reload asks for no build and so starts no worker.
 */
export class BuildPool {
  private readonly queue: Task[] = [];
  private readonly slots = new Set<Slot>();
  private readonly setup: WorkerSetup;

  constructor(
    registry: PluginRegistry,
    private readonly limits: BuildLimits = DEFAULT_BUILD_LIMITS,
  ) {
    this.setup = { declarations: registry.plainDeclarations() };
  }

  /** Builds `file` in a worker; a manifest over a limit or killing its worker gives a failed build. */
  build(file: string): Promise<ProviderBuild> {
    return new Promise((resolve, reject) => {
      this.queue.push({ file, resolve, reject });
      this.dispatch();
    });
  }

  /** Ends every worker; call it once the builds asked for have settled. */
  async close(): Promise<void> {
    const slots = [...this.slots];
    this.slots.clear();
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  private dispatch(): void {
    for (const slot of this.slots) if (slot.ready && !slot.task) this.next(slot);
    const starting = [...this.slots].filter((slot) => !slot.ready).length;
    for (let n = starting; n < this.queue.length && this.slots.size < POOL_SIZE; n++) this.spawn();
  }

  private next(slot: Slot): void {
    const task = this.queue.shift();
    if (!task) return;
    slot.task = task;
    slot.timer = setTimeout(() => {
      const seconds = this.limits.timeoutMs / 1000;
      this.fail(
        slot,
        limitBuild(
          task.file,
          'TG_CATALOG_BUILD_LIMIT',
          `took longer than ${seconds} s (TOOLGATE_CATALOG_BUILD_TIMEOUT_MS=${this.limits.timeoutMs}) and was stopped`,
          'TOOLGATE_CATALOG_BUILD_TIMEOUT_MS',
        ),
      );
    }, this.limits.timeoutMs);
    slot.worker.postMessage({ file: task.file } satisfies BuildRequest);
  }

  private spawn(): void {
    const slot: Slot = {
      worker: startWorker(this.setup, this.limits),
      ready: false,
      task: undefined,
    };
    this.slots.add(slot);
    slot.worker.on('message', (message: WorkerMessage) => {
      if ('ready' in message) {
        slot.ready = true;
        this.next(slot);
        return;
      }
      const task = this.settle(slot);
      if ('build' in message) task?.resolve(message.build);
      else task?.reject(new Error(message.error));
      this.next(slot);
    });
    slot.worker.on('error', (error: Error & { code?: string }) => this.died(slot, error));
    slot.worker.on('exit', (code) => this.died(slot, new Error(`the build worker exited with code ${code}`)));
  }

  /** A worker ended on its own: its manifest fails with a finding, or, while loading, every build. */
  private died(slot: Slot, error: Error & { code?: string }): void {
    if (!this.slots.delete(slot)) return;
    if (!slot.ready) {
      for (const task of this.queue.splice(0))
        task.reject(new Error(`the catalog build worker did not start: ${error.message}`));
      return;
    }
    const task = this.settle(slot);
    if (task) {
      task.resolve(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? limitBuild(
              task.file,
              'TG_CATALOG_BUILD_LIMIT',
              `needed more than ${this.limits.memoryMb} MB of memory (TOOLGATE_CATALOG_BUILD_MEMORY_MB) and was stopped`,
              'TOOLGATE_CATALOG_BUILD_MEMORY_MB',
            )
          : limitBuild(task.file, 'TG_CATALOG_BUILD_CRASHED', `stopped its build worker (${error.message})`),
      );
    }
    this.dispatch();
  }

  /** Ends a worker whose manifest went over the time limit, and goes on with a fresh one. */
  private fail(slot: Slot, build: ProviderBuild): void {
    this.slots.delete(slot);
    this.settle(slot)?.resolve(build);
    void slot.worker.terminate();
    this.dispatch();
  }

  private settle(slot: Slot): Task | undefined {
    const { task } = slot;
    clearTimeout(slot.timer);
    slot.task = undefined;
    return task;
  }
}

/**
 * A build worker. From the compiled gateway (dist/, plain JavaScript) the entry is build-worker.js
 * beside this file. From source (tsx, vitest: this file is .ts) Node cannot load build-worker.ts by
 * itself, and a Node 20 worker does not inherit the parent's `--import tsx` hooks, so the worker
 * first registers tsx's ESM hooks (a devDependency, present wherever the sources run) and then
 * imports its entry.
 */
function startWorker(setup: WorkerSetup, limits: BuildLimits): Worker {
  const options = { workerData: setup, resourceLimits: { maxOldGenerationSizeMb: limits.memoryMb } };
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./build-worker.js', import.meta.url), options);
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  const entry = JSON.stringify(new URL('./build-worker.ts', import.meta.url).href);
  const code = `import(${tsx}).then((tsx) => { tsx.register(); return import(${entry}); });`;
  return new Worker(code, { ...options, eval: true });
}

function limitBuild(file: string, code: FindingCode, what: string, setting?: string): ProviderBuild {
  const id = idFromFile(file);
  const advice = setting
    ? `select fewer operations (openapi > operations > include) or raise ${setting}`
    : 'report it with the manifest and its OpenAPI document';
  return {
    id,
    file,
    findings: [
      {
        file,
        line: 1,
        col: 1,
        code,
        path: [],
        message: `building provider "${id}" ${what}; ${advice}`,
        severity: 'error',
      },
    ],
  };
}
