/**
 * The drafting behind `toolgate provider add` (issue 16): selectors, the subset of a document,
 * auth from security schemes, the base URL from servers, categories from tags, thin descriptions.
 */
import { describe, expect, it } from 'vitest';
import { draftAuth } from '../../../core/catalog/draft/auth.js';
import { draftBaseUrl } from '../../../core/catalog/draft/base-url.js';
import { draftCategories, humanise } from '../../../core/catalog/draft/categories.js';
import { draftManifest, thinDescriptions } from '../../../core/catalog/draft/manifest.js';
import { parseSelectors, selectOperations, subsetDocument } from '../../../core/catalog/draft/subset.js';
import {
  listOperations,
  type JsonObject,
  type OpenApiDocument,
  type OpenApiVersion,
} from '../../../core/catalog/openapi/document.js';

const ok = { '200': { description: 'ok' } };

function doc(root: JsonObject, version: OpenApiVersion = '3.0'): OpenApiDocument {
  return { version, root: { ...(version === '2.0' ? { swagger: '2.0' } : { openapi: '3.0.3' }), ...root } };
}

/** A document with one GET per tag list: `[['a'], [], ['b', 'c']]`. */
function tagged(tagLists: string[][], method = 'get'): OpenApiDocument {
  return doc({
    paths: Object.fromEntries(
      tagLists.map((tags, i) => [`/op${i}`, { [method]: { operationId: `op${i}`, tags, responses: ok } }]),
    ),
  });
}

describe('parseSelectors', () => {
  it('reads key=value selectors and the shorthands', () => {
    expect(parseSelectors('tag=issues; GET /user ;listPets;/repos/*;method=post,path=/pets')).toEqual([
      { tag: 'issues' },
      { method: 'GET', path: '/user' },
      { operationId: 'listPets' },
      { path: '/repos/*' },
      { method: 'POST', path: '/pets' },
    ]);
  });

  it('refuses what is no selector, saying what to write', () => {
    expect(() => parseSelectors('verb=GET')).toThrow(
      'unknown selector key "verb" in "verb=GET"; use operationId=, tag=, method=, path=',
    );
    expect(() => parseSelectors('method=FETCH')).toThrow('"FETCH" in "method=FETCH" is no HTTP method');
    expect(() => parseSelectors('tag=')).toThrow('"tag=" in "tag=" is not key=value');
    expect(() => parseSelectors(' ; ')).toThrow('--operations is empty');
  });

  it('selects what any selector matches and names the selectors that match nothing', () => {
    const operations = listOperations(tagged([['a'], ['b']]));
    const { selected, unmatched } = selectOperations(operations, parseSelectors('tag=a;tag=z'));
    expect(selected.map((op) => op.key)).toEqual(['GET /op0']);
    expect(unmatched).toEqual([{ tag: 'z' }]);
  });
});

