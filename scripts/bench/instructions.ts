/**
 * `npx tsx scripts/bench/instructions.ts [--baseline=DIR] [--transport=modern|legacy] [--calls=N]
 * [--warmup=N] [--keep=DIR]`: the gateway's instructions per tools/call, counted by Valgrind's callgrind (Debian
 * package `valgrind`) instead of timed. On a shared machine the CPU time per call of `npm run bench`
 * spreads by ±10 % between rounds; an instruction count repeats within about 1 % once the JIT
 * compiler's and the garbage collector's shares are set apart, so a change worth 1-2 % of a call
 * can be told from noise and kept or dropped on evidence (issue 19).
 *
 * Each gateway is the bench's (gateway.ts on the bench catalog, compiled as `npm start` runs it,
 * with its start options) under `valgrind --tool=callgrind`, with V8's `--predictable` (no
 * compiler or GC threads: every instruction runs on the one thread callgrind counts). Counting is
 * switched on after `--warmup` calls and off after `--calls` more, from 8 closed-loop clients. With
 * `--baseline`, that tree's gateway runs at the same time as this one's, so both meet the same
 * machine (the per-millisecond and per-second caches of a gateway see the same wall clock).
 *
 * Reported per call: all instructions; the JIT compiler's (still compiling hot code: under
 * `--predictable` it runs on the main thread, and how much a window holds varies from run to run);
 * the garbage collector's; and the rest, `net`, the figure to compare. Under Valgrind a call takes
 * ~50 times its usual wall time, so work done once per millisecond (SQLite's data_version check,
 * the audit trail's time string) is counted on nearly every call: absolute figures are above a
 * normal run's, ratios between trees are what this is for.
 *
 * `--keep=DIR` writes each gateway's callgrind output there (`this-tree.callgrind`,
 * `baseline.callgrind`), its JavaScript functions named: the gateways run with V8's
 * `--perf-basic-prof`, and each address callgrind names a function by is looked up in the map of
 * code V8 wrote (`JS:*name url:line:column`, `*` optimized, `^` baseline). Then
 * `callgrind_annotate FILE` lists functions by their own count, `--inclusive=yes --tree=caller`
 * who calls what (the builtins a JIT function jumps through blur its inclusive count).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildChildren, startOptions } from './lib/build.js';
import { benchGatewayEnv, REPO } from './lib/fixtures.js';
import { ClientSet, pool, type Target } from './lib/load.js';
import { firstLine, GatewayChild, SERVER_CORE, start, type Spawned } from './lib/proc.js';
import { legacyTarget, modernCall, modernTarget, UPSTREAM_KEY } from './lib/targets.js';

const args = process.argv.slice(2);
const option = (name: string): string | undefined =>
  args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const CALLS = Number(option('calls') ?? 6000);
const WARMUP = Number(option('warmup') ?? 6000);
const TRANSPORT = option('transport') ?? 'modern';
const BASELINE = option('baseline');
const KEEP = option('keep');
const CLIENTS = 8;

/** The JIT compiler's and the garbage collector's entry points, by their C++ names. */
const SHARES = { compile: /Runtime_Compile/, gc: /Heap::CollectGarbage/ } as const;
type Share = keyof typeof SHARES;

interface Count {
  total: number;
  compile: number;
  gc: number;
}

const FUNCTION_LINE = /^c?fn=\((\d+)\)(?: (.*))?$/;

/**
 * The events of a callgrind output file: its total, and the inclusive cost of the calls into each
 * of {@link SHARES} from functions outside it (so a share's own nested calls are not counted twice).
 */
function readCount(file: string): Count {
  const names = new Map<string, string>();
  const count: Count = { total: 0, compile: 0, gc: 0 };
  const shareOf = (name: string): Share | undefined =>
    (Object.keys(SHARES) as Share[]).find((share) => SHARES[share].test(name));
  let caller = '';
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
    if (line.startsWith('fn=')) caller = nameOf(line);
    else if (line.startsWith('cfn=')) callee = nameOf(line);
    else if (line.startsWith('calls=')) afterCall = true;
    else if (line.startsWith('totals:')) count.total = Number(line.slice(7));
    else if (afterCall && /^[0-9+*-]/.test(line)) {
      afterCall = false;
      const share = shareOf(callee);
      if (share && shareOf(caller) !== share) count[share] += Number(line.split(' ')[1]);
    }
  }
  return count;
}

