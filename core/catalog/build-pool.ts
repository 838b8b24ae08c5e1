/**
 * Catalog builds off the event loop (issue 16): each changed manifest is built (YAML, OpenAPI
 * parse, compile, schema check: provider.ts `buildProvider`) in a build worker, so the main thread
 * keeps answering MCP requests while a reload compiles a large document. A worker builds one
 * manifest at a time, under a time limit (a timer kills it) and a memory limit (V8's old
 * generation, `--max-old-space-size`); a manifest over either, or one that kills its worker, fails
 * with a finding and the other manifests build on in a fresh worker.
 *
 * A worker is a child process, not a worker thread: a thread's `resourceLimits` only ask V8 to
 * stop the thread, and an allocation larger than V8's 16 MB of grace (the document's text, a
 * parser's copy of it) aborts the whole process instead (nodejs/node#47224; here, GitHub's
 * description as YAML under a 48-80 MB limit aborted the gateway 3 times in 3). A process that runs
 * out of memory takes only itself down.
 *
 * The seam: a worker gets the plugin declarations (ids and tool descriptors, no code) and returns
 * a ProviderBuild, plain data that crosses by structured clone (`serialization: 'advanced'`) as it
 * is. What cannot cross stays on the main thread and is looked up there by provider id when a tool
 * runs: plugin code (PluginRegistry.get), the provider client, and the argument validators,
 * compiled on first use (tools/args.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { CATALOG_BUILD_DEFAULTS, type CatalogBuildLimits } from '../config.js';
import type { FindingCode } from './findings.js';
import { idFromFile } from './load.js';
import type { PluginRegistry } from './plugins/registry.js';
import type { PluginDeclaration } from './plugins/types.js';
import type { ProviderBuild } from './provider.js';

/**
 * Workers per build: two, so the 18 bundled manifests build on two cores at start (a worker costs
 * a process and its module loading, ~0.3-0.5 s, so not one per manifest); one where the process
 * may use a single core (availableParallelism counts the cores it is pinned to). A reload of one
 * manifest starts one.
 */
const POOL_SIZE = Math.min(2, availableParallelism());

/**
 * How long a worker may take to load (0.3-0.5 s on an idle core, a few seconds under tsx on a busy
 * machine), apart from the builds' own limit, which counts from a build's start.
 */
const LOAD_TIMEOUT_MS = 60_000;

/** The end of a worker's stderr kept to say why it died (V8's out-of-memory report is there). */
const STDERR_KEPT = 4_096;

/** What a worker needs besides the manifest: the plugins' declarations. */
export interface WorkerSetup {
  declarations: PluginDeclaration[];
}

/** Main thread -> worker: its setup, once and first, then one manifest to build per message. */
export type WorkerRequest = { setup: WorkerSetup } | { file: string };

/** Worker -> main thread: loaded and waiting, or the outcome of the request it was given. */
export type WorkerMessage =
  { ready: true } | { build: ProviderBuild; rssPeak: number } | { error: string; rssPeak: number };

interface Task {
  file: string;
  resolve(build: ProviderBuild): void;
  reject(error: Error): void;
}

interface Slot {
  child: ChildProcess;
  ready: boolean;
  task: Task | undefined;
  timer?: NodeJS.Timeout;
  /** The end of its stderr. */
  stderr: string;
}

/**
 * Builds manifests in at most POOL_SIZE workers, started on demand; `close()` ends them. An
 * unchanged reload asks for no build and so starts no worker.
 */
export class BuildPool {
  private readonly queue: Task[] = [];
  private readonly slots = new Set<Slot>();
  private readonly setup: WorkerSetup;
  /** The largest resident set a worker reported, in bytes (0: none has built anything yet). */
  rssPeak = 0;

