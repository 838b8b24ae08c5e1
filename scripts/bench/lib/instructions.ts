/**
 * Gateways' instructions per tools/call, counted by Valgrind's callgrind (Debian package
 * `valgrind`) instead of timed: what scripts/bench/instructions.ts reports for two trees, and what
 * the bench's audit trail figure compares for one tree with the trail on and off. On a shared
 * machine the CPU time per call spreads by ±10 % between rounds, and two processes of one tree
 * differ by up to 10 % for as long as they run; an instruction count repeats within about 1 % once
 * the JIT compiler's share is set apart, so a change worth a few percent of a call can be told from
 * noise.
 *
 * Each gateway is the bench's (gateway.ts on the bench catalog) under `valgrind --tool=callgrind`,
 * with V8's `--predictable` (no compiler or GC threads: every instruction runs on the one thread
 * callgrind counts). Counting is switched on after `warmup` calls and off after `calls` more, from
 * 8 closed-loop clients; the gateways given run at the same time, so they meet the same machine
 * (the per-millisecond and per-second caches of a gateway see the same wall clock). Under Valgrind a
 * call takes ~50 times its usual wall time, so work done once per millisecond or second (SQLite's
 * data_version check, the audit trail's time string) is counted on more calls than in a normal run:
 * absolute figures are above a normal run's.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { benchGatewayEnv } from './fixtures.js';
import { ClientSet, type Target } from './load.js';
import { firstLine, GatewayChild, SERVER_CORE, start } from './proc.js';
import { generateApiKey } from '../../../core/auth/keys.js';
import { newSessionId } from '../../../core/coordination/sessions.js';
import {
  connectScopes,
  floorTarget,
  legacyCallRequest,
  legacyTarget,
  modernCallRequest,
  modernTarget,
  scopeQueries,
} from './targets.js';

const CLIENTS = 8;

/**
 * Settings that keep a gateway under Valgrind working as under load: its audit trail written in
 * batches of 512, as a gateway taking more than 512 calls a second writes it whatever its flush
 * interval (at 1 s, a counted gateway's batches would be a tenth of that).
 */
const LOAD_LIKE = { TOOLGATE_AUDIT_FLUSH_MS: '60000' };

/** A gateway to count: its compiled gateway.ts, its tree's start options, settings of its own. */
export interface CountedGateway {
  name: string;
  script: string;
  nodeOptions: readonly string[];
  /** Settings beyond the bench gateway's (e.g. TOOLGATE_AUDIT=off). */
  settings?: Record<string, string>;
}

export interface CountOptions {
  transport: 'modern' | 'legacy';
  /** Calls counted, after `warmup` calls not counted. */
  calls: number;
  warmup: number;
  /** Scratch directory (the gateways' data and callgrind output). */
  work: string;
  upstreamUrl: string;
  /** Where to write each gateway's callgrind output with its JavaScript functions named. */
  keep?: string;
  /**
   * The compiled floor.ts (the bare Fastify + undici proxy), counted beside the gateways on the
   * same calls and returned last, named `floor`: the gateway's instructions over the floor's are
   * the issue-19 CPU ratio without the machine's state in it.
   */
  floor?: string;
  /**
   * Users of a client key to send the (2026-07-28) calls for in turn, each with a connection of its
   * own, connected before the warm-up; the floor is sent the same URLs. One scope (a solo key's)
   * without it.
   */
  scopes?: number;
}

/** Instructions per counted call: all of them, the JIT compiler's and the garbage collector's. */
export interface InstructionCount {
  name: string;
  total: number;
  compile: number;
  gc: number;
}

/** What is compared between trees: neither the JIT compiler's share nor the GC's (see instructions.ts). */
export const netOf = (count: InstructionCount): number => count.total - count.compile - count.gc;

/** What a call costs the gateway's CPU, the JIT compiler's share (which varies run to run) set apart. */
export const runOf = (count: InstructionCount): number => count.total - count.compile;

