/**
 * Catalog builds off the event loop (issue 16): a manifest whose document takes seconds to build
 * is hot-reloaded while calls keep being answered at once, and a manifest over a build limit
 * fails with a finding, keeps its last good version and leaves the other providers serving; a
 * worker killed while it waits for the next build is replaced by that build.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToolgate } from '../../helpers/cli.js';
import { connectWithKey, type TestClient } from '../../helpers/clients.js';
import { eventually } from '../../helpers/eventually.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { manifestYaml, weatherManifest } from '../../helpers/manifests.js';
import { jsonAnswer, startReceiver, type Receiver } from '../../helpers/receiver.js';

/** GitHub's issues of a repository, from whatever `github.openapi.yaml` beside it holds. */
const GITHUB = manifestYaml(
  'github',
  'Issues of a GitHub repository.',
  `api:
  base_url: https://api.github.example
openapi:
  file: github.openapi.yaml
  operations:
    include: [{ path: "/repos/{owner}/{repo}/issues" }]
categories:
  - { id: issues, title: Issues, match: [{ path: "*" }] }
`,
);

/** A small document with the one operation: builds in milliseconds. */
const SMALL_DOCUMENT = JSON.stringify({
  openapi: '3.0.3',
  info: { title: 'GitHub issues', version: '1' },
  paths: {
    '/repos/{owner}/{repo}/issues': {
      get: {
        operationId: 'issues/list-for-repo',
        summary: 'List repository issues',
        parameters: ['owner', 'repo'].map((name) => ({
          name,
          in: 'path',
          required: true,
          schema: { type: 'string' },
        })),
        responses: { '200': { description: 'The issues' } },
      },
    },
  },
});

/**
 * GitHub's full description with ten more copies of its components: a 48 MB document that a build
 * needs about 0.5 s (read, hashed, parsed) and about 65 MB of heap to read (its parsed values; the
 * text is held outside the heap), whichever operations the manifest selects: twice the smallest
 * memory limit there is, 32 MB.
 */
function bigDocument(): string {
  const github = JSON.parse(
    readFileSync('node_modules/@octokit/openapi/generated/api.github.com.json', 'utf8'),
  ) as Record<string, unknown>;
  for (let i = 0; i < 10; i++) github[`x-copy-${i}`] = github.components;
  return JSON.stringify(github);
}

let api: Receiver;
let big: string;

beforeAll(async () => {
  api = await startReceiver((req) => jsonAnswer(200, { at: req.url }));
  big = bigDocument();
});
afterAll(async () => {
  await api.close();
});

/** A gateway serving weather and the small GitHub document, its watcher off (reloads are asked). */
async function gatewayWith(env: Record<string, string> = {}): Promise<TestGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-build-'));
  writeFileSync(join(dir, 'weather.yaml'), weatherManifest());
  writeFileSync(join(dir, 'github.yaml'), GITHUB);
  writeFileSync(join(dir, 'github.openapi.yaml'), SMALL_DOCUMENT);
  const tg = await startGateway(
    {
      TOOLGATE_ALLOW_PRIVATE_NETWORK: '1',
      TOOLGATE_PROVIDER_WEATHER_BASE_URL: api.url,
      TOOLGATE_PROVIDER_GITHUB_BASE_URL: api.url,
      ...env,
    },
    { manifestFiles: ['weather.yaml', 'github.yaml', 'github.openapi.yaml'].map((f) => join(dir, f)) },
  );
  tg.gateway.catalog.stop();
  return tg;
}

/** The tools of the two providers, without the system tools. */
async function providerTools(client: TestClient): Promise<string[]> {
  return (await client.listToolNames()).filter((name) => /^(github|weather)_/.test(name));
}

/**
 * This process's child processes, read from /proc: pid and command line (empty once one has ended,
 * until this process reaps it).
 */