interface Measured {
  name: string;
  gateway: GatewayChild;
  out: string;
  target: Target;
}

/** Starts one tree's compiled gateway.ts under callgrind, with its key and the bench connection. */
async function startGateway(
  name: string,
  repo: string,
  script: string,
  dir: string,
  upstreamUrl: string,
): Promise<Measured> {
  const out = join(dir, 'callgrind.out');
  const { env } = benchGatewayEnv(dir, upstreamUrl);
  const gateway = await GatewayChild.start(SERVER_CORE, script, env, {
    logFile: openSync('/dev/null', 'w'),
    nodeOptions: [
      '--predictable',
      // The code map; V8 then also writes a log of its own, kept out of the repository.
      ...(KEEP ? ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${join(dir, 'v8.log')}`] : []),
      ...startOptions(repo),
    ],
    launcher: ['valgrind', '-q', '--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${out}`],
  });
  const key = await gateway.command<string>({ cmd: 'key', client: 'bench', keyType: 'solo' });
  const setup = pool(gateway.ready.url, 1);
  try {
    await modernCall(setup, key, '', 'connect_provider', {
      provider: 'bench',
      credentials: { api_key: UPSTREAM_KEY },
    });
  } finally {
    await setup.close();
  }
  const target =
    TRANSPORT === 'legacy' ? legacyTarget([gateway], key, CLIENTS) : modernTarget([gateway], key, CLIENTS);
  return { name, gateway, out, target };
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

function instrumentation(gateway: GatewayChild, state: 'on' | 'off'): void {
  const result = spawnSync('callgrind_control', ['-i', state, String(gateway.pid)], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`callgrind_control -i ${state}: ${result.stderr}`);
}

const perCall = (events: number): string => `${(events / CALLS / 1000).toFixed(1)}k`;

async function main(): Promise<void> {
  if (spawnSync('valgrind', ['--version']).status !== 0)
    throw new Error('valgrind is not installed (Debian: apt-get install valgrind)');
  const work = mkdtempSync(join(tmpdir(), 'toolgate-instructions-'));
  const children: Spawned[] = [];
  try {
    const trees: [string, string][] = [['this tree', REPO]];
    if (BASELINE) trees.push(['baseline', resolve(BASELINE)]);
    // Each tree compiled once; the upstream is this tree's.
    const builds = trees.map(([, repo], i) => buildChildren(join(work, String(i)), repo));
    const upstream = start(0, process.execPath, [builds[0]!('upstream.ts')]);
    children.push(upstream);
    const upstreamUrl = `http://127.0.0.1:${await firstLine(upstream.child, 'upstream')}`;
    const measured = await Promise.all(
      trees.map(([name, repo], i) =>
        startGateway(name, repo, builds[i]!('gateway.ts'), join(work, String(i)), upstreamUrl),
      ),
    );
    children.push(...measured.map((m) => m.gateway.spawned));
    process.stderr.write(`${TRANSPORT} tools/call: ${WARMUP} calls of warm-up, then ${CALLS} counted\n`);
    await Promise.all(
      measured.map(async ({ gateway, target }) => {
        await calls(target, WARMUP);
        instrumentation(gateway, 'on');
        await calls(target, CALLS);
        instrumentation(gateway, 'off');
        await target.close();
        await gateway.exit();
      }),
    );
    const counts = measured.map((m) => ({ name: m.name, ...readCount(m.out) }));
    if (KEEP) {
      mkdirSync(KEEP, { recursive: true });
      for (const m of measured) {
        const map = `/tmp/perf-${m.gateway.pid}.map`;
        const named = nameJitFunctions(readFileSync(m.out, 'utf8'), readFileSync(map, 'utf8'));
        writeFileSync(join(KEEP, `${m.name.replace(' ', '-')}.callgrind`), named);
        rmSync(map);
      }
    }
    for (const { name, total, compile, gc } of counts) {
      const net = total - compile - gc;
      process.stdout.write(
        `${name}: ${perCall(net)} instructions per call net (all ${perCall(total)}, JIT compiler ${perCall(compile)}, GC ${perCall(gc)})\n`,
      );
    }
    const [self, base] = counts;
    if (self && base) {
      const net = (c: Count): number => c.total - c.compile - c.gc;
      process.stdout.write(
        `net instructions per call, this tree ÷ baseline: ${(net(self) / net(base)).toFixed(3)}\n`,
      );
    }
  } finally {
    await Promise.all(children.map((c) => c.stop()));
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exitCode = 1;
});
