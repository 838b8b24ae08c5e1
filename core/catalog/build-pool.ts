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
 * Workers are shared by every build of the process and kept for IDLE_MS after their last build, so
 * a burst of reloads (or the many gateways of a test file) loads the compiler once, not per build;
 * an idle worker does not keep the process alive, and one ends with its parent (the IPC channel
 * closes).
 *
 * The seam: a worker gets the plugin declarations (ids and tool descriptors, no code) and returns
 * a ProviderBuild, plain data that crosses by structured clone (`serialization: 'advanced'`) as it
 * is. What cannot cross stays on the main thread and is looked up there by provider id when a tool
 * runs: plugin code (PluginRegistry.get), the provider client, and the argument validators,
 * compiled on first use (tools/args.ts).
 */
import { fork, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
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
 * a process and its module loading, ~0.08 s of a core, so not one per manifest); one where the process
 * may use a single core (availableParallelism counts the cores it is pinned to). A reload of one
 * manifest starts one.
 */
const POOL_SIZE = Math.min(2, availableParallelism());

/**
 * Where the process may use a single core, a worker runs V8 without its helper threads
 * (`--single-threaded`: no compiler or garbage collector threads beside the main one), which could
 * only take turns with the build on that core. A 50-operation GitHub build pinned to one core:
 * median 239 -> 233 ms, spread 235-345 -> 228-242 (13 builds each, interleaved). With cores to
 * spare, the helpers run beside the build, as V8 means them to.
 */
const ONE_CORE = availableParallelism() === 1;

/**
 * The interrupt budget of a single-threaded worker: how much bytecode a function runs before V8
 * considers optimising it (`--interrupt-budget`; 67,584 by default in Node 20's V8), ten times the
 * default. Without helper threads TurboFan compiles on the build's own thread, and a build is
 * short: most of what V8 chose to optimise was not run long enough after to pay for its
 * compilation. Pinned to one core, 12 cold builds each, interleaved: GitHub's 50 operations
 * median 225 -> 202 ms, its every operation 729 -> 575, the bundled catalog 583 -> 478; a long
 * build as before (Microsoft Graph's 11,422 operations, 3.2 s). With cores to spare TurboFan
 * compiles beside the build, and there the default optimises a long build sooner (Graph: 2.7 s
 * against 3.0), so it is kept.
 */
const ONE_CORE_INTERRUPT_BUDGET = 675_840;

/**
 * How long a worker may take to load (~0.08 s on an idle core, a few seconds under tsx on a busy
 * machine), apart from the builds' own limit, which counts from a build's start.
 */
const LOAD_TIMEOUT_MS = 60_000;

/** How long a worker with nothing to build is kept for the next build. */
const IDLE_MS = 10_000;

/**
 * The old generation a worker starts with, in MB (at most its limit). A build allocates the parsed
 * document at once (GitHub's 11 MB description: ~100 MB of objects); from V8's small default, the
 * heap is marked again and again as it grows to that (~15 ms of a 50-operation GitHub build).
 */
const INITIAL_OLD_SPACE_MB = 256;

/**
 * A worker's young generation (each semi-space), in MB, from its start. Parsing a large document
 * makes ~100 MB of objects that all survive; from V8's 1 MB start the young generation is
 * scavenged, copying them, again and again as it grows: a 50-operation GitHub build went
 * 280 -> 250 ms with 32 MB (16 MB gained nothing, 64 and 128 MB no more). At most an eighth of
 * the worker's memory limit, which counts the old generation only.
 */
const YOUNG_SPACE_MB = 32;

/** The setting naming extra TLS certificates, which a build worker goes without (see startWorker). */
const CA_FILE = 'NODE_EXTRA_CA_CERTS';

/**
 * glibc's malloc tunable asking for transparent huge pages (glibc 2.35 and later; other C
 * libraries and older glibc ignore it): a build's large buffers (a document's bytes and its text,
 * 13 MB each for GitHub's description) are then mapped 2 MB at a time instead of faulted in 4 KB
 * pages. A 50-operation GitHub build took ~20,700 page faults, its system time a quarter of its
 * CPU (~3 µs a fault on this machine kind); with this, ~11,700, and its median time 232 -> 215 ms
 * (15 cold builds each, interleaved, pinned to one core; issue 19). Only the worker's malloc: V8's
 * heap maps its own pages.
 */
const HUGE_PAGES = 'glibc.malloc.hugetlb';

/**
 * The most of an unfinished stderr line a worker's slot keeps. Its stderr is read line by line as it
 * arrives, for the line naming why it died: V8's out-of-memory report puts that line before a
 * native stack trace longer than any tail worth keeping.
 */
const STDERR_KEPT = 4_096;

/** Main thread -> worker: one manifest to build, with the plugins' declarations to build it with. */
export interface WorkerRequest {
  file: string;
  declarations: PluginDeclaration[];
}

/** Worker -> main thread: loaded and waiting, or the outcome of the request it was given. */
export type WorkerMessage =
  { ready: true } | { build: ProviderBuild; rssPeak: number } | { error: string; rssPeak: number };