/** Why counting cannot run here, or undefined when it can. */
export function valgrindMissing(): string | undefined {
  return spawnSync('valgrind', ['--version']).status === 0
    ? undefined
    : 'valgrind is not installed (Debian: apt-get install valgrind)';
}

/**
 * The JIT compiler's and the garbage collector's entry points, by their C++ names. The collector's
 * include the steps of incremental marking (`IncrementalMarking::Step` under allocations, the
 * marking job's task, the finalization that ends in a full collection): a major collection's
 * marking falls in a counted window now and then, and alone added up to 40k instructions per call
 * to one gateway's count, outside `Heap::CollectGarbage`.
 */
const SHARES = { compile: /Runtime_Compile/, gc: /Heap::CollectGarbage|IncrementalMarking/ } as const;
type Share = keyof typeof SHARES;

const FUNCTION_LINE = /^c?fn=\((\d+)\)(?: (.*))?$/;

/**
 * Walks the cost lines of a callgrind output file: each with the function it is charged to and,
 * for the inclusive cost of a call that function makes, the callee; returns the file's total.
 */
function walkCosts(
  file: string,
  visit: (fn: string, cost: number, callee: string | undefined) => void,
): number {
  const names = new Map<string, string>();
  let total = 0;
  let fn = '';
  let callee = '';
  let afterCall = false;
  // `fn=(id) name` or `cfn=(id) name` the first time a function appears, `fn=(id)` after.
  const nameOf = (line: string): string => {
    const match = FUNCTION_LINE.exec(line);
    if (!match) return '';
    if (match[2] !== undefined) names.set(match[1]!, match[2]);
    return names.get(match[1]!) ?? '';
  };
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.startsWith('fn=')) fn = nameOf(line);
    else if (line.startsWith('cfn=')) callee = nameOf(line);
    else if (line.startsWith('calls=')) afterCall = true;
    else if (line.startsWith('totals:')) total = Number(line.slice(7));
    else if (/^[0-9+*-]/.test(line)) {
      visit(fn, Number(line.split(' ')[1]), afterCall ? callee : undefined);
      afterCall = false;
    }
  }
  return total;
}

/**
 * The events of a callgrind output file: its total, and the inclusive cost of the calls into each
 * of {@link SHARES} from functions outside it (so a share's own nested calls are not counted twice).
 */
function readCount(file: string): Omit<InstructionCount, 'name'> {
  const shareOf = (name: string): Share | undefined =>
    (Object.keys(SHARES) as Share[]).find((share) => SHARES[share].test(name));
  const count = { total: 0, compile: 0, gc: 0 };
  count.total = walkCosts(file, (fn, cost, callee) => {
    if (callee === undefined) return;
    const share = shareOf(callee);
    if (share && shareOf(fn) !== share) count[share] += cost;
  });
  return count;
}

/**
 * A function's name as two processes' outputs can share it: a JavaScript function without its
 * tier (`*` optimized, `^` baseline, `~` interpreted, `+` Maglev) or the build directory its file
 * was compiled to, a C++ function's compiler clones (`[clone .isra.0]`) as the function, and code
 * without a name as one entry.
 */
function sharedName(name: string): string {
  return name
    .replace(/^JS:[*^~+]/, 'JS:')
    .replace(/file:\/\/\S*?\/build\/(?=core|plugins|scripts)/g, '')
    .replace(/^0x[0-9a-f]+/, '(code without a name)')
    .replace(/ \[.*\]$/, '');
}

/**
 * The instructions each function ran itself (callees not included), per counted call, by
 * {@link sharedName}, from a callgrind output {@link countInstructions} kept; the JIT compiler's
 * and the collector's functions ({@link OWN_LEFT_OUT}) are left out, as the net count leaves out
 * their shares.
 */
export function ownCosts(file: string, calls: number): Map<string, number> {
  const costs = new Map<string, number>();
  walkCosts(file, (fn, cost, callee) => {
    if (callee !== undefined || OWN_LEFT_OUT.test(fn)) return;
    const name = sharedName(fn);
    costs.set(name, (costs.get(name) ?? 0) + cost / calls);
  });
  return costs;
}