function children(): { pid: number; args: string }[] {
  const found: { pid: number; args: string }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      // stat: `pid (comm) state ppid …`; comm may hold spaces and parentheses, so after the last ')'.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      found.push({ pid: Number(name), args: readFileSync(`/proc/${name}/cmdline`, 'utf8') });
    } catch {
      // Ended between the listing and the read.
    }
  }
  return found;
}

/** The pids of this process's build workers. */
function buildWorkers(): number[] {
  return children()
    .filter((child) => child.args.includes('build-worker'))
    .map((child) => child.pid);
}

describe('a catalog build in a worker', () => {
  let tg: TestGateway;
  let client: TestClient;
  beforeAll(async () => {
    tg = await gatewayWith();
    client = await connectWithKey(tg, '2025 (v1 client)', '?user_id=u1');
  });
  afterAll(async () => {
    await client.close();
    await tg.close();
  });

  it('answers calls within milliseconds while a reload builds a document for seconds', async () => {
    expect(await providerTools(client)).toEqual(['github_issues_list_for_repo', 'weather_current']);
    // The first call compiles the tool's argument validator: not what is measured.
    await client.callTool('weather_current', { city: 'Oslo' });
    writeFileSync(join(tg.manifestsDir, 'github.openapi.yaml'), big);

    const started = performance.now();
    let building = true;
    const reload = tg.gateway.reloadCatalog().finally(() => (building = false));
    const latencies: number[] = [];
    while (building) {
      const sent = performance.now();
      const result = await client.callTool('weather_current', { city: 'Oslo' });
      latencies.push(performance.now() - sent);
      expect(result.content[0]!.text).toContain('/current?city=Oslo');
    }
    const report = await reload;
    const reloadMs = performance.now() - started;

    expect(report.changed).toEqual(['github']);
    expect(report.findings).toEqual({});
    expect(report.workerRssPeakMb).toBeGreaterThan(0);
    // The big document has the create operation too: the new version is the one serving.
    expect(await providerTools(client)).toContain('github_issues_create');
    // Built on the event loop, the document held every call overlapping it for the whole build
    // (a second or more; over half a second on a quiet machine is enough to tell), so the slowest
    // call took most of the reload. In a worker, calls take a few ms; the bound on the slowest is
    // relative because the worker, this process and other test processes share two cores, whose
    // scheduling alone delays a call by up to a few hundred ms.
    expect(reloadMs).toBeGreaterThan(500);
    expect(latencies.length).toBeGreaterThan(10);
    const sorted = [...latencies].sort((a, b) => a - b);
    expect(sorted[Math.floor(sorted.length / 2)]).toBeLessThan(20);
    expect(sorted.at(-1)).toBeLessThan(reloadMs / 4);
  });

  it('replaces a worker killed while it waits for the next build', async () => {
    // The reload's workers wait for the next build; the kernel's OOM killer, or an operator, ends them.
    const waiting = buildWorkers();
    expect(waiting.length).toBeGreaterThan(0);
    for (const pid of waiting) process.kill(pid, 'SIGKILL');
    // Gone once this process has reaped them, and so seen them exit.
    await eventually(() => Promise.resolve(!children().some((child) => waiting.includes(child.pid))));

    // A document unlike any this file's other tests write, so that it is a change whichever ran.
    const document = { ...(JSON.parse(SMALL_DOCUMENT) as object), 'x-written-by': 'the killed-worker test' };
    writeFileSync(join(tg.manifestsDir, 'github.openapi.yaml'), JSON.stringify(document));
    const report = await tg.gateway.reloadCatalog();

    expect(report.changed).toEqual(['github']);
    expect(report.findings).toEqual({});
    expect(await providerTools(client)).toEqual(['github_issues_list_for_repo', 'weather_current']);
    expect(buildWorkers().length).toBeGreaterThan(0);
  });
});