/** A build's outcome, and the resident set of the worker that built it, in bytes (0: none did). */
export interface WorkerBuild {
  build: ProviderBuild;
  rssPeak: number;
}

interface Task {
  request: WorkerRequest;
  timeoutMs: number;
  resolve(result: WorkerBuild): void;
  reject(error: Error): void;
}

interface Slot {
  child: ChildProcess;
  ready: boolean;
  task: Task | undefined;
  timer?: NodeJS.Timeout;
  /** Its stderr's last line, while unfinished. */
  partial: string;
  /** The first line of its stderr naming an error (V8's FATAL ERROR, a thrown Error). */
  error?: string;
  /** Whether its stderr says V8 ran out of heap. */
  outOfMemory?: boolean;
}

/** The pools of this process, by memory limit (the limit a worker is started with). */
const pools = new Map<number, BuildPool>();

/**
 * Builds `file` in a worker under `limits`; a manifest over a limit or killing its worker gives a
 * failed build (TG_CATALOG_BUILD_LIMIT, TG_CATALOG_BUILD_CRASHED) rather than an error.
 */
export function buildInWorker(
  file: string,
  registry: PluginRegistry,
  limits: CatalogBuildLimits = CATALOG_BUILD_DEFAULTS,
): Promise<WorkerBuild> {
  return poolFor(limits).build({ file, declarations: registry.plainDeclarations() }, limits.timeoutMs);
}

/**
 * Starts loading a build worker now, when one will soon be needed (a gateway's first catalog build,
 * while its store opens): the ~0.08 s a worker takes to load overlaps that work instead of following
 * it. A worker nothing asks for ends after IDLE_MS, as any idle one.
 */
export function warmBuildWorker(limits: CatalogBuildLimits = CATALOG_BUILD_DEFAULTS): void {
  poolFor(limits).warm();
}

function poolFor(limits: CatalogBuildLimits): BuildPool {
  let pool = pools.get(limits.memoryMb);
  if (!pool) pools.set(limits.memoryMb, (pool = new BuildPool(limits.memoryMb)));
  return pool;
}

/** At most POOL_SIZE workers of one memory limit, started on demand, ended after IDLE_MS idle. */
class BuildPool {
  private readonly queue: Task[] = [];
  private readonly slots = new Set<Slot>();

  constructor(private readonly memoryMb: number) {}

