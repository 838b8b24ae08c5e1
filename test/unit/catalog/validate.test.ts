import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { validateCatalogDir } from '../../../core/catalog/catalog.js';
import { formatFindings } from '../../../core/catalog/findings.js';
import { manifestJsonSchema } from '../../../core/catalog/manifest-schema.js';
import { PluginRegistry } from '../../../core/catalog/plugins/registry.js';

const BASE = `# yaml-language-server: $schema=./manifest.schema.json
schema_version: 1
id: acme
display_name: Acme
description: Acme test provider.
auth:
  kind: api_key
  credentials:
    api_key: { title: API key }
  inject:
    - { in: header, name: X-Key, format: "\${api_key}" }
api:
  base_url: https://api.acme.example
tools:
  - name: acme_ping
    description: Ping.
    input_schema: { type: object, properties: {} }
    request: { method: GET, path: /ping }
categories:
  - { id: misc, title: Misc, tools: [acme_ping] }
`;

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** Validates one manifest file in a fresh directory; returns the formatted findings, dir stripped. */
async function validate(
  text: string,
  file = 'acme.yaml',
  registry = new PluginRegistry(),
): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'tg-validate-'));
  dirs.push(dir);
  await writeFile(join(dir, file), text);
  await copyFile('test/fixtures/catalog/valid/petshop.openapi.yaml', join(dir, 'petshop.openapi.yaml'));
  const findings = await validateCatalogDir(dir, registry);
  return findings.length === 0 ? [] : formatFindings(findings).replaceAll(`${dir}/`, '').split('\n');
}

