/**
 * Summarises a V8 .cpuprofile (from `npm run bench -- --profile`): the functions with the most self
 * time, and the most inclusive time (a function and what it calls), as shares of the profile.
 *
 *   tsx scripts/bench/profile.ts <file.cpuprofile> [rows] [filter]
 *
 * `filter` keeps only functions whose location contains it (e.g. `core/` or `fastify`).
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function where(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  const short = url
    .replace(/^file:\/\//, '')
    .replace(/^.*\/node_modules\//, '')
    .replace(/^.*\/(core|plugins|scripts)\//, '$1/');
  return `${functionName || '(anonymous)'} ${short}${url ? `:${lineNumber + 1}` : ''}`;
}

const [file, rowsArg, filter] = process.argv.slice(2);
if (!file) throw new Error('usage: profile.ts <file.cpuprofile> [rows] [filter]');
const rows = Number(rowsArg ?? 30);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
const total = [...self.values()].reduce((a, b) => a + b, 0);

const selfByKey = new Map<string, number>();
for (const [id, time] of self) {
  const key = where(byId.get(id)!);
  selfByKey.set(key, (selfByKey.get(key) ?? 0) + time);
}

// Inclusive time: a node's self time plus its subtree's, counted once per function on each stack.
const inclusiveByKey = new Map<string, number>();
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
for (const [id, time] of self) {
  const seen = new Set<string>();
  for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
    const key = where(byId.get(at)!);
    if (seen.has(key)) continue;
    seen.add(key);
    inclusiveByKey.set(key, (inclusiveByKey.get(key) ?? 0) + time);
  }
}

function print(title: string, map: Map<string, number>): void {
  process.stdout.write(`\n${title} (of ${(total / 1e6).toFixed(2)} s sampled)\n`);
  [...map]
    .filter(([key]) => !filter || key.includes(filter))
    .sort((a, b) => b[1] - a[1])
    .slice(0, rows)
    .forEach(([key, time]) =>
      process.stdout.write(`${((time / total) * 100).toFixed(1).padStart(5)}%  ${key}\n`),
    );
}

print('self time', selfByKey);
print('inclusive time', inclusiveByKey);
