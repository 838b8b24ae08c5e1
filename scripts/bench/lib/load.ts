/**
 * The load generator: closed-loop virtual clients (each sends its next request when the previous
 * answer is complete) over undici Pools, with per-request latencies and the server's CPU time per
 * request read from /proc. undici's request API, not fetch: fetch costs several times the CPU per
 * request, and the generator shares its core with the upstream.
 */
import { performance } from 'node:perf_hooks';
import { BalancedPool, Pool } from 'undici';
import type { Dispatcher } from 'undici';
import type { WindowResult } from './ipc.js';
import { backgroundLoad, cpuMicros } from './proc.js';

/** One virtual client's next request; resolves when the answer is complete, throws when it is wrong. */
export type Call = () => Promise<void>;

/** A thing to load: makes one virtual client (its session, its stream) per index. */
export interface Target {
  name: string;
  /**
   * The processes whose CPU time, added up, is the cost per request: the server under test, or
   * every process of a deployment that shares the requests.
   */
  pids: readonly number[];
  client(index: number): Promise<Call>;
  close(): Promise<void>;
}

export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index]!;
}

export function median(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (finite.length === 0) return NaN;
  const mid = finite.length >> 1;
  return finite.length % 2 === 1 ? finite[mid]! : (finite[mid - 1]! + finite[mid]!) / 2;
}

/** Keeps the virtual clients of a target between windows (sessions are opened once). */
export class ClientSet {
  private readonly calls: Call[] = [];

  constructor(readonly target: Target) {}

  async ensure(count: number): Promise<Call[]> {
    while (this.calls.length < count) this.calls.push(await this.target.client(this.calls.length));
    return this.calls.slice(0, count);
  }
}

/** The calls of a window that failed: how many, and the first one's message. */
class Failures {
  private count = 0;
  private first: string | undefined;

  /** Makes one call; false when it failed, after a short pause (a failing target must not spin). */
  async attempt(call: Call): Promise<boolean> {
    try {
      await call();
      return true;
    } catch (error) {
      this.count++;
      this.first ??= String((error as Error).message ?? error);
      await new Promise((resolve) => setTimeout(resolve, 5));
      return false;
    }
  }

  report(): { errors: number; firstError?: string } {
    return { errors: this.count, ...(this.first !== undefined ? { firstError: this.first } : {}) };
  }
}

/**
 * Runs `clients` closed-loop clients for `warmupMs` (not recorded) then `ms` (recorded), and
 * reports throughput, latency percentiles and the server's CPU per request.
 */
export async function runWindow(
  set: ClientSet,
  clients: number,
  ms: number,
  warmupMs: number,
): Promise<WindowResult> {
  const calls = await set.ensure(clients);
  const serverCpu = (): number => set.target.pids.reduce((sum, pid) => sum + cpuMicros(pid), 0);
  const latencies: number[] = [];
  const failures = new Failures();
  let recording = false;
  let stop = false;
  const loop = async (call: Call): Promise<void> => {
    while (!stop) {
      const t0 = performance.now();
      if ((await failures.attempt(call)) && recording) latencies.push(performance.now() - t0);
    }
  };
  const loops = calls.map(loop);
  await new Promise((resolve) => setTimeout(resolve, warmupMs));
  const cpu0 = serverCpu();
  const gen0 = process.cpuUsage();
  const others = backgroundLoad();
  const started = performance.now();
  recording = true;
  await new Promise((resolve) => setTimeout(resolve, ms));
  recording = false;
  const seconds = (performance.now() - started) / 1000;
  const cpu1 = serverCpu();
  const gen = process.cpuUsage(gen0);
  const background = others();
  stop = true;
  await Promise.all(loops);
  latencies.sort((a, b) => a - b);
  const requests = latencies.length;
  return {
    requests,
    seconds,
    rps: requests / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    cpuPerRequestUs: requests > 0 ? (cpu1 - cpu0) / requests : NaN,
    generatorBusy: (gen.user + gen.system) / 1e6 / seconds,
    background,
    ...failures.report(),
  };
}

const POOL_OPTIONS = { pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 30_000, bodyTimeout: 30_000 };

/** An undici Pool sized for the most clients a target gets (one connection per client). */
export function pool(url: string, connections: number): Pool {
  return new Pool(url, { connections, ...POOL_OPTIONS });
}

/**
 * Requests spread over the processes of one deployment in turn, as a round-robin balancer without
 * sticky sessions sends them (undici's BalancedPool: strict turns while every process answers); one
 * URL is a plain Pool. The turns are taken in the load generator, so no balancer process adds its
 * CPU or a hop to the measurement.
 */
export function roundRobin(urls: readonly string[], connections: number): Dispatcher {
  if (urls.length === 1) return pool(urls[0]!, connections);
  return new BalancedPool([...urls], { connections, ...POOL_OPTIONS });
}

/** Reads a whole answer; throws unless the status is expected. */
export async function expectStatus(
  response: Dispatcher.ResponseData,
  status: number,
  what: string,
): Promise<string> {
  const text = await response.body.text();
  if (response.statusCode !== status)
    throw new Error(`${what}: HTTP ${response.statusCode} ${text.slice(0, 300)}`);
  return text;
}

/** A tools/call answer carries the upstream's item and is not an error result. */
export function checkCallResult(text: string, what: string): void {
  if (!text.includes('Widget 42') || text.includes('"isError":true'))
    throw new Error(`${what}: unexpected answer ${text.slice(0, 300)}`);
}

