import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  circles,
  layerViolations,
  reachable,
  readImportGraph,
  type ImportGraph,
  type Room,
} from '../helpers/import-graph.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

const under = (prefix: string) => (file: string) => file.startsWith(prefix);
const one = (path: string) => (file: string) => file === path;

/**
 * The layers of core/, lowest first (README.md, Architecture). A file may import its own room and
 * rooms of a lower rank; rooms of one rank are siblings and do not import each other.
 */
const LAYERS: readonly Room[] = [
  {
    name: 'base',
    rank: 0,
    matches: (f) =>
      [
        'core/domain.ts',
        'core/errors.ts',
        'core/config.ts',
        'core/keyring.ts',
        'core/lru.ts',
        'core/json.ts',
        'core/awaitable.ts',
      ].includes(f),
  },
  // Metrics and traces: observed from every layer above, importing none of them.
  { name: 'telemetry', rank: 0.5, matches: under('core/telemetry/') },
  { name: 'store', rank: 1, matches: under('core/store/') },
  { name: 'coordination', rank: 2, matches: under('core/coordination/') },
  { name: 'catalog', rank: 3, matches: under('core/catalog/') },
  { name: 'upstream', rank: 4, matches: under('core/upstream/') },
  { name: 'connections', rank: 5, matches: under('core/connections/') },
  { name: 'auth', rank: 5, matches: under('core/auth/') },
  { name: 'tools', rank: 6, matches: under('core/tools/') },
  { name: 'mcp', rank: 7, matches: under('core/mcp/') },
  { name: 'admin', rank: 8, matches: under('core/admin/') },
  { name: 'jobs', rank: 8, matches: one('core/jobs.ts') },
  { name: 'http', rank: 9, matches: under('core/http/') },
  { name: 'gateway', rank: 10, matches: one('core/gateway.ts') },
];

const graph = readImportGraph(ROOT, ['core', 'plugins', 'scripts', 'test']);
const within = (prefix: string): ImportGraph =>
  new Map([...graph].filter(([file]) => file.startsWith(prefix)));
const importsOf = (prefix: string, forbidden: string): string[] =>
  [...within(prefix)].flatMap(([file, targets]) =>
    [...targets].filter((t) => t.startsWith(forbidden)).map((t) => `${file} imports ${t}`),
  );

describe('the import graph', () => {
  it('has no import circle in core/ and plugins/', () => {
    expect(circles(new Map([...within('core/'), ...within('plugins/')]))).toEqual([]);
  });

  it('points one way through the layers of core/', () => {
    expect(layerViolations(within('core/'), LAYERS)).toEqual([]);
  });

  it('keeps domain.ts free of imports, and core/ free of plugins/, scripts/ and test/', () => {
    expect([...(graph.get('core/domain.ts') ?? [])]).toEqual([]);
    expect([
      ...importsOf('core/', 'plugins/'),
      ...importsOf('core/', 'scripts/'),
      ...importsOf('core/', 'test/'),
    ]).toEqual([]);
  });

  it('keeps tests from importing scripts/', () => {
    expect(importsOf('test/', 'scripts/')).toEqual([]);
  });

  // Every `toolgate` command but serve opens the store through core/admin/open.ts. Loading the HTTP
  // and MCP layers (Fastify, the MCP SDK) or the front door's oidc-provider with it took each such
  // command ~0.75 s more to start, three times its own work.
  it('opens the store for a command without the server: no HTTP, MCP or front-door oidc-provider code', () => {
    const server = (file: string): boolean =>
      file.startsWith('core/http/') ||
      file.startsWith('core/mcp/') ||
      file === 'core/gateway.ts' ||
      file === 'core/auth/front-door/index.ts' ||
      file === 'core/auth/front-door/adapter.ts';
    expect(reachable(graph, 'core/admin/open.ts').filter(server)).toEqual([]);
  });
});

describe('the import graph checks', () => {
  const planted: ImportGraph = new Map([
    ['core/store/a.ts', new Set(['core/domain.ts'])],
    ['core/domain.ts', new Set<string>()],
    ['core/tools/b.ts', new Set(['core/tools/c.ts', 'core/store/a.ts'])],
    ['core/tools/c.ts', new Set(['core/tools/b.ts'])],
    ['core/auth/d.ts', new Set(['core/connections/e.ts'])],
    ['core/connections/e.ts', new Set(['core/tools/b.ts'])],
    ['core/stray.ts', new Set<string>()],
  ]);

  it('find a planted circle', () => {
    expect(circles(planted)).toEqual([['core/tools/b.ts', 'core/tools/c.ts']]);
  });

  it('find what a file imports through others, across a circle', () => {
    expect(reachable(planted, 'core/connections/e.ts')).toEqual([
      'core/connections/e.ts',
      'core/domain.ts',
      'core/store/a.ts',
      'core/tools/b.ts',
      'core/tools/c.ts',
    ]);
  });

  it('find an import up the layers, between siblings, and a file in no layer', () => {
    expect(layerViolations(planted, LAYERS)).toEqual([
      'core/auth/d.ts (auth) imports core/connections/e.ts (connections), a sibling layer',
      'core/connections/e.ts (connections) imports core/tools/b.ts (tools), a higher layer',
      'core/stray.ts is in no layer: add it to a room of the layering',
    ]);
  });
});