  constructor(
    registry: PluginRegistry,
    private readonly limits: CatalogBuildLimits = CATALOG_BUILD_DEFAULTS,
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
    await Promise.all(slots.map((slot) => stop(slot.child)));
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
      const { timeoutMs } = this.limits;
      this.slots.delete(slot);
      this.settle(slot)?.resolve(
        limitBuild(
          task.file,
          'TG_CATALOG_BUILD_LIMIT',
          `took longer than ${timeoutMs / 1000} s (TOOLGATE_CATALOG_BUILD_TIMEOUT_MS=${timeoutMs}) and was stopped`,
          'TOOLGATE_CATALOG_BUILD_TIMEOUT_MS',
        ),
      );
      void stop(slot.child);
      this.dispatch();
    }, this.limits.timeoutMs);
    send(slot.child, { file: task.file });
  }

  private spawn(): void {
    const slot: Slot = { child: startWorker(this.limits), ready: false, task: undefined, stderr: '' };
    this.slots.add(slot);
    // Loading is bounded too: a worker not ready in time is stuck, and killed (see `died`).
    slot.timer = setTimeout(() => void stop(slot.child), LOAD_TIMEOUT_MS);
    send(slot.child, { setup: this.setup });
    slot.child.stderr?.on('data', (chunk: Buffer) => {
      slot.stderr = (slot.stderr + chunk.toString()).slice(-STDERR_KEPT);
    });
    slot.child.on('message', (message: WorkerMessage) => {
      if ('ready' in message) {
        slot.ready = true;
        clearTimeout(slot.timer);
        this.next(slot);
        return;
      }
      this.rssPeak = Math.max(this.rssPeak, message.rssPeak);
      const task = this.settle(slot);
      if ('build' in message) task?.resolve(message.build);
      else task?.reject(new Error(message.error));
      this.next(slot);
    });
    slot.child.on('error', (error) => this.died(slot, error.message));
    // 'close', not 'exit': stderr is read to its end by then.
    slot.child.on('close', (code, signal) => this.died(slot, `exit code ${code ?? signal}`));
  }

  /** A worker ended on its own: its manifest fails with a finding, or, while loading, every build. */
  private died(slot: Slot, how: string): void {
    if (!this.slots.delete(slot)) return;
    // The line naming the error (V8's FATAL ERROR, a thrown Error), not Node's version footer.
    const said = slot.stderr.split('\n').map((line) => line.trim());
    const error = said.find((line) => /^(FATAL ERROR|\w*Error\b)/.test(line));
    const why = `${error ?? 'no message'}, ${how}`;
    if (!slot.ready) {
      for (const task of this.queue.splice(0))
        task.reject(new Error(`the catalog build worker did not start (${why})`));
      return;
    }
    const task = this.settle(slot);
    if (task) {
      task.resolve(
        /heap out of memory|heap limit/i.test(slot.stderr)
          ? limitBuild(
              task.file,
              'TG_CATALOG_BUILD_LIMIT',
              `needed more than ${this.limits.memoryMb} MB of memory (TOOLGATE_CATALOG_BUILD_MEMORY_MB=${this.limits.memoryMb}) and was stopped`,
              'TOOLGATE_CATALOG_BUILD_MEMORY_MB',
            )
          : limitBuild(task.file, 'TG_CATALOG_BUILD_CRASHED', `stopped its build worker (${why})`),
      );
    }
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
 * A build worker process. From the compiled gateway (dist/, plain JavaScript) its entry is
 * build-worker.js beside this file. From source (tsx, vitest: this file is .ts) it is
 * build-worker.ts, loaded through tsx (a devDependency, present wherever the sources run), whose
 * location is resolved here so that the worker does not depend on its working directory. The
 * parent's own flags (an inspector, a heap size) are not passed on, nor its TOOLGATE_* settings
 * (the master key among them): a build reads files, never settings.
 */
function startWorker(limits: CatalogBuildLimits): ChildProcess {
  const source = import.meta.url.endsWith('.ts');
  const entry = fileURLToPath(new URL(source ? './build-worker.ts' : './build-worker.js', import.meta.url));
  const execArgv = [`--max-old-space-size=${limits.memoryMb}`];
  if (source) execArgv.push('--import', import.meta.resolve('tsx'));
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('TOOLGATE_')),
  );
  return fork(entry, [], {
    execArgv,
    env,
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
}

/** Sends to a worker; one that has just died is noticed by its 'close' handler. */
function send(child: ChildProcess, request: WorkerRequest): void {
  if (child.connected) child.send(request, (error) => void error);
}

/** Kills a worker and resolves once it is gone. */
function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
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
