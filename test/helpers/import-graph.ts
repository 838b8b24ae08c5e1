import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/** file -> the files of the tree it imports (relative imports, type-only ones and re-exports included). */
export type ImportGraph = Map<string, Set<string>>;

function sourceFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) out.push(...sourceFiles(root, path));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/**
 * Reads the imports of every TypeScript file under `dirs` with TypeScript's own pre-processor (the
 * same reading `tsc` does, comments and strings excluded), keeping those that resolve to a file of
 * the tree. Paths are relative to `root`, with `/` separators.
 */
export function readImportGraph(root: string, dirs: readonly string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of dirs.flatMap((dir) => sourceFiles(root, dir))) {
    const info = ts.preProcessFile(readFileSync(join(root, file), 'utf8'), true, true);
    const targets = new Set<string>();
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const target = resolve(root, dirname(file), fileName.replace(/\.js$/, '.ts'));
      if (existsSync(target) && statSync(target).isFile())
        targets.add(relative(root, target).split('\\').join('/'));
    }
    graph.set(file.split('\\').join('/'), targets);
  }
  return graph;
}

/** Every import circle (strongly connected component of more than one file, or a file importing itself). */
export function circles(graph: ImportGraph): string[][] {
  // Tarjan's algorithm, iterative enough for a source tree's depth.
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    indices.set(node, index);
    low.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, indices.get(next)!));
      }
    }
    if (low.get(node) === indices.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || graph.get(node)?.has(node)) found.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!indices.has(node)) visit(node);
  return found;
}

/** Every file `from` imports, directly or through others (`from` itself included), sorted. */
export function reachable(graph: ImportGraph, from: string): string[] {
  const seen = new Set<string>();
  const pending = [from];
  for (let file = pending.pop(); file !== undefined; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    pending.push(...(graph.get(file) ?? []));
  }
  return [...seen].sort();
}

/** A room of the layering: the files whose path matches, at a rank (higher ranks build on lower ones). */
export interface Room {
  name: string;
  rank: number;
  matches: (file: string) => boolean;
}

/**
 * The imports that break the layering: from a file to a room of a higher rank, or to another room
 * of the same rank (siblings do not know each other). Files of no room are reported too.
 */
export function layerViolations(graph: ImportGraph, rooms: readonly Room[]): string[] {
  const roomOf = (file: string): Room | undefined => rooms.find((room) => room.matches(file));
  const problems: string[] = [];
  for (const [file, targets] of graph) {
    const from = roomOf(file);
    if (!from) {
      problems.push(`${file} is in no layer: add it to a room of the layering`);
      continue;
    }
    for (const target of targets) {
      const to = roomOf(target);
      if (!to || to === from) continue;
      if (to.rank > from.rank)
        problems.push(`${file} (${from.name}) imports ${target} (${to.name}), a higher layer`);
      else if (to.rank === from.rank)
        problems.push(`${file} (${from.name}) imports ${target} (${to.name}), a sibling layer`);
    }
  }
  return problems.sort();
}
