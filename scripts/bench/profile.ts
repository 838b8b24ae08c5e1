/**
 * Summarises a V8 profile from `npm run bench -- --profile` (.cpuprofile: the functions with the
 * most self time, and the most inclusive time, a function and what it calls) or from
 * `--profile=heap` (.heapprofile: the functions that allocate the most bytes themselves, and with
 * what they call), as shares of the profile.
 *
 *   tsx scripts/bench/profile.ts <file> [rows] [filter]
 *
 * `filter` keeps only functions whose location contains it (e.g. `core/` or `fastify`).
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

/** A CPU profile: nodes by id, and the node each sample was taken in with the time since the last. */
interface CpuProfile {
  nodes: { id: number; callFrame: CallFrame; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** A sampling heap profile: a tree of call sites, each with the bytes allocated in it. */
interface HeapNode {
  id: number;
  callFrame: CallFrame;
  selfSize: number;
  children: HeapNode[];
}

function where(callFrame: CallFrame): string {
  const { functionName, url, lineNumber } = callFrame;
  const short = url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/(core|plugins|scripts)\//, '$1/');
  return `${functionName || '(anonymous)'} ${short}${url ? `:${lineNumber + 1}` : ''}`;
}

const [file, rowsArg, filter] = process.argv.slice(2);
if (!file) throw new Error('usage: profile.ts <file.cpuprofile|file.heapprofile> [rows] [filter]');
const rows = Number(rowsArg ?? 30);
const data = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile | { head: HeapNode };

// Either profile as the same three things: each node's call frame, its parent, and its own weight
// (microseconds sampled in it, or bytes allocated in it).
const frames = new Map<number, CallFrame>();
const parent = new Map<number, number>();
const self = new Map<number, number>();
const heap = 'head' in data;
if ('head' in data) {
  const walk = (node: HeapNode): void => {
    frames.set(node.id, node.callFrame);
    self.set(node.id, node.selfSize);
    for (const child of node.children) {
      parent.set(child.id, node.id);
      walk(child);
    }
  };
  walk(data.head);
} else {
  for (const node of data.nodes) {
    frames.set(node.id, node.callFrame);
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  data.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (data.timeDeltas[i] ?? 0)));
}
const total = [...self.values()].reduce((a, b) => a + b, 0);

const selfByKey = new Map<string, number>();
for (const [id, time] of self) {
  const key = where(frames.get(id)!);
  selfByKey.set(key, (selfByKey.get(key) ?? 0) + time);
}

// Inclusive: a node's own weight plus its subtree's, counted once per function on each stack.
const inclusiveByKey = new Map<string, number>();
for (const [id, time] of self) {
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const key = where(frames.get(at)!);
    if (seen.has(key)) continue;
    seen.add(key);
    inclusiveByKey.set(key, (inclusiveByKey.get(key) ?? 0) + time);
  }
}

function print(title: string, map: Map<string, number>): void {
  const of = heap ? `${(total / 2 ** 20).toFixed(1)} MB allocated` : `${(total / 1e6).toFixed(2)} s sampled`;
  process.stdout.write(`\n${title} (of ${of})\n`);
  [...map]
    .filter(([key]) => !filter || key.includes(filter))
    .sort((a, b) => b[1] - a[1])
    .slice(0, rows)
    .forEach(([key, time]) =>
      process.stdout.write(`${((time / total) * 100).toFixed(1).padStart(5)}%  ${key}\n`),
    );
}

print(heap ? 'allocated in the function itself' : 'self time', selfByKey);
print(heap ? 'allocated in the function and what it calls' : 'inclusive time', inclusiveByKey);
