/**
 * `npx tsx scripts/bench/instructions.ts [--baseline=DIR] [--floor] [--transport=modern|legacy]
 * [--calls=N] [--warmup=N] [--keep=DIR]`: the gateway's instructions per tools/call, counted by
 * Valgrind's callgrind (lib/instructions.ts says how and why) instead of timed, so a change worth
 * 1-2 % of a call can be kept or dropped on evidence (issue 19). With `--baseline` (another checkout
 * of the repo with its node_modules linked), that tree's gateway is counted at the same time as this
 * one's; with `--floor`, the floor (floor.ts, the bare Fastify + undici proxy) is, and the gateway's
 * count is given over the floor's: issue 19's CPU target as a ratio no machine state moves.
 *
 * Reported per call: all instructions; the JIT compiler's (still compiling hot code: under
 * `--predictable` it runs on the main thread, and how much a window holds varies from run to run);
 * the garbage collector's; and the rest, `net`, the figure to compare.
 *
 * `--keep=DIR` writes each gateway's callgrind output there (`this-tree.callgrind`,
 * `baseline.callgrind`), its JavaScript functions named: the gateways run with V8's
 * `--perf-basic-prof`, and each address callgrind names a function by is looked up in the map of
 * code V8 wrote (`JS:*name url:line:column`, `*` optimized, `^` baseline). Then
 * `callgrind_annotate FILE` lists functions by their own count, `--inclusive=yes --tree=caller`
 * who calls what (the builtins a JIT function jumps through blur its inclusive count).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildChildren, startOptions } from './lib/build.js';
import { REPO } from './lib/fixtures.js';
import { countInstructions, netOf, valgrindMissing, type CountedGateway } from './lib/instructions.js';
import { firstLine, start } from './lib/proc.js';

const args = process.argv.slice(2);
const option = (name: string): string | undefined =>
  args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const CALLS = Number(option('calls') ?? 6000);
const WARMUP = Number(option('warmup') ?? 6000);
const TRANSPORT = option('transport') ?? 'modern';
const BASELINE = option('baseline');
const KEEP = option('keep');
const FLOOR = args.includes('--floor');

const perCall = (events: number): string => `${(events / 1000).toFixed(1)}k`;

async function main(): Promise<void> {
  const missing = valgrindMissing();
  if (missing) throw new Error(missing);
  if (TRANSPORT !== 'modern' && TRANSPORT !== 'legacy') throw new Error('--transport is modern or legacy');
  const work = mkdtempSync(join(tmpdir(), 'toolgate-instructions-'));
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
      process.stderr.write(`${TRANSPORT} tools/call: ${WARMUP} calls of warm-up, then ${CALLS} counted\n`);
      const counts = await countInstructions(gateways, {
        transport: TRANSPORT,
        calls: CALLS,
        warmup: WARMUP,
        work: join(work, 'gateways'),
        upstreamUrl,
        ...(KEEP !== undefined ? { keep: KEEP } : {}),
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
    } finally {
      await upstream.stop();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exitCode = 1;
});