  build(request: WorkerRequest, timeoutMs: number): Promise<WorkerBuild> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, timeoutMs, resolve, reject });
      this.dispatch();
    });
  }

  /** One worker loading or waiting, started now when there is none. */
  warm(): void {
    if (this.slots.size === 0) this.spawn();
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.task) continue;
      // A worker that ended while it waited (killed from outside, by the kernel's OOM killer) is
      // replaced, even before its 'close' is handled (`died`): it would never answer a build.
      if (ended(slot.child)) {
        clearTimeout(slot.timer);
        this.slots.delete(slot);
      } else this.next(slot);
    }
    const starting = [...this.slots].filter((slot) => !slot.ready).length;
    for (let n = starting; n < this.queue.length && this.slots.size < POOL_SIZE; n++) this.spawn();
  }

  /** Gives an idle worker the next task, or lets it wait IDLE_MS without holding the process. */
  private next(slot: Slot): void {
    const task = this.queue.shift();
    clearTimeout(slot.timer);
    if (!task) {
      hold(slot.child, false);
      slot.timer = setTimeout(() => {
        this.slots.delete(slot);
        void stop(slot.child);
      }, IDLE_MS).unref();
      return;
    }
    hold(slot.child, true);
    slot.task = task;
    const { file } = task.request;
    slot.timer = setTimeout(() => {
      this.slots.delete(slot);
      this.settle(slot)?.resolve({
        build: limitBuild(
          file,
          'TG_CATALOG_BUILD_LIMIT',
          `took longer than ${task.timeoutMs / 1000} s (TOOLGATE_CATALOG_BUILD_TIMEOUT_MS=${task.timeoutMs}) and was stopped`,
          'TOOLGATE_CATALOG_BUILD_TIMEOUT_MS',
        ),
        rssPeak: 0,
      });
      void stop(slot.child);
      this.dispatch();
    }, task.timeoutMs);
    send(slot.child, task.request);
  }

  private spawn(): void {
    const slot: Slot = { child: startWorker(this.memoryMb), ready: false, task: undefined, partial: '' };
    this.slots.add(slot);
    // Loading is bounded too: a worker not ready in time is stuck, and killed (see `died`).
    slot.timer = setTimeout(() => void stop(slot.child), LOAD_TIMEOUT_MS);
    slot.child.stderr?.on('data', (chunk: Buffer) => {
      const lines = (slot.partial + chunk.toString()).split('\n');
      slot.partial = lines.pop()!.slice(-STDERR_KEPT);
      for (const line of lines) readLine(slot, line);
    });
    slot.child.on('message', (message: WorkerMessage) => {
      if ('ready' in message) {
        slot.ready = true;
        this.next(slot);
        return;
      }
      const task = this.settle(slot);
      if ('build' in message) task?.resolve({ build: message.build, rssPeak: message.rssPeak });
      else task?.reject(new Error(message.error));
      this.next(slot);
    });
    slot.child.on('error', (error) => this.died(slot, error.message));
    // 'close', not 'exit': stderr is read to its end by then.
    slot.child.on('close', (code, signal) => this.died(slot, `exit code ${code ?? signal}`));
  }

  /** A worker ended on its own: its manifest fails with a finding, or, while loading, every build. */
  private died(slot: Slot, how: string): void {
    clearTimeout(slot.timer);
    if (!this.slots.delete(slot)) return;
    readLine(slot, slot.partial);
    const why = `${slot.error ?? 'no message'}, ${how}`;
    if (!slot.ready) {
      for (const task of this.queue.splice(0))
        task.reject(new Error(`the catalog build worker did not start (${why})`));
      return;
    }
    const task = this.settle(slot);
    if (task) {
      const { file } = task.request;
      task.resolve({
        build: slot.outOfMemory
          ? limitBuild(
              file,
              'TG_CATALOG_BUILD_LIMIT',
              `needed more than ${this.memoryMb} MB of memory (TOOLGATE_CATALOG_BUILD_MEMORY_MB=${this.memoryMb}) and was stopped`,
              'TOOLGATE_CATALOG_BUILD_MEMORY_MB',
            )
          : limitBuild(file, 'TG_CATALOG_BUILD_CRASHED', `stopped its build worker (${why})`),
        rssPeak: 0,
      });
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

/** Notes what a line of a worker's stderr says of why it may die (not Node's version footer). */
function readLine(slot: Slot, line: string): void {
  const said = line.trim();
  if (slot.error === undefined && /^(FATAL ERROR|\w*Error\b)/.test(said)) slot.error = said;
  if (/heap out of memory|heap limit/i.test(said)) slot.outOfMemory = true;
}

/** Whether a worker keeps this process alive: while it builds, not while it waits. */
function hold(child: ChildProcess, busy: boolean): void {
  const handles = [child, child.channel, child.stderr as Socket | null];
  for (const handle of handles) {
    if (busy) handle?.ref();
    else handle?.unref();
  }
}

/**
 * A build worker process. From the compiled gateway (dist/, plain JavaScript) its entry is
 * build-worker.js beside this file. From source (tsx, vitest: this file is .ts) it is
 * build-worker.ts, loaded through tsx (a devDependency, present wherever the sources run), whose
 * location is resolved here so that the worker does not depend on its working directory. The
 * parent's own flags (an inspector, a heap size) are not passed on, nor its TOOLGATE_* settings
 * (the master key among them): a build reads files, never settings. Nor are extra TLS certificates
 * (a build never goes on the network): Node reads and parses their file as it starts, ~35 ms of a
 * worker's ~65 ms start with Debian's bundle (issue 19: a 50-operation GitHub build in 250 ms).
 * Its malloc is asked for huge pages ({@link HUGE_PAGES}).
 */
function startWorker(memoryMb: number): ChildProcess {
  const source = import.meta.url.endsWith('.ts');
  const entry = fileURLToPath(new URL(source ? './build-worker.ts' : './build-worker.js', import.meta.url));
  const young = Math.min(YOUNG_SPACE_MB, Math.floor(memoryMb / 8));
  const execArgv = [
    `--max-old-space-size=${memoryMb}`,
    `--initial-old-space-size=${Math.min(memoryMb, INITIAL_OLD_SPACE_MB)}`,
    `--min-semi-space-size=${young}`,
    `--max-semi-space-size=${young}`,
    ...(ONE_CORE ? ['--single-threaded', `--interrupt-budget=${ONE_CORE_INTERRUPT_BUDGET}`] : []),
  ];
  if (source) execArgv.push('--import', import.meta.resolve('tsx'));
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('TOOLGATE_') && name !== CA_FILE),
  );
  env.GLIBC_TUNABLES = withHugePages(env.GLIBC_TUNABLES);
  return fork(entry, [], {
    execArgv,
    env,
    serialization: 'advanced',
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
}

/** GLIBC_TUNABLES (`name=value` pairs joined by colons) asking for huge pages, unless it says otherwise. */
export function withHugePages(tunables: string | undefined): string {
  if (!tunables) return `${HUGE_PAGES}=1`;
  return tunables.split(':').some((pair) => pair.startsWith(`${HUGE_PAGES}=`))
    ? tunables
    : `${tunables}:${HUGE_PAGES}=1`;
}

/** Sends to a worker; one that has just died is noticed by its 'close' handler. */
function send(child: ChildProcess, request: WorkerRequest): void {
  if (child.connected) child.send(request, (error) => void error);
}

/** Whether a worker's process has exited (and been reaped). */
function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Whether a worker's process has exited or its channel closed. */
function ended(child: ChildProcess): boolean {
  return !child.connected || exited(child);
}

/** Kills a worker and resolves once it is gone. */
function stop(child: ChildProcess): Promise<void> {
  if (exited(child)) return Promise.resolve();
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