describe('manifest validation', () => {
  it('accepts a valid manifest', async () => {
    expect(await validate(BASE)).toEqual([]);
  });

  it('reports an unknown key where it is written, with the likely intended key', async () => {
    expect(await validate(BASE.replace('display_name: Acme', 'display_nam: Acme'))).toEqual([
      'acme.yaml:2:1  TG_MANIFEST_MISSING_KEY  display_name  missing required key "display_name"; add it',
      'acme.yaml:4:1  TG_MANIFEST_UNKNOWN_KEY  display_nam  unknown key "display_nam" (did you mean "display_name"?); remove it; ' +
        'allowed here: schema_version, id, display_name, description, docs_url, logo_url, auth, connection_fields, api, verify, ' +
        'identity, openapi, tools, mcp, categories, limits, synonyms, plugin',
    ]);
  });

  it('reports a bad auth kind with the allowed kinds', async () => {
    expect(await validate(BASE.replace('kind: api_key', 'kind: api-key'))).toEqual([
      'acme.yaml:7:9  TG_MANIFEST_BAD_VALUE  auth > kind  "kind" must be one of api_key, webhook_url, oauth2, none; "api-key" is not one of them',
    ]);
  });

  it('reports a missing token_url of an oauth2 provider', async () => {
    const oauth = BASE.replace(
      /auth:\n[\s\S]*?api:/,
      'auth:\n  kind: oauth2\n  authorization_url: https://acme.example/oauth/authorize\napi:',
    );
    expect(await validate(oauth)).toEqual([
      'acme.yaml:7:3  TG_MANIFEST_MISSING_KEY  auth > token_url  missing required key "token_url"; add the https URL from the provider\'s documentation (only an mcp provider may discover it with discovery: mcp)',
    ]);
  });

  describe('of a provider whose tools come from an upstream MCP server (mcp)', () => {
    const MCP = BASE.replace(
      /api:\n[\s\S]*?categories:/,
      'mcp:\n  url: https://mcp.acme.example/mcp\ncategories:',
    ).replace('tools: [acme_ping]', 'match: [{ read_only: true }]');

    it('accepts it from the manifest alone (its tools are listed per connection, later)', async () => {
      expect(await validate(MCP)).toEqual([]);
      const oauth = MCP.replace(/auth:\n[\s\S]*?mcp:/, 'auth: { kind: oauth2, discovery: mcp }\nmcp:');
      expect(await validate(oauth)).toEqual([]);
    });

    it('reports what the upstream gives written in the manifest too, and discovery without mcp', async () => {
      const both = MCP.replace('mcp:\n', 'api: { base_url: https://api.acme.example }\nmcp:\n');
      expect(await validate(both)).toEqual([
        "acme.yaml:12:6  TG_MANIFEST_MCP_CONFLICT  api  remove api: an mcp provider's tools and their endpoint come from its upstream MCP server (mcp > url)",
      ]);
      const discovery = BASE.replace(/auth:\n[\s\S]*?api:/, 'auth: { kind: oauth2, discovery: mcp }\napi:');
      expect(await validate(discovery)).toEqual([
        'acme.yaml:6:34  TG_MANIFEST_MCP_CONFLICT  auth > discovery  discovery: mcp reads the endpoints from an upstream MCP server; add mcp > url, or give authorization_url and token_url instead',
      ]);
    });
  });

  it('reports a category listing a tool that does not exist, and the tool left uncategorized', async () => {
    expect(await validate(BASE.replace('tools: [acme_ping]', 'tools: [acme_pong]'))).toEqual([
      "acme.yaml:20:3  TG_MANIFEST_UNCATEGORIZED  categories  tools in no category: acme_ping; list them under a category's tools or match",
      'acme.yaml:20:5  TG_MANIFEST_EMPTY_CATEGORY  categories > 0  category "misc" holds no tool; remove it or give it tools (warning)',
      'acme.yaml:20:38  TG_MANIFEST_UNKNOWN_TOOL  categories > 0 > tools > 0  no tool of this provider is named "acme_pong"; check the name',
    ]);
  });

  it('reports selectors that match no operation and overrides that name none', async () => {
    const withDocument = BASE.replace(
      'categories:',
      'openapi:\n  file: ./petshop.openapi.yaml\n  operations:\n    include: [{ tag: pets }, { path: "/cats*" }]\n' +
        '  overrides:\n    "GET /dogs": { name: acme_dogs }\ncategories:',
    ).replace('tools: [acme_ping]', 'match: [{ name: "acme_*" }]');
    expect(await validate(withDocument)).toEqual([
      'acme.yaml:20:9  TG_OPENAPI_SCHEMA_CUT  openapi > file  schema Pet refers back to itself through its $refs, so it is an open object described "Pet (recursive; see the API docs)" in acme_list_pets, acme_create_pet, acme_get_pet (warning)',
      'acme.yaml:22:30  TG_MANIFEST_SELECTOR_UNMATCHED  openapi > operations > include > 1  matches no operation of the document; fix the selector or remove it',
      'acme.yaml:24:5  TG_MANIFEST_OVERRIDE_UNMATCHED  openapi > overrides > GET /dogs  no operation is "GET /dogs"; write "METHOD /path" exactly as in the document, or an operationId',
    ]);
  });

  it('reports duplicate tool names after normalising', async () => {
    const twice = BASE.replace(
      'categories:',
      '  - name: acme_ping\n    description: Again.\n    input_schema: { type: object }\n    request: { method: GET, path: /ping2 }\ncategories:',
    );
    expect(await validate(twice)).toEqual([
      'acme.yaml:19:11  TG_MANIFEST_DUPLICATE_TOOL  tools > 1 > name  "acme_ping" clashes with the tool "acme_ping"; rename one',
    ]);
  });

  it('reports an id that differs from the file name, and a reserved id', async () => {
    expect(await validate(BASE, 'acme-corp.yaml')).toEqual([
      'acme-corp.yaml:3:5  TG_MANIFEST_ID_MISMATCH  id  id "acme" differs from the file name "acme-corp"; rename one to match the other',
    ]);
    expect((await validate(BASE.replace('id: acme', 'id: list'), 'list.yaml'))[0]).toBe(
      'list.yaml:3:5  TG_MANIFEST_BAD_VALUE  id  must not be one of: list, connect, disconnect, inspect, report, providers, provider, toolgate, system; choose another',
    );
  });

  it('reports YAML syntax errors at their position', async () => {
    expect(await validate(BASE.replace('tools: [acme_ping] }', 'tools: [acme_ping }'))).toEqual([
      'acme.yaml:20:48  TG_MANIFEST_YAML  (root)  Flow sequence in block collection must be sufficiently indented and end with a ]; fix the YAML syntax',
    ]);
  });

  it('reports aliases that expand without bound in their manifest, and checks the others', async () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (const name of ['b', 'c', 'd', 'e', 'f', 'g']) {
      const previous = String.fromCharCode(name.charCodeAt(0) - 1);
      levels.push(`${name}: &${name} [${Array(9).fill(`*${previous}`).join(', ')}]`);
    }
    const dir = await mkdtemp(join(tmpdir(), 'tg-validate-'));
    dirs.push(dir);
    await writeFile(join(dir, 'acme.yaml'), BASE.replace('display_name: Acme', 'display_nam: Acme'));
    await writeFile(join(dir, 'lol.yaml'), levels.join('\n'));
    const findings = await validateCatalogDir(dir, new PluginRegistry());
    expect(findings.map((f) => `${f.file.replace(`${dir}/`, '')} ${f.code}`)).toEqual([
      'acme.yaml TG_MANIFEST_MISSING_KEY',
      'acme.yaml TG_MANIFEST_UNKNOWN_KEY',
      'lol.yaml TG_MANIFEST_YAML',
    ]);
  });

  it('reports meaning errors: placeholders, free fields, http webhooks, unknown plugins', async () => {
    const broken = BASE.replace('format: "${api_key}"', 'format: "${apikey}"')
      .replace('api:\n', 'connection_fields:\n  host: { title: Host }\nplugin: acme\napi:\n')
      .replace('base_url: https://api.acme.example', 'base_url: https://${host}.acme.example/${region}');
    expect(await validate(broken)).toEqual([
      'acme.yaml:11:42  TG_MANIFEST_UNKNOWN_PLACEHOLDER  auth > inject > 0 > format  ${apikey} names no credential; use one of: ${api_key}',
      'acme.yaml:13:9  TG_MANIFEST_FREE_FIELD  connection_fields > host  give the field closed choices (enum) or a pattern anchored with ^ and $; free text could redirect requests',
      'acme.yaml:14:9  TG_MANIFEST_UNKNOWN_PLUGIN  plugin  no plugin "acme" is registered (none are); add plugins/acme/ and register it, or remove plugin',
      'acme.yaml:16:13  TG_MANIFEST_UNKNOWN_PLACEHOLDER  api > base_url  ${region} names no connection field; define it under connection_fields',
    ]);
    const webhook = BASE.replace(
      /auth:\n[\s\S]*?api:\n {2}base_url: \S+\n/,
      'auth:\n  kind: webhook_url\n  pattern: ^http://hooks\\.acme\\.example/\n  allowed_hosts: [hooks.acme.example]\n',
    );
    expect(await validate(webhook)).toEqual([
      'acme.yaml:8:12  TG_MANIFEST_WEBHOOK_NOT_HTTPS  auth > pattern  webhook URLs must be https; start the pattern with ^https://',
    ]);
  });

  it('keeps manifests/manifest.schema.json in step with the schema (scripts/gen-manifest-schema.ts)', async () => {
    const file = await readFile('manifests/manifest.schema.json', 'utf8');
    expect(file).toBe(`${JSON.stringify(manifestJsonSchema(), null, 2)}\n`);
  });
});
