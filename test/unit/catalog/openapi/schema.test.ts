import { describe, expect, it } from 'vitest';
import { UnsupportedError } from '../../../../core/catalog/openapi/document.js';
import { INPUT_BUDGET } from '../../../../core/catalog/openapi/operation.js';
import { REF_DEPTH, SchemaConverter, schemaSize } from '../../../../core/catalog/openapi/schema.js';
import { compileAll, documentOf } from './helpers.js';

const convert = (
  version: '2.0' | '3.0' | '3.1',
  schema: unknown,
  schemas = {},
  direction: 'input' | 'output' = 'input',
) => new SchemaConverter(documentOf(version, {}, schemas)).convert(schema, direction);

const ref = (name: string, version: '2.0' | '3.0' | '3.1' = '3.0') => ({
  $ref: version === '2.0' ? `#/definitions/${name}` : `#/components/schemas/${name}`,
});

describe('SchemaConverter', () => {
  it('inlines local $refs', () => {
    const schemas = { Id: { type: 'string', format: 'uuid' } };
    expect(convert('3.0', { type: 'object', properties: { id: ref('Id') } }, schemas)).toEqual({
      type: 'object',
      properties: { id: { type: 'string', format: 'uuid' } },
    });
  });

  it('cuts a cycle at the repeated $ref with a permissive schema', () => {
    const schemas = {
      Node: {
        type: 'object',
        properties: { name: { type: 'string' }, children: { type: 'array', items: ref('Node') } },
      },
    };
    expect(convert('3.0', ref('Node'), schemas)).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string' },
        children: {
          type: 'array',
          items: { type: 'object', description: 'Node (recursive; see the API docs)' },
        },
      },
    });
  });

  it('cuts mutual recursion the same way whichever schema is converted first', () => {
    const schemas = {
      A: { type: 'object', properties: { b: ref('B') } },
      B: { type: 'object', properties: { a: ref('A') } },
    };
    const converter = new SchemaConverter(documentOf('3.0', {}, schemas));
    const first = converter.convert({ type: 'object', properties: { x: ref('A') } }, 'input');
    converter.convert(ref('B'), 'input');
    expect(converter.convert({ type: 'object', properties: { x: ref('A') } }, 'input')).toEqual(first);
  });

  it('merges allOf into one object schema, the own description winning', () => {
    const schemas = {
      Base: {
        type: 'object',
        required: ['id'],
        properties: { id: { type: 'integer' } },
        description: 'base',
      },
    };
    expect(
      convert(
        '3.0',
        {
          description: 'own',
          allOf: [
            ref('Base'),
            { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
          ],
        },
        schemas,
      ),
    ).toEqual({
      description: 'own',
      type: 'object',
      required: ['id', 'name'],
      properties: { id: { type: 'integer' }, name: { type: 'string' } },
    });
  });

  it('keeps allOf when the parts disagree', () => {
    expect(
      convert('3.0', {
        allOf: [
          { type: 'string', maxLength: 3 },
          { type: 'string', maxLength: 5 },
        ],
      }),
    ).toEqual({
      allOf: [
        { type: 'string', maxLength: 3 },
        { type: 'string', maxLength: 5 },
      ],
    });
  });

  it('keeps oneOf and anyOf, dropping the OpenAPI discriminator', () => {
    const schemas = {
      Cat: { type: 'object', properties: { meow: { type: 'boolean' } } },
      Dog: { type: 'object', properties: { bark: { type: 'boolean' } } },
    };
    expect(
      convert('3.0', { oneOf: [ref('Cat'), ref('Dog')], discriminator: { propertyName: 'kind' } }, schemas),
    ).toEqual({
      oneOf: [schemas.Cat, schemas.Dog],
    });
    expect(convert('3.1', { anyOf: [{ type: 'string' }, { type: 'null' }] })).toEqual({
      anyOf: [{ type: 'string' }, { type: 'null' }],
    });
  });

  it('turns 3.0 nullable into a type array, also across an allOf wrapper and an enum', () => {
    expect(convert('3.0', { type: 'string', nullable: true })).toEqual({ type: ['string', 'null'] });
    expect(convert('3.0', { type: 'string', enum: ['a'], nullable: true })).toEqual({
      type: ['string', 'null'],
      enum: ['a', null],
    });
    const schemas = { User: { type: 'object', properties: { login: { type: 'string' } } } };
    expect(convert('3.0', { allOf: [ref('User')], nullable: true }, schemas)).toEqual({
      type: ['object', 'null'],
      properties: { login: { type: 'string' } },
    });
    expect(convert('2.0', { type: 'integer', 'x-nullable': true })).toEqual({ type: ['integer', 'null'] });
  });

  it('honours a 3.0 $ref sibling description and nullable, ignoring other siblings', () => {
    const schemas = { Id: { type: 'string' } };
    expect(
      convert('3.0', { ...ref('Id'), description: 'the id', nullable: true, maxLength: 2 }, schemas),
    ).toEqual({
      type: ['string', 'null'],
      description: 'the id',
    });
    expect(convert('3.1', { ...ref('Id', '3.1'), maxLength: 2 }, schemas)).toEqual({
      type: 'string',
      maxLength: 2,
    });
  });

  it('rewrites boolean exclusive bounds, tuple items and drops OpenAPI-only keywords', () => {
    expect(
      convert('3.0', {
        type: 'number',
        minimum: 1,
        exclusiveMinimum: true,
        maximum: 9,
        xml: { name: 'n' },
        'x-internal': 1,
        example: 5,
      }),
    ).toEqual({ type: 'number', exclusiveMinimum: 1, maximum: 9, examples: [5] });
    expect(
      convert('2.0', { type: 'array', items: [{ type: 'string' }], additionalItems: { type: 'integer' } }),
    ).toEqual({
      type: 'array',
      prefixItems: [{ type: 'string' }],
      items: { type: 'integer' },
    });
    expect(convert('3.0', { type: 'string', example: 'x' }, {}, 'output')).toEqual({ type: 'string' });
  });

  it('drops patterns JavaScript cannot compile and formats that are prose', () => {
    expect(convert('3.0', { type: 'string', pattern: '(?<!a)\\p{Foo}', format: 'a hex string' })).toEqual({
      type: 'string',
    });
  });

  it('drops readOnly properties from inputs and writeOnly ones from outputs', () => {
    const schema = {
      type: 'object',
      required: ['id', 'password'],
      properties: { id: { type: 'string', readOnly: true }, password: { type: 'string', writeOnly: true } },
    };
    expect(convert('3.0', schema)).toEqual({
      type: 'object',
      required: ['password'],
      properties: { password: { type: 'string', writeOnly: true } },
    });
    expect(convert('3.0', schema, {}, 'output')).toEqual({
      type: 'object',
      required: ['id'],
      properties: { id: { type: 'string', readOnly: true } },
    });
  });

  it('throws UnsupportedError for file uploads, external and dangling $refs, dynamic refs', () => {
    expect(() => convert('2.0', { type: 'file' })).toThrow(UnsupportedError);
    expect(() => convert('3.0', { $ref: 'other.yaml#/Pet' })).toThrow(/external \$ref/);
    expect(() => convert('3.0', ref('Missing'))).toThrow(/points at nothing/);
    expect(() => convert('3.1', { $dynamicRef: '#meta' })).toThrow(UnsupportedError);
  });

  // Issue 16: 9 schemas referencing each other gave a 62 MB inputSchema, 10 exhausted the heap.
  it('inlines N = 12 mutually referencing schemas once per tool, each reference back cut and described', () => {
    const names = Array.from({ length: 12 }, (_, i) => `S${i}`);
    const schemas = Object.fromEntries(
      names.map((a) => [
        a,
        { type: 'object', properties: Object.fromEntries(names.map((b) => [b.toLowerCase(), ref(b)])) },
      ]),
    );
    const body = (name: string) => ({ content: { 'application/json': { schema: ref(name) } } });
    const paths = Object.fromEntries(
      names.map((name) => [
        `/${name}`,
        { put: { requestBody: body(name), responses: { '200': { description: 'ok', ...body(name) } } } },
      ]),
    );
    const compiled = Object.values(compileAll(documentOf('3.0', paths, schemas)));
    expect(compiled).toHaveLength(12);
    for (const op of compiled) {
      if (typeof op === 'string') throw new Error(op);
      const size = schemaSize(op.inputSchema);
      expect(size.bytes).toBe(Buffer.byteLength(JSON.stringify(op.inputSchema)));
      // The body's 12 properties spread as arguments, each the described open object.
      expect(size.nodes).toBe(1 + 1 + 12);
      expect(size.bytes).toBeLessThan(1_000);
      expect(op.inputSchema.properties).toEqual(
        Object.fromEntries(
          names.map((b) => [
            b.toLowerCase(),
            { type: 'object', description: `${b} (recursive; see the API docs)` },
          ]),
        ),
      );
      expect(schemaSize(op.outputSchema).nodes).toBe(1 + 1 + 12);
      expect(op.cuts.map((c) => c.name).sort()).toEqual([...names].sort());
    }
  });

  it('inlines what lies below a group of mutual references in full, and cuts only references into the group', () => {
    const schemas = {
      A: { type: 'object', properties: { b: ref('B'), tag: ref('Tag') } },
      B: { type: 'object', properties: { a: ref('A'), tags: { type: 'array', items: ref('Tag') } } },
      Tag: { type: 'object', properties: { label: { type: 'string' } } },
    };
    const tag = schemas.Tag;
    expect(convert('3.0', ref('A'), schemas)).toEqual({
      type: 'object',
      properties: { b: { type: 'object', description: 'B (recursive; see the API docs)' }, tag },
    });
    expect(convert('3.0', { type: 'object', properties: { x: ref('B') } }, schemas)).toEqual({
      type: 'object',
      properties: {
        x: {
          type: 'object',
          properties: {
            a: { type: 'object', description: 'A (recursive; see the API docs)' },
            tags: { type: 'array', items: tag },
          },
        },
      },
    });
  });

  it(`cuts a chain of $refs deeper than ${REF_DEPTH}, whichever link it starts from`, () => {
    const schemas = Object.fromEntries(
      Array.from({ length: 40 }, (_, i) => [
        `L${i}`,
        { type: 'object', properties: i === 39 ? { end: { type: 'string' } } : { next: ref(`L${i + 1}`) } },
      ]),
    );
    const converter = new SchemaConverter(documentOf('3.0', {}, schemas));
    const depthOf = (schema: unknown): { depth: number; last: unknown } => {
      let depth = 0;
      type Link = { properties?: { next?: Link } };
      let node = schema as Link;
      while (node.properties?.next) {
        node = node.properties.next;
        depth++;
      }
      return { depth, last: node };
    };
    expect(depthOf(converter.convert(ref('L0'), 'input'))).toEqual({
      depth: REF_DEPTH,
      last: { type: 'object', description: 'L32 (nested too deep; see the API docs)' },
    });
    // L6... were converted from L0 under a lower remaining depth: those expansions are not reused.
    expect(depthOf(converter.convert(ref('L5'), 'input'))).toEqual({
      depth: REF_DEPTH,
      last: { type: 'object', description: 'L37 (nested too deep; see the API docs)' },
    });
    expect(depthOf(converter.convert(ref('L0'), 'input', 3)).last).toEqual({
      type: 'object',
      description: 'L3 (nested too deep; see the API docs)',
    });
    expect(converter.takeCuts()).toEqual([
      { name: 'L32', why: 'nested too deep' },
      { name: 'L37', why: 'nested too deep' },
      { name: 'L3', why: 'nested too deep' },
    ]);
  });

  it('fits an input schema whose shared $refs would serialise to 2^20 objects within the budget, cut less deep', () => {
    const schemas = Object.fromEntries(
      Array.from({ length: 21 }, (_, i) => [
        `D${i}`,
        i === 20
          ? { type: 'string' }
          : { type: 'object', properties: { left: ref(`D${i + 1}`), right: ref(`D${i + 1}`) } },
      ]),
    );
    const paths = {
      '/d': {
        post: { requestBody: { content: { 'application/json': { schema: ref('D0') } } }, responses: {} },
      },
    };
    const [op] = Object.values(compileAll(documentOf('3.0', paths, schemas)));
    if (op === undefined || typeof op === 'string') throw new Error(String(op));
    const size = schemaSize(op.inputSchema);
    expect(size.bytes).toBeLessThanOrEqual(INPUT_BUDGET.bytes);
    expect(size.nodes).toBeLessThanOrEqual(INPUT_BUDGET.nodes);
    expect(size.bytes).toBe(Buffer.byteLength(JSON.stringify(op.inputSchema)));
    expect(op.cuts).toEqual([{ name: 'D8', why: 'nested too deep' }]);
    expect(JSON.stringify(op.inputSchema)).toContain('"D8 (nested too deep; see the API docs)"');
  });
});