describe('a manifest over a build limit', () => {
  let tg: TestGateway;
  let client: TestClient;
  beforeAll(async () => {
    tg = await gatewayWith({ TOOLGATE_CATALOG_BUILD_MEMORY_MB: '32' });
    client = await connectWithKey(tg, '2025 (v1 client)', '?user_id=u1');
  });
  afterAll(async () => {
    await client.close();
    await tg.close();
  });

  it('fails with a finding naming the limit, keeps its last good version, and the others serve', async () => {
    writeFileSync(join(tg.manifestsDir, 'github.openapi.yaml'), big);
    const report = await tg.gateway.reloadCatalog();

    expect(report.keptOld).toEqual(['github']);
    expect(report.findings.github).toEqual([
      expect.objectContaining({
        code: 'TG_CATALOG_BUILD_LIMIT',
        severity: 'error',
        message: expect.stringContaining(
          'building provider "github" needed more than 32 MB of memory (TOOLGATE_CATALOG_BUILD_MEMORY_MB=32)',
        ) as unknown,
      }),
    ]);
    expect(await providerTools(client)).toEqual(['github_issues_list_for_repo', 'weather_current']);
    const issues = await client.callTool('github_issues_list_for_repo', { owner: 'o', repo: 'r' });
    expect(issues.content[0]!.text).toContain('/repos/o/r/issues');
    const weather = await client.callTool('weather_current', { city: 'Oslo' });
    expect(weather.content[0]!.text).toContain('/current?city=Oslo');

    const ready = (await (await fetch(`${tg.url}/readyz`)).json()) as {
      catalog: { stale: Record<string, string[]> };
    };
    expect(ready.catalog.stale.github?.join('\n')).toMatch(/TG_CATALOG_BUILD_LIMIT/);
    expect(
      tg.logs.some((line) => line.includes('TG_CATALOG_PROVIDER_FAILED') && line.includes('32 MB')),
    ).toBe(true);
  });

  it('is reported by `toolgate catalog validate`, over the time limit as over the memory limit', async () => {
    const validate = (env: Record<string, string>) =>
      runToolgate(['catalog', 'validate', tg.manifestsDir], { TOOLGATE_DATA_DIR: tg.dataDir, ...env });
    // The shortest limit there is: reading the document alone takes three times as long.
    const slow = await validate({ TOOLGATE_CATALOG_BUILD_TIMEOUT_MS: '100' });
    expect(slow.code).toBe(1);
    expect(slow.stdout).toMatch(
      /github\.yaml:1:1 +TG_CATALOG_BUILD_LIMIT +\(root\) +building provider "github" took longer than 0\.1 s \(TOOLGATE_CATALOG_BUILD_TIMEOUT_MS=100\) and was stopped; select fewer operations \(openapi > operations > include\) or raise TOOLGATE_CATALOG_BUILD_TIMEOUT_MS/,
    );

    const large = await validate({ TOOLGATE_CATALOG_BUILD_MEMORY_MB: '32' });
    expect(large.code).toBe(1);
    expect(large.stdout).toMatch(
      /github\.yaml:1:1 +TG_CATALOG_BUILD_LIMIT .*needed more than 32 MB of memory/,
    );
  });
});

describe('a catalog build on a machine of one core', () => {
  it('builds as on more: `toolgate catalog validate` pinned to one core', async () => {
    // Pinned, the process sees one core (availableParallelism), and its build worker starts with
    // the V8 flags of a single core (build-pool.ts): no helper threads, a larger interrupt budget.
    const dataDir = mkdtempSync(join(tmpdir(), 'toolgate-one-core-'));
    const result = await runToolgate(
      ['catalog', 'validate', 'test/fixtures/catalog/github-selection'],
      { TOOLGATE_DATA_DIR: dataDir },
      undefined,
      ['taskset', '--cpu-list', '0'],
    ).finally(() => rmSync(dataDir, { recursive: true, force: true }));
    expect(result.stderr).toBe('');
    expect(result.stdout).toMatch(/0 error\(s\), 0 warning\(s\)/);
    expect(result.code).toBe(0);
  });
});
