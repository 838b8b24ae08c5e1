import { describe, expect, it } from 'vitest';
import { UnsupportedError } from '../../../../core/catalog/openapi/document.js';
import { SchemaConverter } from '../../../../core/catalog/openapi/schema.js';
import { documentOf } from './helpers.js';

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
          items: { type: 'object', description: '(recursive: same shape as Node above)' },
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
});
