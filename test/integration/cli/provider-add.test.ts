/**
 * `toolgate provider add` (issue 16): the real command drafts a manifest from an OpenAPI document
 * (a file, or a URL on a loopback server), writes it with the document or a curated subset,
 * validates it with the real compile, and a gateway started on that directory serves its tools.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { CatalogReport, Manifest } from '../../../core/catalog/index.js';
import { runToolgate } from '../../helpers/cli.js';
import { connectWithKey } from '../../helpers/clients.js';
import { startGateway } from '../../helpers/gateway.js';
import { jsonAnswer, startReceiver, type Receiver } from '../../helpers/receiver.js';

const FIXTURES = fileURLToPath(new URL('../../fixtures/provider-add/', import.meta.url));
const GITHUB = fileURLToPath(
  new URL('../../../node_modules/@octokit/openapi/generated/api.github.com.json', import.meta.url),
);

let api: Receiver;
let dir: string;
/** Gateways and clients a test started, closed after it, last first. */
const started: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  // The provider's API for the tools, and a web server for the calendar's document.
  api = await startReceiver((req) =>
    req.url.startsWith('/docs/calendar.json')
      ? { status: 200, body: readFileSync(`${FIXTURES}calendar.json`, 'utf8') }
      : req.url.startsWith('/docs/')
        ? { status: 404, body: 'not found' }
        : jsonAnswer(200, { email: 'ann@petshop.test', items: [] }),
  );
});
afterAll(async () => {
  await api?.close();
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-provider-add-'));
});
afterEach(async () => {
  for (const running of started.splice(0).reverse()) await running.close();
  rmSync(dir, { recursive: true, force: true });
});

function add(args: string[], env: Record<string, string> = {}) {
  return runToolgate(['provider', 'add', ...args, '--manifests', dir], {
    TOOLGATE_DATA_DIR: join(dir, 'data'),
    TOOLGATE_LOG_LEVEL: 'silent',
    ...env,
  });
}

function manifestOf(id: string): Manifest {
  return parse(readFileSync(join(dir, `${id}.yaml`), 'utf8')) as Manifest;
}