describe('subsetDocument', () => {
  it('keeps the selected operations and every component they reach, and nothing else', () => {
    const document = doc({
      info: { title: 'Acme', version: '1' },
      servers: [{ url: 'https://api.acme.test' }],
      tags: [{ name: 'pets' }, { name: 'toys' }],
      security: [{ key: [] }],
      paths: {
        '/pets/{id}': {
          parameters: [{ $ref: '#/components/parameters/Id' }],
          get: {
            tags: ['pets'],
            responses: {
              '200': { content: { 'application/json': { schema: { $ref: '#/components/schemas/Pet' } } } },
            },
          },
          delete: { tags: ['pets'], responses: { '204': { $ref: '#/components/responses/Gone' } } },
        },
        '/toys': { get: { tags: ['toys'], responses: { '200': { $ref: '#/components/responses/Toys' } } } },
      },
      components: {
        parameters: { Id: { name: 'id', in: 'path', required: true, schema: { type: 'string' } } },
        responses: { Gone: { description: 'gone' }, Toys: { description: 'toys' } },
        schemas: {
          Pet: {
            oneOf: [{ $ref: '#/components/schemas/Dog' }],
            discriminator: { propertyName: 'kind', mapping: { cat: '#/components/schemas/Cat' } },
          },
          Dog: { type: 'object', properties: { owner: { $ref: '#/components/schemas/Owner' } } },
          Cat: { type: 'object' },
          Owner: { type: 'object', properties: { pets: { $ref: '#/components/schemas/Pet' } } },
          Toy: { type: 'object' },
        },
        securitySchemes: {
          key: { type: 'apiKey', in: 'header', name: 'X-Key' },
          other: { type: 'http', scheme: 'basic' },
        },
      },
    });
    const get = listOperations(document).filter((op) => op.key === 'GET /pets/{id}');
    const subset = subsetDocument(document, get);
    // In the document's order, not the order they were reached in (Cat, through the mapping, first).
    expect(Object.keys((subset.components as { schemas: object }).schemas)).toEqual([
      'Pet',
      'Dog',
      'Cat',
      'Owner',
    ]);
    expect(subset).toEqual({
      openapi: '3.0.3',
      info: { title: 'Acme', version: '1' },
      servers: [{ url: 'https://api.acme.test' }],
      security: [{ key: [] }],
      tags: [{ name: 'pets' }],
      paths: {
        '/pets/{id}': { parameters: [{ $ref: '#/components/parameters/Id' }], get: get[0]!.operation },
      },
      components: {
        parameters: { Id: { name: 'id', in: 'path', required: true, schema: { type: 'string' } } },
        schemas: {
          Pet: expect.any(Object) as unknown,
          Dog: expect.any(Object) as unknown,
          Cat: { type: 'object' },
          Owner: expect.any(Object) as unknown,
        },
        securitySchemes: { key: { type: 'apiKey', in: 'header', name: 'X-Key' } },
      },
    });
  });

  it('copies in what a $ref into an unselected operation points at, so no $ref dangles', () => {
    // DigitalOcean's operations share parameters by pointing at another operation's.
    const perPage = { name: 'per_page', in: 'query', schema: { $ref: '#/components/schemas/Size' } };
    const document = doc({
      paths: {
        '/v2/keys': { get: { parameters: [perPage], responses: ok } },
        '/v2/droplets': {
          get: { parameters: [{ $ref: '#/paths/~1v2~1keys/get/parameters/0' }], responses: ok },
        },
      },
      components: { schemas: { Size: { type: 'integer', maximum: 200 } } },
    });
    const droplets = listOperations(document).filter((op) => op.key === 'GET /v2/droplets');
    const subset = subsetDocument(document, droplets);
    expect(subset.paths).toEqual({ '/v2/droplets': { get: { parameters: [perPage], responses: ok } } });
    expect(subset.components).toEqual({ schemas: { Size: { type: 'integer', maximum: 200 } } });
    // The document itself is left as it was.
    expect(droplets[0]!.operation.parameters).toEqual([{ $ref: '#/paths/~1v2~1keys/get/parameters/0' }]);
  });

  it('rebuilds a 2.0 document the same way', () => {
    const document = doc(
      {
        host: 'api.acme.test',
        paths: {
          '/notes': {
            post: {
              parameters: [{ name: 'note', in: 'body', schema: { $ref: '#/definitions/Note' } }],
              responses: ok,
            },
          },
        },
        definitions: { Note: { type: 'object' }, Other: { type: 'object' } },
        securityDefinitions: { basic: { type: 'basic' } },
      },
      '2.0',
    );
    const subset = subsetDocument(document, listOperations(document));
    expect(subset.definitions).toEqual({ Note: { type: 'object' } });
    expect(subset.securityDefinitions).toEqual({ basic: { type: 'basic' } });
    expect(subset.host).toBe('api.acme.test');
  });
});

