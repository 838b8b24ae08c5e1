/**
 * Child processes of the benchmark: started pinned to a core with taskset (when the machine has
 * it), read for their CPU time from /proc, and spoken to over IPC (gateway.ts).
 */
import { spawn, spawnSync, type ChildProcess, type StdioOptions } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { BenchCommandInput, BenchReply, GatewayReady } from './ipc.js';

/** Whether `taskset` exists (util-linux); without it processes share cores and the report says so. */
export const TASKSET = spawnSync('taskset', ['--version'], { stdio: 'ignore' }).status === 0;

/** Cores: the load generator and the upstream on one, the server under test alone on the other. */
export const CLIENT_CORE = 0;
export const SERVER_CORE = 1;

/** Pins this process (the load generator) to a core; false when it cannot. */
export function pinSelf(core: number): boolean {
  if (!TASKSET) return false;
  return spawnSync('taskset', ['-cp', String(core), String(process.pid)], { stdio: 'ignore' }).status === 0;
}

/** The command line that runs `args` pinned to `core` when taskset is available. */
export function pinned(core: number, command: string, args: string[]): [string, string[]] {
  return TASKSET ? ['taskset', ['-c', String(core), command, ...args]] : [command, args];
}

/** Every process of the benchmark (this one and its children), to tell their CPU from others'. */
const ours = new Set<number>([process.pid]);

export interface Spawned {
  child: ChildProcess;
  /** The pid of the measured process (the node process, not the taskset wrapper: taskset execs). */
  pid: number;
  /** SIGTERM, then SIGKILL if it has not exited within `graceMs` (default 5 s). */
  stop(graceMs?: number): Promise<void>;
}

export function start(
  core: number,
  command: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; stdio?: StdioOptions; cwd?: string } = {},
): Spawned {
  const [cmd, argv] = pinned(core, command, args);
  const child = spawn(cmd, argv, {
    env: options.env ?? process.env,
    stdio: options.stdio ?? ['ignore', 'pipe', 'inherit'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  if (child.pid === undefined) throw new Error(`could not start ${command}`);
  const pid = child.pid;
  ours.add(pid);
  const exited = once(child, 'exit').then(() => ours.delete(pid));
  return {
    child,
    pid: child.pid,
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** The first line a child prints on stdout (our children print their port there). */
export async function firstLine(child: ChildProcess, what: string): Promise<string> {
  if (!child.stdout) throw new Error(`${what}: no stdout`);
  const lines = createInterface({ input: child.stdout });
  const exited = once(child, 'exit').then(() => {
    throw new Error(`${what} exited before it was ready`);
  });
  const [line] = (await Promise.race([once(lines, 'line'), exited])) as [string];
  lines.close();
  return line;
}

const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK']).stdout?.toString().trim()) || 100;

/** CPU time (user + system, all threads) a process has used so far, in microseconds. */
export function cpuMicros(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start at field 3; utime is 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks / TICKS_PER_SECOND) * 1e6;
}

/** CPU time all processes of the machine have used so far (every core), in microseconds. */
function machineBusyMicros(): number {
  const [, ...fields] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/);
  // user nice system idle iowait irq softirq steal: everything but idle and iowait is busy.
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields.map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return (busy / TICKS_PER_SECOND) * 1e6;
}

/** The benchmark's processes, for a load generator in a child process to count as its own. */
export function benchPids(): number[] {
  return [...ours];
}

/** Counts `pids` (the parent benchmark's processes) as the benchmark's own, not as others' load. */
export function adopt(pids: readonly number[]): void {
  for (const pid of pids) ours.add(pid);
}

function oursMicros(): number {
  let total = 0;
  for (const pid of ours) {
    try {
      total += cpuMicros(pid);
    } catch {
      // exited since
    }
  }
  return total;
}

/**
 * Measures how much CPU processes outside the benchmark use meanwhile: on a shared machine, a
 * busy neighbour explains a slow round. Returns a function giving cores used by others since.
 */
export function backgroundLoad(): () => number {
  const t0 = Date.now();
  const machine0 = machineBusyMicros();
  const ours0 = oursMicros();
  return () => {
    const seconds = (Date.now() - t0) / 1000;
    const others = machineBusyMicros() - machine0 - (oursMicros() - ours0);
    return Math.max(0, others / 1e6 / seconds);
  };
}

/** The gateway child (gateway.ts): waits for it to be ready and sends it commands. */
export class GatewayChild {
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  private constructor(
    readonly spawned: Spawned,
    readonly ready: GatewayReady,
  ) {
    spawned.child.on('message', (message: BenchReply) => {
      if (message.type !== 'reply') return;
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.ok) waiter?.resolve(message.result);
      else waiter?.reject(new Error(String(message.result)));
    });
    // A child that dies (a crash, or Ctrl-C, which reaches it too) answers nothing more.
    spawned.child.on('exit', () => {
      for (const waiter of this.pending.values()) waiter.reject(new Error('the gateway child exited'));
      this.pending.clear();
    });
  }

  /**
   * Starts gateway.ts; `launcher` (a command and its arguments, e.g. Valgrind's) runs Node under
   * it, and its pid is then the launcher's (which Valgrind keeps: it runs the program in place).
   */
  static async start(
    core: number,
    script: string,
    env: NodeJS.ProcessEnv,
    options: { logFile: number; nodeOptions: readonly string[]; launcher?: readonly string[] },
  ): Promise<GatewayChild> {
    const [command = process.execPath, ...args] = [
      ...(options.launcher ?? []),
      process.execPath,
      ...options.nodeOptions,
      '--expose-gc',
      script,
    ];
    const spawned = start(core, command, args, {
      env,
      stdio: ['ignore', options.logFile, 'inherit', 'ipc'],
    });
    const exited = once(spawned.child, 'exit').then(([code]) => {
      throw new Error(`the gateway child exited (${String(code)}) before it was ready`);
    });
    const [ready] = (await Promise.race([once(spawned.child, 'message'), exited])) as [GatewayReady];
    if (ready.type !== 'ready') throw new Error('unexpected first message from the gateway child');
    return new GatewayChild(spawned, ready);
  }

  get pid(): number {
    return this.spawned.pid;
  }

  command<T>(input: BenchCommandInput): Promise<T> {
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      // With a callback, a child gone meanwhile (Ctrl-C reaches it too) rejects this command
      // instead of emitting an 'error' nobody listens to.
      this.spawned.child.send({ ...input, id }, (error) => {
        if (error === null) return;
        this.pending.delete(id);
        reject(error);
      });
    });
  }

  heapUsed(): Promise<number> {
    return this.command<NodeJS.MemoryUsage>({ cmd: 'heap' }).then((usage) => usage.heapUsed);
  }

  /** Asks the gateway to close and exit, then waits; returns at once when it has exited already. */
  async exit(): Promise<void> {
    const { child } = this.spawned;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    await this.command({ cmd: 'exit' }).catch(() => undefined);
    const timer = setTimeout(() => this.spawned.child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}