/**
 * The JIT compiler's and the garbage collector's own functions, by name: their namespaces, and the
 * collector's visitors, markers, sweepers and evacuators (a major collection falling in a counted
 * window would otherwise top a diff).
 */
const OWN_LEFT_OUT =
  /v8::internal::(?:compiler|maglev|baseline|wasm)::|Heap::|Scaveng|Mark(?:ing|er|Compact)|Sweep|Evacuat|LiveObject|IteratePointers|MigratedSlot|Runtime_Compile/;

/** A process under callgrind, ready for calls. */
interface Measured {
  name: string;
  pid: number;
  out: string;
  target: Target;
  /** Asks it to exit, so that callgrind writes its output, and waits. */
  exit: () => Promise<void>;
  /** Kills it, unless it has exited. */
  stop: () => Promise<void>;
}

/** How long a counted process is given to exit and write its callgrind output, as gateway.exit() gives. */
const CALLGRIND_EXIT_MS = 10_000;

/** Valgrind's arguments for a process counted from the `instrumentation` switch on. */
const callgrindArgs = (out: string): string[] => [
  '-q',
  '--tool=callgrind',
  '--instr-atstart=no',
  `--callgrind-out-file=${out}`,
];

/**
 * Node's options for a counted process: every instruction on the main thread and, with `keep`, the
 * code map (V8 then also writes a log of its own, kept out of the repository).
 */
const countedNodeOptions = (dir: string, keep: string | undefined): string[] => [
  '--predictable',
  ...(keep ? ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${join(dir, 'v8.log')}`] : []),
];

/** Starts one gateway under callgrind, with its key and its connections (see CountOptions.scopes). */
async function startGateway(counted: CountedGateway, dir: string, options: CountOptions): Promise<Measured> {
  const out = join(dir, 'callgrind.out');
  const { env } = benchGatewayEnv(dir, options.upstreamUrl, { ...LOAD_LIKE, ...counted.settings });
  const gateway = await GatewayChild.start(SERVER_CORE, counted.script, env, {
    logFile: openSync('/dev/null', 'w'),
    nodeOptions: [...countedNodeOptions(dir, options.keep), ...counted.nodeOptions],
    launcher: ['valgrind', ...callgrindArgs(out)],
  });
  try {
    const key = await gateway.command<string>({
      cmd: 'key',
      client: 'bench',
      keyType: options.scopes === undefined ? 'solo' : 'client',
    });
    const scopes = await connectScopes(gateway.ready.url, key, options.scopes);
    const target =
      options.transport === 'legacy'
        ? legacyTarget([gateway], key, CLIENTS)
        : modernTarget([gateway], key, CLIENTS, scopes);
    return {
      name: counted.name,
      pid: gateway.pid,
      out,
      target,
      exit: () => gateway.exit(),
      stop: () => gateway.spawned.stop(),
    };
  } catch (error) {
    await gateway.spawned.stop();
    throw error;
  }
}

/** Starts floor.ts under callgrind, answering the same calls with the same upstream. */
async function startFloor(script: string, dir: string, options: CountOptions): Promise<Measured> {
  const out = join(dir, 'callgrind.out');
  mkdirSync(dir, { recursive: true });
  const floor = start(
    SERVER_CORE,
    'valgrind',
    [...callgrindArgs(out), process.execPath, ...countedNodeOptions(dir, options.keep), script],
    { env: { ...process.env, BENCH_UPSTREAM: options.upstreamUrl } },
  );
  try {
    const url = `http://127.0.0.1:${await firstLine(floor.child, 'floor')}`;
    return {
      name: 'floor',
      pid: floor.pid,
      out,
      // Sent the gateways' request: a key and a session id of theirs, which it does not check.
      target: floorTarget(
        url,
        floor.pid,
        CLIENTS,
        options.transport === 'legacy'
          ? legacyCallRequest(generateApiKey(), newSessionId())
          : modernCallRequest(generateApiKey(), scopeQueries(options.scopes)),
      ),
      // floor.ts closes and exits on SIGTERM; callgrind then writes its output, given the time.
      exit: () => floor.stop(CALLGRIND_EXIT_MS),
      stop: () => floor.stop(),
    };
  } catch (error) {
    await floor.stop();
    throw error;
  }
}