describe('draftAuth', () => {
  const withSchemes = (schemes: JsonObject, extra: JsonObject = {}) =>
    doc({ paths: { '/x': { get: { responses: ok } } }, components: { securitySchemes: schemes }, ...extra });
  const auth = (document: OpenApiDocument, baseUrl?: string) =>
    draftAuth(document, listOperations(document), baseUrl);

  it('sends an API key in the query, or a cookie as a Cookie header', () => {
    expect(auth(withSchemes({ k: { type: 'apiKey', in: 'query', name: 'key' } })).auth).toEqual({
      kind: 'api_key',
      credentials: { api_key: { title: 'API key' } },
      inject: [{ in: 'query', name: 'key', format: '${api_key}' }],
    });
    const cookie = auth(withSchemes({ session: { type: 'apiKey', in: 'cookie', name: 'sid' } }));
    expect(cookie.auth).toMatchObject({
      inject: [{ in: 'header', name: 'Cookie', format: 'sid=${api_key}' }],
    });
    expect(cookie.notes).toContain(
      'Scheme "session" is a cookie; the draft sends it as a Cookie header (sid=...).',
    );
  });

  it('combines the schemes one requirement names into one api_key with a credential each', () => {
    const drafted = auth(
      withSchemes(
        {
          apiKey: { type: 'apiKey', in: 'header', name: 'DD-API-KEY' },
          appKey: { type: 'apiKey', in: 'header', name: 'DD-APPLICATION-KEY' },
        },
        { security: [{ apiKey: [], appKey: [] }] },
      ),
    );
    expect(drafted.auth).toEqual({
      kind: 'api_key',
      credentials: { api_key: { title: 'Api key' }, app_key: { title: 'App key' } },
      inject: [
        { in: 'header', name: 'DD-API-KEY', format: '${api_key}' },
        { in: 'header', name: 'DD-APPLICATION-KEY', format: '${app_key}' },
      ],
    });
    expect(drafted.fill).toHaveLength(2);
  });

  it('drafts a 2.0 OAuth2 access-code flow with every declared scope when operations name none', () => {
    const document = doc(
      {
        paths: { '/x': { get: { responses: ok } } },
        securityDefinitions: {
          oauth: {
            type: 'oauth2',
            flow: 'accessCode',
            authorizationUrl: 'https://acme.test/oauth/authorize',
            tokenUrl: 'https://acme.test/oauth/token',
            scopes: { read: 'Read', write: 'Write' },
          },
        },
      },
      '2.0',
    );
    const drafted = auth(document);
    expect(drafted.auth).toEqual({
      kind: 'oauth2',
      authorization_url: 'https://acme.test/oauth/authorize',
      token_url: 'https://acme.test/oauth/token',
      scopes: { default: ['read', 'write'], separator: ' ' },
    });
    expect(drafted.notes[0]).toContain('every scope the document declares; keep only what the tools need');
  });

  it('resolves relative OAuth endpoints against the base URL, and lists a missing one to fill', () => {
    const drafted = auth(
      withSchemes({
        o: { type: 'oauth2', flows: { implicit: { authorizationUrl: '/authorize', scopes: {} } } },
      }),
      'https://acme.test/api',
    );
    expect(drafted.auth).toMatchObject({
      authorization_url: 'https://acme.test/authorize',
      token_url: 'https://fill-in.invalid',
    });
    expect(drafted.fill).toEqual(["auth > token_url: the provider's OAuth token endpoint (https)"]);
    expect(drafted.notes[0]).toContain('offers no authorization code flow (implicit)');
  });

  it('says auth: none, for review, when the document declares no scheme', () => {
    const drafted = auth(doc({ paths: { '/x': { get: { responses: ok } } } }));
    expect(drafted.auth).toEqual({ kind: 'none' });
    expect(drafted.notes[0]).toContain('Check whether the API needs credentials');
  });
});

describe('draftBaseUrl', () => {
  it('builds a 2.0 URL from host and basePath, in https', () => {
    expect(draftBaseUrl(doc({ host: 'acme.test', basePath: '/v1/', schemes: ['http'] }, '2.0'))).toEqual({
      url: 'https://acme.test/v1',
      notes: [
        'Base URL https://acme.test/v1, from host and basePath.',
        "The document's server is http://acme.test; the draft uses https, which the gateway requires.",
      ],
    });
    expect(draftBaseUrl(doc({}, '2.0')).url).toBeUndefined();
  });

  it('resolves a relative server against the URL the document came from, and not otherwise', () => {
    const relative = doc({ servers: [{ url: '/v1' }] });
    expect(draftBaseUrl(relative, 'https://acme.test/docs/openapi.json').url).toBe('https://acme.test/v1');
    expect(draftBaseUrl(relative)).toEqual({
      notes: ['The server URL "/v1" (servers[0]) is relative and the document was read from a file.'],
    });
  });

  it('leaves a server variable without a default for a person to fill', () => {
    expect(draftBaseUrl(doc({ servers: [{ url: 'https://{tenant}.acme.test' }] })).url).toBeUndefined();
  });
});

