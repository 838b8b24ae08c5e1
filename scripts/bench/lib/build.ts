/**
 * The measured processes run compiled JavaScript, as `npm start` does (tsc output), not through
 * tsx: tsx's loader and esbuild's helpers (`__name` wrappers) would be measured with them. This
 * compiles the bench's child entry points, and everything of core/ and plugins/ they import, into
 * the run's scratch directory (type checking is `npm run typecheck`'s job; this only emits).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './fixtures.js';

/** Child entry points, relative to scripts/bench. */
const ENTRIES = ['gateway.ts', 'catalog.ts', 'corpus.ts', 'context.ts', 'floor.ts', 'list.ts', 'upstream.ts'];

/** Compiles the children of `repo` into `<work>/build`; returns the path of an entry's compiled file. */
export function buildChildren(work: string, repo = REPO): (entry: string) => string {
  const outDir = join(work, 'build');
  mkdirSync(work, { recursive: true });
  const tsconfig = join(work, 'tsconfig.bench.json');
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: join(repo, 'tsconfig.build.json'),
      compilerOptions: {
        outDir,
        rootDir: repo,
        noCheck: true,
        sourceMap: false,
        typeRoots: [join(repo, 'node_modules/@types')],
      },
      // The catalog's build worker is started by path, not imported: listed so it is compiled too.
      include: [
        ...ENTRIES.map((entry) => join(repo, 'scripts/bench', entry)),
        join(repo, 'core/catalog/build-worker.ts'),
      ],
      exclude: [],
    }),
  );
  const tsc = join(repo, 'node_modules/typescript/bin/tsc');
  const result = spawnSync(process.execPath, [tsc, '-p', tsconfig], { encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`compiling the bench children failed:\n${result.stdout}${result.stderr}`);
  // Compiled files resolve their packages from the repo's node_modules, as dist/ does.
  const modules = join(outDir, 'node_modules');
  if (!existsSync(modules)) symlinkSync(join(repo, 'node_modules'), modules, 'dir');
  return (entry) => join(outDir, 'scripts/bench', entry.replace(/\.ts$/, '.js'));
}

/**
 * The Node options `npm start` gives the gateway in `repo` (package.json's `start` script, e.g. a
 * larger young generation): the bench's gateway children run with the same ones.
 */
export function startOptions(repo = REPO): string[] {
  const pkg = JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as {
    scripts?: { start?: string };
  };
  const command = /\bnode((?:\s+--\S+)*)\s+dist\/scripts\/toolgate\.js\s+serve\b/.exec(
    pkg.scripts?.start ?? '',
  );
  if (!command)
    throw new Error(
      `${repo}/package.json: no \`node [options] dist/scripts/toolgate.js serve\` in scripts.start`,
    );
  return command[1]!
    .trim()
    .split(/\s+/)
    .filter((option) => option !== '');
}