/** `count` calls from the clients of a target, closed loop. */
async function calls(target: Target, count: number): Promise<void> {
  const clients = await new ClientSet(target).ensure(CLIENTS);
  let left = count;
  await Promise.all(
    clients.map(async (call) => {
      while (left-- > 0) await call();
    }),
  );
}

/** A callgrind function name that is only an address: code without a symbol (V8's). */
const ADDRESS_NAME = /^(c?fn=\(\d+\)) 0x([0-9a-f]+)$/;

/**
 * The callgrind output with each function named by an address given V8's name for the code there,
 * from a `--perf-basic-prof` map (`start size name` a line, hexadecimal). Callgrind names a
 * function once, at its first mention; the later ones use its number.
 */
function nameJitFunctions(callgrind: string, perfMap: string): string {
  const code = perfMap
    .split('\n')
    .map((line) => /^([0-9a-f]+) ([0-9a-f]+) (.+)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ start: parseInt(m[1]!, 16), end: parseInt(m[1]!, 16) + parseInt(m[2]!, 16), name: m[3]! }))
    .sort((a, b) => a.start - b.start);
  const nameAt = (address: number): string | undefined => {
    let low = 0;
    let high = code.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (code[middle]!.start <= address) low = middle + 1;
      else high = middle - 1;
    }
    const found = code[high];
    return found && address < found.end ? found.name : undefined;
  };
  return callgrind
    .split('\n')
    .map((line) => {
      const m = ADDRESS_NAME.exec(line);
      const name = m && nameAt(parseInt(m[2]!, 16));
      return name ? `${m[1]} ${name.replace(/\s+/g, '_')}` : line;
    })
    .join('\n');
}

function instrumentation(pid: number, state: 'on' | 'off'): void {
  const result = spawnSync('callgrind_control', ['-i', state, String(pid)], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`callgrind_control -i ${state}: ${result.stderr}`);
}

/**
 * Counts each gateway's instructions over `calls` tools/calls (per call), the gateways (and with
 * `floor`, the floor) side by side; stops them. With `keep`, each one's callgrind output is
 * written there as `<name>.callgrind`.
 */
export async function countInstructions(
  gateways: readonly CountedGateway[],
  options: CountOptions,
): Promise<InstructionCount[]> {
  const started = await Promise.allSettled([
    ...gateways.map((counted, i) => startGateway(counted, join(options.work, String(i)), options)),
    ...(options.floor ? [startFloor(options.floor, join(options.work, 'floor'), options)] : []),
  ]);
  const measured = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  try {
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    await Promise.all(
      measured.map(async ({ pid, target, exit }) => {
        await calls(target, options.warmup);
        instrumentation(pid, 'on');
        await calls(target, options.calls);
        instrumentation(pid, 'off');
        await target.close();
        await exit();
      }),
    );
  } finally {
    await Promise.all(measured.map((m) => m.stop()));
  }
  if (options.keep) {
    mkdirSync(options.keep, { recursive: true });
    for (const m of measured) {
      const map = `/tmp/perf-${m.pid}.map`;
      const named = nameJitFunctions(readFileSync(m.out, 'utf8'), readFileSync(map, 'utf8'));
      writeFileSync(join(options.keep, `${m.name.replace(/\s+/g, '-')}.callgrind`), named);
      rmSync(map);
    }
  }
  return measured.map((m) => {
    const count = readCount(m.out);
    return {
      name: m.name,
      total: count.total / options.calls,
      compile: count.compile / options.calls,
      gc: count.gc / options.calls,
    };
  });
}
