/**
 * The load generator: closed-loop virtual clients (each sends its next request when the previous
 * answer is complete) over undici Pools, with per-request latencies and the server's CPU time per
 * request read from /proc. undici's request API, not fetch: fetch costs several times the CPU per
 * request, and the generator shares its core with the upstream.
 */
import { performance } from 'node:perf_hooks';
import { BalancedPool, Pool } from 'undici';
import type { Dispatcher } from 'undici';
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

export interface WindowResult {
  requests: number;
  seconds: number;
  /** Requests per second. */
  rps: number;
  /** Latencies in milliseconds. */
  p50: number;
  p99: number;
  /** Server CPU per request, microseconds. */
  cpuPerRequestUs: number;
  /** Fraction of one core the load generator itself used (near 1: the client side is the limit). */
  generatorBusy: number;
  /** Cores used meanwhile by processes outside the benchmark (a shared machine's noise). */
  background: number;
  errors: number;
  firstError?: string;
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
  let errors = 0;
  let firstError: string | undefined;
  let recording = false;
  let stop = false;
  const loop = async (call: Call): Promise<void> => {
    while (!stop) {
      const t0 = performance.now();
      try {
        await call();
      } catch (error) {
        errors++;
        firstError ??= String((error as Error).message ?? error);
        // A failing target must not spin: back off a little.
        await new Promise((resolve) => setTimeout(resolve, 5));
        continue;
      }
      if (recording) latencies.push(performance.now() - t0);
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
    errors,
    ...(firstError !== undefined ? { firstError } : {}),
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