describe('draftCategories', () => {
  it('keeps up to five tags as categories, an operation in the first one naming its tag', () => {
    const document = tagged([['pets'], ['pets', 'store'], ['store']]);
    expect(draftCategories(document, listOperations(document), 'acme')).toEqual([
      { id: 'pets', title: 'Pets', match: [{ tag: 'pets' }] },
      { id: 'store', title: 'Store', match: [{ tag: 'store' }] },
    ]);
  });

  it('merges twelve tags into five, those sharing a word first, every tag kept in one', () => {
    const tags = [
      'Pull Requests',
      'Pull Request Reviews',
      'repos',
      'users',
      'orgs',
      'gists',
      'teams',
      'apps',
      'meta',
      'search',
      'billing',
      'emojis',
    ];
    const document = tagged(tags.map((t) => [t]));
    const categories = draftCategories(document, listOperations(document), 'acme');
    expect(categories).toHaveLength(5);
    expect(categories.flatMap((c) => (c.match ?? []).map((m) => m.tag)).sort()).toEqual([...tags].sort());
    const pulls = categories.find((c) => c.title.startsWith('Pull requests, pull request reviews'));
    expect(pulls?.description).toMatch(/^Operations tagged Pull Requests, Pull Request Reviews, /);
  });

  it('files untagged operations in a last catch-all category', () => {
    const document = tagged([['a'], ['b'], ['c'], ['d'], ['e'], []]);
    const categories = draftCategories(document, listOperations(document), 'acme-crm');
    expect(categories).toHaveLength(5);
    expect(categories.at(-1)).toEqual({
      id: 'general',
      title: 'General',
      description: 'Operations the document does not tag.',
      match: [{ name: 'acme_crm_*' }],
    });
  });

  it('splits one group into reading and changing tools, when there are both', () => {
    const document = doc({
      paths: { '/x': { get: { tags: ['x'], responses: ok }, post: { tags: ['x'], responses: ok } } },
    });
    expect(draftCategories(document, listOperations(document), 'acme').map((c) => c.match)).toEqual([
      [{ method: 'GET' }],
      [{ name: 'acme_*' }],
    ]);
    const reads = doc({
      paths: { '/pets': { get: { responses: ok } }, '/pets/{id}': { get: { responses: ok } } },
    });
    expect(draftCategories(reads, listOperations(reads), 'acme')).toEqual([
      { id: 'operations', title: 'Operations', match: [{ name: 'acme_*' }] },
    ]);
  });

  it('groups a document without tags by resource, past versions and parameters', () => {
    const get = { get: { responses: ok } };
    const document = doc({
      paths: {
        '/v1/pets': get,
        '/v1/pets/{id}': get,
        '/v1/pets/{id}/photos': get,
        '/v1/store/inventory': get,
        '/v1/search?kind=dog': get,
        '/{id}': get,
      },
    });
    expect(draftCategories(document, listOperations(document), 'acme')).toEqual([
      {
        id: 'pets',
        title: 'Pets',
        description: 'Operations on /v1/pets.',
        match: [{ path: '/v1/pets' }, { path: '/v1/pets/*' }],
      },
      {
        id: 'search',
        title: 'Search',
        description: 'Operations on /v1/search.',
        match: [{ path: '/v1/search?kind=dog' }],
      },
      {
        id: 'store',
        title: 'Store',
        description: 'Operations on /v1/store.',
        match: [{ path: '/v1/store/*' }],
      },
      {
        id: 'general',
        title: 'General',
        description: 'Operations on no resource path.',
        match: [{ name: 'acme_*' }],
      },
    ]);
  });

  it('titles tags readably', () => {
    expect(
      ['pull-requests', 'PullRequests', 'Pull Request Reviews', 'API Keys', 'audit_log'].map((t) =>
        humanise(t),
      ),
    ).toEqual(['Pull requests', 'Pull requests', 'Pull request reviews', 'API keys', 'Audit log']);
    expect(humanise('OAuth Apps', false)).toBe('OAuth apps');
    expect(humanise('用户')).toBe('用户');
  });
});

describe('thinDescriptions', () => {
  it('names operations without a summary or description, or with one too short to act on', () => {
    const document = doc({
      paths: {
        '/a': { get: { responses: ok } },
        '/b': { get: { summary: 'List', responses: ok } },
        '/c': { get: { summary: 'List the things of the account', responses: ok } },
        '/d': { get: { summary: 'List', description: 'Every thing, newest first.', responses: ok } },
      },
    });
    expect(thinDescriptions(listOperations(document))).toEqual([
      { key: 'GET /a', why: 'no summary or description (the tool says only "GET /a.")' },
      { key: 'GET /b', why: 'only "List"' },
    ]);
  });
});

describe('draftManifest', () => {
  it('writes the editor-schema line first, and no category for operations the compiler skips', () => {
    const document = doc({
      servers: [{ url: 'https://acme.test' }],
      paths: {
        '/pets': { get: { tags: ['pets'], summary: 'List the pets for sale', responses: ok } },
        '/images': {
          post: {
            tags: ['images'],
            summary: 'Upload a picture of a pet',
            requestBody: { content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } },
            responses: ok,
          },
        },
      },
    });
    const draft = draftManifest({
      id: 'acme',
      doc: document,
      selected: listOperations(document),
      documentFile: './acme.openapi.yaml',
      source: 'acme.json',
    });
    expect(draft.manifest.categories).toEqual([{ id: 'pets', title: 'Pets', match: [{ tag: 'pets' }] }]);
    expect(draft.text.split('\n').slice(0, 4)).toEqual([
      '# yaml-language-server: $schema=./manifest.schema.json',
      '# Drafted by `toolgate provider add` from acme.json',
      '# Review it before it ships: see the list the command printed, and CONTRIBUTING.md.',
      '',
    ]);
    expect(draft.text).toContain(
      '# Operators override it with TOOLGATE_PROVIDER_ACME_BASE_URL.\napi: { base_url: https://acme.test }\n',
    );
  });
});