/** A promise and what resolves it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = (): void => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Two targets' CPU per request and throughput, from one span in which they took turns. */
export interface TurnsResult {
  /** Per target, in the order given: server CPU per request, microseconds. */
  cpuPerRequestUs: [number, number];
  /** Per target: requests per second of the time it had the load. */
  rps: [number, number];
  errors: number;
  firstError?: string;
}

/**
 * Runs `clients` closed-loop clients against two targets taking turns of `turnMs` (order ABBA,
 * repeated) for `ms` after `warmupMs` of the same turns, and reports each target's CPU per request
 * over the whole span. For a difference of a few percent between two processes that do the same
 * work: noise on a shared machine drifts over seconds, and turns much shorter than that meet the
 * same drift on both sides, where separate windows of a few seconds each do not. A target's CPU
 * while the other has the load (its timers, a batch it writes) is counted as its own.
 */
export async function runTurns(
  sets: readonly [ClientSet, ClientSet],
  clients: number,
  ms: number,
  turnMs: number,
  warmupMs: number,
): Promise<TurnsResult> {
  const calls = await Promise.all(sets.map((set) => set.ensure(clients)));
  const serverCpu = (side: number): number =>
    sets[side]!.target.pids.reduce((sum, pid) => sum + cpuMicros(pid), 0);
  const requests = [0, 0];
  const failures = new Failures();
  let active = 0;
  let recording = false;
  let stop = false;
  // Clients of the side waiting for its turn wait on this; resolved when the turn changes.
  let turnChanged = gate();
  const loop = async (side: number, call: Call): Promise<void> => {
    while (!stop) {
      if (active !== side) await turnChanged.opened;
      else if ((await failures.attempt(call)) && recording) requests[side]!++;
    }
  };
  const loops = calls.flatMap((list, side) => list.map((call) => loop(side, call)));
  const turns = async (span: number): Promise<void> => {
    for (let turn = 0; turn * turnMs < span; turn++) {
      active = [0, 1, 1, 0][turn % 4]!;
      const changed = turnChanged;
      turnChanged = gate();
      changed.open();
      await new Promise((resolve) => setTimeout(resolve, turnMs));
    }
  };
  await turns(warmupMs);
  const cpu0 = [serverCpu(0), serverCpu(1)];
  recording = true;
  const started = performance.now();
  await turns(ms);
  recording = false;
  const seconds = (performance.now() - started) / 1000;
  const cpu = [serverCpu(0) - cpu0[0]!, serverCpu(1) - cpu0[1]!];
  stop = true;
  turnChanged.open();
  await Promise.all(loops);
  return {
    cpuPerRequestUs: [cpu[0]! / requests[0]!, cpu[1]! / requests[1]!],
    rps: [requests[0]! / (seconds / 2), requests[1]! / (seconds / 2)],
    ...failures.report(),
  };
}

const progress = (text: string): void => void process.stderr.write(`${text}\n`);

/**
 * Cores other processes may use during a window of an interleaved round for it to count as measured
 * on a quiet machine; a window over it is measured again, at most {@link REMEASURES} times, and the
 * least disturbed of its measurements is kept (WindowResult.remeasured says how many more it took).
 * On this 2-core machine a neighbour's burst of a core and a half once made one round's p99 at one
 * client 14 ms against the other rounds' 0.4-0.5 ms (scripts/bench/results.json, 2026-11-28).
 */
export const QUIET_CORES = 0.25;
const REMEASURES = 2;

/** One window of `set`'s load, measured again while other processes disturbed it (see QUIET_CORES). */
async function quietWindow(
  set: ClientSet,
  clients: number,
  ms: number,
  settleMs: number,
): Promise<WindowResult> {
  let kept = await runWindow(set, clients, ms, settleMs);
  for (let again = 1; again <= REMEASURES && kept.background > QUIET_CORES; again++) {
    progress(
      `  ~ ${set.target.name} @${clients}: other processes used ${kept.background.toFixed(2)} cores; measuring again`,
    );
    const next = await runWindow(set, clients, ms, settleMs);
    kept = { ...(next.background < kept.background ? next : kept), remeasured: again };
  }
  return kept;
}

/**
 * Runs each target's window once per round, the first target rotating, at each client count; a
 * window disturbed by other processes is measured again ({@link quietWindow}).
 */
export async function interleave(
  sets: ClientSet[],
  rounds: number,
  clientCounts: readonly number[],
  windowMs: (clients: number) => number,
  settleMs: number,
): Promise<Map<string, WindowResult[]>[]> {
  const results: Map<string, WindowResult[]>[] = [];
  for (let round = 0; round < rounds; round++) {
    const byTarget = new Map<string, WindowResult[]>();
    for (const clients of clientCounts) {
      for (let i = 0; i < sets.length; i++) {
        const set = sets[(i + round) % sets.length]!;
        const result = await quietWindow(set, clients, windowMs(clients), settleMs);
        if (result.errors > 0)
          progress(
            `  ! ${set.target.name} @${clients}: ${result.errors} errors, first: ${result.firstError}`,
          );
        const list = byTarget.get(set.target.name) ?? [];
        list[clientCounts.indexOf(clients)] = result;
        byTarget.set(set.target.name, list);
      }
    }
    results.push(byTarget);
    progress(`  round ${round + 1}/${rounds} done`);
  }
  return results;
}
