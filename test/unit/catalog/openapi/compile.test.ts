import { describe, expect, it } from 'vitest';
import { compileOpenApiTools } from '../../../../core/catalog/openapi/compile.js';
import type { JsonObject } from '../../../../core/catalog/openapi/document.js';
import { YamlSource } from '../../../../core/catalog/yaml-source.js';
import { documentOf } from './helpers.js';

const source = new YamlSource('acme.yaml', 'openapi:\n  file: ./acme.openapi.yaml\n');

function compile(paths: JsonObject, schemas: JsonObject = {}) {
  const { drafts, findings } = compileOpenApiTools(
    source,
    'acme',
    { file: './acme.openapi.yaml' },
    documentOf('3.0', paths, schemas),
    new Set(),
  );
  return {
    tools: drafts.map((d) => d.tool.name),
    findings: findings.map((f) => `${f.line}:${f.col} ${f.code} ${f.message} (${f.severity})`),
  };
}

const ok = { '200': { description: 'ok' } };

describe('compileOpenApiTools', () => {
  // Issue 16: `type` is copied verbatim, so a document's invalid type reached tools/list.
  it('skips an operation whose input schema is not valid JSON Schema, with a finding naming it', () => {
    const paths = {
      '/items': {
        get: {
          operationId: 'listItems',
          parameters: [{ name: 'limit', in: 'query', schema: { type: 'int' } }],
          responses: ok,
        },
        post: { parameters: [{ name: 'limit', in: 'query', schema: { type: 'integer' } }], responses: ok },
      },
    };
    const { tools, findings } = compile(paths);
    expect(tools).toEqual(['acme_post_items']);
    expect(findings).toHaveLength(1);
    expect(findings[0]).toMatch(
      /^2:9 TG_OPENAPI_BAD_SCHEMA GET \/items \(listItems\) is skipped: its input schema is not valid JSON Schema 2020-12: .*type.*; exclude it under openapi > operations > exclude to silence this \(warning\)$/,
    );
  });

  it('reports each cut schema once, with the tools where it is an open object', () => {
    const schemas = {
      Folder: { type: 'object', properties: { parent: { $ref: '#/components/schemas/Folder' } } },
    };
    const body = { content: { 'application/json': { schema: { $ref: '#/components/schemas/Folder' } } } };
    const paths = Object.fromEntries(
      ['/a', '/b', '/c', '/d'].map((path) => [path, { put: { requestBody: body, responses: ok } }]),
    );
    expect(compile(paths, schemas).findings).toEqual([
      '2:9 TG_OPENAPI_SCHEMA_CUT schema Folder refers back to itself through its $refs, so it is an open object ' +
        'described "Folder (recursive; see the API docs)" in acme_put_a, acme_put_b, acme_put_c and 1 more (warning)',
    ]);
  });
});