describe('toolgate provider add', () => {
  it('drafts an API-key provider that a running gateway loads and serves, # and ? paths included', async () => {
    // The gateway runs on the manifests dir before the provider exists: it loads it by itself.
    const tg = await startGateway({
      TOOLGATE_MANIFESTS_DIR: dir,
      TOOLGATE_ALLOW_PRIVATE_NETWORK: '1',
      TOOLGATE_PROVIDER_PETS_BASE_URL: `${api.url}/v1`,
    });
    started.push(tg);
    const loaded = new Promise<void>((resolve) => {
      const onReload = (report: CatalogReport): void => {
        if (!report.added.includes('pets')) return;
        tg.gateway.catalog.off('reloaded', onReload);
        resolve();
      };
      tg.gateway.catalog.on('reloaded', onReload);
    });
    const run = await add(['--openapi', `${FIXTURES}petshop.yaml`, '--id', 'pets']);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('catalog validate: 6 tools in 3 categories, 0 error(s), 0 warning(s).');
    expect(run.stdout).toContain('Base URL https://eu.petshop.test/v1, from servers[0].');
    expect(run.stdout).toContain('Server variable region is set to its default "eu" of eu, us.');
    expect(run.stdout).toContain('with TOOLGATE_PROVIDER_PETS_BASE_URL');
    expect(run.stdout).toContain('pets_create_pet (POST /pets): only "Add a pet"');
    expect(run.stdout).toContain(
      'pets_delete_pet_hard (DELETE /pets/{petId}#hard): no summary or description',
    );
    // The document is kept as read, beside the manifest.
    expect(readFileSync(join(dir, 'pets.openapi.yaml'))).toEqual(readFileSync(`${FIXTURES}petshop.yaml`));
    const manifest = manifestOf('pets');
    expect(manifest).toMatchObject({
      id: 'pets',
      display_name: 'Pet Shop',
      description: 'Find, add and remove the pets of a pet shop.',
      docs_url: 'https://docs.petshop.test/api',
      auth: {
        kind: 'api_key',
        credentials: {
          api_key: { title: 'API key', description: 'Pet Shop dashboard > Settings > API keys' },
        },
        inject: [{ in: 'header', name: 'X-Api-Key', format: '${api_key}' }],
      },
      api: { base_url: 'https://eu.petshop.test/v1' },
      verify: { method: 'GET', path: '/me' },
      openapi: { file: './pets.openapi.yaml' },
    });
    expect(manifest.categories.map((c) => [c.id, c.title])).toEqual([
      ['pets', 'Pets'],
      ['store', 'Store'],
      ['general', 'General'],
    ]);

    await loaded;
    const agent = await connectWithKey(tg, '2025 (v1 client)', '?user_id=ann');
    started.push(agent);
    const connected = await agent.callTool('connect_provider', {
      provider: 'pets',
      credentials: { api_key: 'pk_test_1' },
    });
    expect(connected.isError).toBeFalsy();
    expect(api.received.at(-1)).toMatchObject({ method: 'GET', url: '/v1/me' });
    expect(await agent.listToolNames()).toEqual(
      expect.arrayContaining([
        'pets_list_pets',
        'pets_create_pet',
        'pets_delete_pet_hard',
        'pets_get_inventory',
        'pets_search_dogs',
        'pets_get_me',
      ]),
    );
    expect((await agent.callTool('pets_delete_pet_hard', { petId: '7' })).isError).toBeFalsy();
    expect(api.received.at(-1)).toMatchObject({ method: 'DELETE', url: '/v1/pets/7' });
    expect(api.received.at(-1)!.headers['x-api-key']).toBe('pk_test_1');
    await agent.callTool('pets_search_dogs', { name: 'rex' });
    expect(api.received.at(-1)).toMatchObject({ method: 'GET', url: '/v1/search?kind=dog&name=rex' });
  }, 60_000);

  it('keeps a 2.0 JSON document as read and drafts HTTP basic auth, reading and changing tools apart', async () => {
    const run = await add(['--openapi', `${FIXTURES}notes.json`, '--id', 'notes']);
    expect(run.stdout).toContain('catalog validate: 3 tools in 2 categories, 0 error(s)');
    expect(run.code).toBe(0);
    expect(readFileSync(join(dir, 'notes.openapi.json'))).toEqual(readFileSync(`${FIXTURES}notes.json`));
    expect(run.stdout).toContain('The document also offers "legacyKey"; the draft uses "basicAuth"');
    expect(run.stdout).toContain('notes_list_notes (GET /notes): only "List"');
    expect(run.stdout).toContain('auth > credentials > username > description: where users find it');
    expect(run.stdout).toContain('verify: a cheap call every valid credential may make');
    const manifest = manifestOf('notes');
    expect(manifest.auth).toEqual({
      kind: 'api_key',
      credentials: { username: { title: 'Username' }, password: { title: 'Password' } },
      inject: [{ in: 'basic', username: '${username}', password: '${password}' }],
    });
    // schemes [http, https]: the https one.
    expect(manifest.api).toEqual({ base_url: 'https://notes.test/api' });
    expect(manifest.categories.map((c) => c.title)).toEqual(['Read', 'Create and change']);
  }, 30_000);

  it('merges many tags into at most five readable categories, and drafts bearer auth', async () => {
    const run = await add(['--openapi', `${FIXTURES}tracker.yaml`, '--id', 'tracker']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('catalog validate: 15 tools in 5 categories, 0 error(s), 0 warning(s).');
    // Names checked by the compiler's own rules: a duplicate took a suffix, a long one was cut.
    expect(run.stdout).toContain(
      'tracker_list_issues_2 (GET /search/issues) took a suffix: another operation derives tracker_list_issues; name one of them under openapi > overrides',
    );
    expect(run.stdout).toMatch(
      /tracker_subscribe_the_authenticated_user_[0-9a-f]{6} \(PUT \/issues\/\{id\}\/subscriptions\) was cut to 48 characters; give a shorter one under openapi > overrides > "PUT \/issues\/\{id\}\/subscriptions" > name/,
    );
    expect(run.stdout).toContain('The document lists 1 more server(s) (https://sandbox.tracker.test)');
    const manifest = manifestOf('tracker');
    expect(manifest.categories.map((c) => c.title)).toEqual([
      'Issues, issue comments and issue labels',
      'Projects and project boards',
      'Audit log and teams',
      'Users',
      'Webhooks',
    ]);
    expect(manifest.auth).toEqual({
      kind: 'api_key',
      credentials: {
        api_key: { title: 'Access token (JWT)', description: 'Tracker > Profile > Personal tokens' },
      },
      inject: [{ in: 'bearer', format: '${api_key}' }],
    });
  }, 30_000);

  it('fetches a document from a URL, resolving its relative server, and drafts OAuth2 with the scopes its operations use', async () => {
    const url = `${api.url}/docs/calendar.json?token=s3cr3t`;
    // Loopback is a private address: refused unless the network guard is off.
    const refused = await add(['--openapi', url, '--id', 'cal']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`could not fetch ${api.url}/docs/calendar.json:`);
    expect(refused.stderr).not.toContain('s3cr3t');
    const notFound = await add(['--openapi', `${api.url}/docs/gone.json`, '--id', 'cal'], {
      TOOLGATE_ALLOW_PRIVATE_NETWORK: '1',
    });
    expect(notFound.stderr).toBe(
      `toolgate: ${api.url}/docs/gone.json answered HTTP 404; check the URL, or download the document and pass its file\n`,
    );

    const run = await add(['--openapi', url, '--id', 'cal'], { TOOLGATE_ALLOW_PRIVATE_NETWORK: '1' });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('catalog validate: 3 tools in 2 categories, 0 error(s)');
    expect(run.stdout).not.toContain('s3cr3t');
    expect(readFileSync(join(dir, 'cal.yaml'), 'utf8')).toContain(
      `# Drafted by \`toolgate provider add\` from ${api.url}/docs/calendar.json\n`,
    );
    expect(run.stdout).toContain(
      'Scopes: 3 requested by default (events.read, events.write, calendars.read), the ones the selected operations name',
    );
    expect(run.stdout).toContain('TOOLGATE_PROVIDER_CAL_CLIENT_ID and TOOLGATE_PROVIDER_CAL_CLIENT_SECRET');
    expect(readFileSync(join(dir, 'cal.openapi.json'), 'utf8')).toBe(
      readFileSync(`${FIXTURES}calendar.json`, 'utf8'),
    );
    const manifest = manifestOf('cal');
    expect(manifest.auth).toEqual({
      kind: 'oauth2',
      authorization_url: 'https://auth.calendar.test/oauth/authorize',
      token_url: 'https://auth.calendar.test/oauth/token',
      scopes: {
        default: ['events.read', 'events.write', 'calendars.read'],
        optional: ['admin'],
        separator: ' ',
      },
    });
    // "/v2" against where the document came from, in https.
    expect(manifest.api).toEqual({ base_url: `${api.url.replace('http:', 'https:')}/v2` });
  }, 30_000);

  it("writes GitHub's operations that --operations selects, with only what they reference, and a gateway lists them", async () => {
    const selectors = 'issues/create;issues/get;GET /user;tag=reactions,method=GET,path=/repos/*/issues/*';
    const run = await add(['--openapi', GITHUB, '--id', 'gh', '--operations', selectors]);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('the 5 selected of');
    expect(run.stdout).toContain('catalog validate: 5 tools in 3 categories, 0 error(s), 0 warning(s).');
    const subset = JSON.parse(readFileSync(join(dir, 'gh.openapi.json'), 'utf8')) as {
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(Object.keys(subset.paths).sort()).toEqual([
      '/repos/{owner}/{repo}/issues',
      '/repos/{owner}/{repo}/issues/comments/{comment_id}/reactions',
      '/repos/{owner}/{repo}/issues/{issue_number}',
      '/repos/{owner}/{repo}/issues/{issue_number}/reactions',
      '/user',
    ]);
    // Only the selected methods of a path, and the components they reach.
    expect(Object.keys(subset.paths['/repos/{owner}/{repo}/issues']!)).toEqual(['post']);
    expect(subset.components.schemas).toHaveProperty('issue');
    expect(subset.components.schemas).not.toHaveProperty('workflow-run');
    const original = JSON.parse(readFileSync(GITHUB, 'utf8')) as { components: { schemas: object } };
    expect(Object.keys(subset.components.schemas).length).toBeLessThan(
      Object.keys(original.components.schemas).length / 5,
    );
    expect(readFileSync(join(dir, 'gh.yaml'), 'utf8')).toContain(
      "# with --operations 'operationId=issues/create;operationId=issues/get;method=GET,path=/user;tag=reactions,method=GET,path=/repos/*/issues/*'",
    );

    // GitHub's description declares no security scheme: auth none, so no connection is needed.
    const tg = await startGateway({ TOOLGATE_MANIFESTS_DIR: dir });
    started.push(tg);
    const agent = await connectWithKey(tg, '2026-07-28', '?user_id=ann');
    started.push(agent);
    expect(await agent.listToolNames()).toEqual(
      expect.arrayContaining([
        'gh_issues_create',
        'gh_issues_get',
        'gh_users_get_authenticated',
        'gh_reactions_list_for_issue',
        'gh_reactions_list_for_issue_comment',
      ]),
    );
  }, 60_000);

  it('writes a YAML subset with the operations selected, the components they reach and their security scheme', async () => {
    const run = await add([
      '--openapi',
      `${FIXTURES}petshop.yaml`,
      '--id',
      'pets',
      '--operations',
      'tag=pets',
    ]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('(the 3 selected of 6 operations and what they reference)');
    expect(run.stdout).toContain('catalog validate: 3 tools in 2 categories, 0 error(s), 0 warning(s).');
    const subset = parse(readFileSync(join(dir, 'pets.openapi.yaml'), 'utf8')) as {
      paths: Record<string, object>;
      tags: unknown[];
      components: { schemas: object; securitySchemes: object };
    };
    expect(Object.keys(subset.paths)).toEqual(['/pets', '/pets/{petId}#hard']);
    expect(subset.tags).toEqual([{ name: 'pets', description: 'The pets for sale. Everything about them.' }]);
    expect(Object.keys(subset.components.schemas)).toEqual(['Pet', 'NewPet', 'Tag']);
    expect(Object.keys(subset.components.securitySchemes)).toEqual(['shop_key']);
  }, 30_000);

  it('exits non-zero with the findings when the draft does not validate', async () => {
    const run = await add(['--openapi', `${FIXTURES}xml-only.yaml`, '--id', 'legacy']);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('TG_MANIFEST_NO_TOOLS');
    expect(run.stdout).toContain('POST /upload (upload) is skipped: request body of type application/xml');
    expect(run.stdout).toContain(
      `The manifest does not validate: fix the errors above in ${join(dir, 'legacy.yaml')}, then run \`toolgate catalog validate\`.`,
    );
  }, 30_000);

  it('refuses bad input with what to do', async () => {
    const pets = (...more: string[]) => add(['--openapi', `${FIXTURES}petshop.yaml`, ...more]);
    const [missing, notOpenApi, badId, reserved, none, typo] = await Promise.all([
      add(['--openapi', `${FIXTURES}nothing.yaml`, '--id', 'pets']),
      add(['--openapi', `${FIXTURES}not-openapi.yaml`, '--id', 'pets']),
      pets('--id', 'Pet_Shop'),
      pets('--id', 'toolgate'),
      pets('--id', 'pets', '--operations', 'tag=birds'),
      pets('--id', 'pets', '--operations', 'listPets;operationId=listPet'),
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(
      `toolgate: ${FIXTURES}nothing.yaml does not exist; give the path of an OpenAPI document (JSON or YAML) or its URL\n`,
    );
    expect(notOpenApi.code).toBe(1);
    expect(notOpenApi.stderr).toContain('not-openapi.yaml is not an OpenAPI document (2.0, 3.0 or 3.1)');
    expect(badId.code).toBe(1);
    expect(badId.stderr).toContain(
      '--id "Pet_Shop" is not a provider id: use 2-31 characters of a-z, 0-9 and -',
    );
    expect(reserved.stderr).toContain('--id "toolgate" is reserved');
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('--operations matched no operation of');
    expect(none.stderr).toContain('(6 operations; tags: pets, store)');
    expect(typo.stderr).toContain('--operations selector "operationId=listPet" matches no operation');
    // Nothing was written.
    expect(readdirSync(dir)).toEqual([]);

    const usage = await add(['--id', 'pets']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('provider add needs --openapi FILE_OR_URL');

    // An existing manifest is kept unless --force.
    writeFileSync(join(dir, 'pets.yaml'), 'mine\n');
    const exists = await pets('--id', 'pets');
    expect(exists.code).toBe(1);
    expect(exists.stderr).toBe(
      `toolgate: ${join(dir, 'pets.yaml')} exists; pass --force to overwrite it, or choose another --id\n`,
    );
    expect(readFileSync(join(dir, 'pets.yaml'), 'utf8')).toBe('mine\n');
    const forced = await pets('--id', 'pets', '--force');
    expect(forced.code).toBe(0);
    expect(manifestOf('pets').id).toBe('pets');
  }, 60_000);
});
