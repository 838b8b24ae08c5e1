/**
 * `npx tsx scripts/bench/instructions.ts [--baseline=DIR] [--floor] [--transport=modern|legacy]
 * [--scopes=N] [--calls=N] [--warmup=N] [--keep=DIR] [--diff[=N]]`: the gateway's instructions per
 * tools/call, counted by Valgrind's callgrind (lib/instructions.ts says how and why) instead of
 * timed, so a change worth 1-2 % of a call can be kept or dropped on evidence (issue 19). With
 * `--baseline` (another checkout of the repo with its node_modules linked), that tree's gateway is
 * counted at the same time as this one's; with `--floor`, the floor (floor.ts, the bare Fastify +
 * undici proxy) is, and the gateway's count is given over the floor's: issue 19's CPU target as a
 * ratio no machine state moves.
 *
 * Reported per call: all instructions; the JIT compiler's (still compiling hot code: under
 * `--predictable` it runs on the main thread, and how much a window holds varies from run to run);
 * the garbage collector's; and the rest, `net`, the figure to compare.
 *
 * `--scopes=N` sends the (2026-07-28) calls for N users of a client key in turn, each with a
 * connection of its own, as the bench's "10,000 scopes in turn" variant does (the floor is sent the
 * same URLs); without it, every call is for a solo key's one scope. Counted once with and once
 * without, a scope among many is told from one scope by what it costs in instructions (issue 19).
 * Give it a warm-up of more calls than scopes (`--scopes=10000 --warmup=12000`), so that every
 * scope is counted after its first call.
 *
 * `--keep=DIR` writes each gateway's callgrind output there (`this-tree.callgrind`,
 * `baseline.callgrind`), its JavaScript functions named: the gateways run with V8's
 * `--perf-basic-prof`, and each address callgrind names a function by is looked up in the map of
 * code V8 wrote (`JS:*name url:line:column`, `*` optimized, `^` baseline). Then
 * `callgrind_annotate FILE` lists functions by their own count, `--inclusive=yes --tree=caller`
 * who calls what (the builtins a JIT function jumps through blur its inclusive count).
 *
 * `--diff[=N]` (with `--baseline` or `--floor`) lists the N functions (30 by default) whose own
 * instructions per call differ most between this tree's gateway and the other process (the
 * baseline's, else the floor): where a change moved the count, or where the gateway spends beyond
 * what the floor does (issue 19). The JIT compiler's and the collector's own functions are left
 * out, as the net count leaves them out.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildChildren, startOptions } from './lib/build.js';
import { REPO } from './lib/fixtures.js';
import {
  countInstructions,
  netOf,
  ownCosts,
  valgrindMissing,
  type CountedGateway,
} from './lib/instructions.js';
import { firstLine, start } from './lib/proc.js';

const args = process.argv.slice(2);
const option = (name: string): string | undefined =>
  args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const CALLS = Number(option('calls') ?? 6000);
const WARMUP = Number(option('warmup') ?? 6000);
const TRANSPORT = option('transport') ?? 'modern';
const SCOPES = option('scopes') === undefined ? undefined : Number(option('scopes'));
const BASELINE = option('baseline');
const KEEP = option('keep');
const FLOOR = args.includes('--floor');
const DIFF_ROWS = args.includes('--diff')
  ? 30
  : option('diff') !== undefined
    ? Number(option('diff'))
    : undefined;

const perCall = (events: number): string => `${(events / 1000).toFixed(1)}k`;

async function main(): Promise<void> {
  const missing = valgrindMissing();
  if (missing) throw new Error(missing);
  if (TRANSPORT !== 'modern' && TRANSPORT !== 'legacy') throw new Error('--transport is modern or legacy');
  if (DIFF_ROWS !== undefined && !(Number.isInteger(DIFF_ROWS) && DIFF_ROWS > 0))
    throw new Error('--diff takes a number of functions, e.g. --diff=40');
  if (SCOPES !== undefined && !(Number.isInteger(SCOPES) && SCOPES > 0))
    throw new Error('--scopes takes a number of users, e.g. --scopes=10000');
  if (SCOPES !== undefined && TRANSPORT !== 'modern')
    throw new Error('--scopes counts 2026-07-28 calls only');
  if (DIFF_ROWS !== undefined && !BASELINE && !FLOOR) throw new Error('--diff needs --baseline or --floor');
  const work = mkdtempSync(join(tmpdir(), 'toolgate-instructions-'));
  // The outputs a diff reads, with their functions named, wherever --keep does not put them.
  const keep = KEEP ?? (DIFF_ROWS !== undefined ? join(work, 'kept') : undefined);
  try {
    const trees: [string, string][] = [['this tree', REPO]];
    if (BASELINE) trees.push(['baseline', resolve(BASELINE)]);
    // Each tree compiled once; the upstream is this tree's.
    const builds = trees.map(([, repo], i) => buildChildren(join(work, `build-${i}`), repo));
    const upstream = start(0, process.execPath, [builds[0]!('upstream.ts')]);
    try {
      const upstreamUrl = `http://127.0.0.1:${await firstLine(upstream.child, 'upstream')}`;
      const gateways: CountedGateway[] = trees.map(([name, repo], i) => ({
        name,
        script: builds[i]!('gateway.ts'),
        nodeOptions: startOptions(repo),
      }));
      const over = SCOPES === undefined ? '' : ` over ${SCOPES} scopes in turn`;
      process.stderr.write(
        `${TRANSPORT} tools/call${over}: ${WARMUP} calls of warm-up, then ${CALLS} counted\n`,
      );
      const counts = await countInstructions(gateways, {
        transport: TRANSPORT,
        calls: CALLS,
        warmup: WARMUP,
        work: join(work, 'gateways'),
        upstreamUrl,
        ...(SCOPES !== undefined ? { scopes: SCOPES } : {}),
        ...(keep !== undefined ? { keep } : {}),
        ...(FLOOR ? { floor: builds[0]!('floor.ts') } : {}),
      });
      for (const count of counts) {
        process.stdout.write(
          `${count.name}: ${perCall(netOf(count))} instructions per call net (all ${perCall(count.total)}, JIT compiler ${perCall(count.compile)}, GC ${perCall(count.gc)})\n`,
        );
      }
      const self = counts[0]!;
      const base = BASELINE ? counts[1] : undefined;
      const floor = counts.find((count) => count.name === 'floor');
      if (base) {
        process.stdout.write(
          `net instructions per call, this tree ÷ baseline: ${(netOf(self) / netOf(base)).toFixed(3)}\n`,
        );
      }
      if (floor) {
        process.stdout.write(
          `net instructions per call, this tree ÷ floor: ${(netOf(self) / netOf(floor)).toFixed(3)}\n`,
        );
      }
      if (keep !== undefined && DIFF_ROWS !== undefined)
        printDiff(keep, BASELINE ? 'baseline' : 'floor', DIFF_ROWS);
    } finally {
      await upstream.stop();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const NAME_WIDTH = 120;
/** A name cut to {@link NAME_WIDTH} characters: C++ template names run to hundreds. */
const shortened = (name: string): string =>
  name.length > NAME_WIDTH ? `${name.slice(0, NAME_WIDTH - 1)}…` : name;

/** The functions whose own instructions per call differ most between this tree and `other`. */
function printDiff(dir: string, other: string, rows: number): void {
  const mine = ownCosts(join(dir, 'this-tree.callgrind'), CALLS);
  const theirs = ownCosts(join(dir, `${other}.callgrind`), CALLS);
  const names = [...new Set([...mine.keys(), ...theirs.keys()])];
  const change = (name: string): number => (mine.get(name) ?? 0) - (theirs.get(name) ?? 0);
  names.sort((a, b) => Math.abs(change(b)) - Math.abs(change(a)));
  const cell = (n: number | undefined): string => (n === undefined ? '-' : n.toFixed(0)).padStart(9);
  process.stdout.write(
    `\nown instructions per call, the functions that differ most (this tree - ${other}):\n` +
      `${'change'.padStart(9)}${'this tree'.padStart(10)}${other.padStart(10)}  function\n`,
  );
  for (const name of names.slice(0, rows)) {
    const delta = change(name);
    process.stdout.write(
      `${`${delta > 0 ? '+' : ''}${delta.toFixed(0)}`.padStart(9)} ${cell(mine.get(name))} ${cell(theirs.get(name))}  ${shortened(name)}\n`,
    );
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exitCode = 1;
});
