import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JsonSchema } from '../../../core/catalog/types.js';
import { validateArguments } from '../../../core/tools/args.js';

const schema = (): JsonSchema => ({
  type: 'object',
  properties: {
    owner: { type: 'string', minLength: 1 },
    per_page: { type: 'integer', minimum: 1, maximum: 100, default: 30 },
    state: { enum: ['open', 'closed'] },
    email: { type: 'string', format: 'email' },
    kind: { const: 'issue' },
    filter: {
      type: 'object',
      properties: { labels: { type: 'array', items: { type: 'string' } } },
      required: ['labels'],
    },
  },
  required: ['owner'],
  additionalProperties: false,
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('validateArguments', () => {
  it.each([
    [{}, 'owner', 'argument `owner` is required'],
    [{ owner: 'o', per_page: 101 }, 'per_page', 'argument `per_page` must be <= 100'],
    [{ owner: 'o', per_page: '5' }, 'per_page', 'argument `per_page` must be of type integer'],
    [{ owner: 'o', state: 'merged' }, 'state', 'argument `state` must be one of "open", "closed"'],
    [{ owner: 'o', email: 'nope' }, 'email', 'argument `email` must match format "email"'],
    [{ owner: 'o', kind: 'pr' }, 'kind', 'argument `kind` must be "issue"'],
    [{ owner: '' }, 'owner', 'argument `owner` must NOT have fewer than 1 characters'],
    [{ owner: 'o', extra: 1 }, 'extra', 'argument `extra` is not a known argument'],
    [{ owner: 'o', filter: {} }, 'filter.labels', 'argument `filter.labels` is required'],
    [
      { owner: 'o', filter: { labels: ['a', 3] } },
      'filter.labels[1]',
      'argument `filter.labels[1]` must be of type string',
    ],
  ])('%j → %s', (args, field, message) => {
    expect(validateArguments(schema(), args)).toEqual({ ok: false, field, message });
  });

  it('lists every type of a multi-type rule', () => {
    const s = { type: 'object', properties: { n: { type: ['integer', 'null'] } } };
    expect(validateArguments(s, { n: 'x' })).toMatchObject({
      message: 'argument `n` must be of type integer or null',
    });
  });

  it('unescapes JSON Pointer segments in field names', () => {
    const s = { type: 'object', properties: { 'a/b': { type: 'string' } } };
    expect(validateArguments(s, { 'a/b': 1 })).toMatchObject({ field: 'a/b' });
  });

  it('fills defaults and returns the arguments', () => {
    const result = validateArguments(schema(), { owner: 'octo' });
    expect(result).toEqual({ ok: true, args: { owner: 'octo', per_page: 30 } });
  });

  it('treats absent arguments as an empty object', () => {
    expect(validateArguments({ type: 'object', properties: { a: { default: 1 } } }, undefined)).toEqual({
      ok: true,
      args: { a: 1 },
    });
  });

  it('refuses arguments that are not an object', () => {
    expect(validateArguments(schema(), ['owner'])).toEqual({
      ok: false,
      field: '',
      message: 'arguments must be an object',
    });
  });

  it('compiles a schema once and reuses the validator', () => {
    const compile = vi.spyOn(Ajv2020.prototype, 'compile');
    const s = schema();
    validateArguments(s, { owner: 'a' });
    validateArguments(s, { owner: 'b' });
    validateArguments(s, {});
    expect(compile).toHaveBeenCalledTimes(1);
  });

  it('keeps tools whose schemas share an $id apart', () => {
    const first = { $id: 'https://example.com/input', type: 'object', required: ['a'] };
    const second = { $id: 'https://example.com/input', type: 'object', required: ['b'] };
    expect(validateArguments(first, { a: 1 }).ok).toBe(true);
    expect(validateArguments(second, { a: 1 })).toMatchObject({ ok: false, field: 'b' });
  });
});
