import { describe, expect, it } from 'vitest';
import { layoutJson } from '../../../core/tools/json-layout.js';
import { seeded } from '../../helpers/seeded.js';

/** A seeded generator of JSON values, so that a failure names an input that fails again. */
function generator(seed: number) {
  const { next, pick } = seeded(seed);
  const characters = [
    'a',
    'Z',
    ' ',
    '"',
    '\\',
    '\n',
    '\t',
    '\u0001',
    'é',
    '€',
    '😀',
    '\u2028',
    '/',
    '1',
    '-',
  ];
  const text = (): string =>
    Array.from({ length: Math.floor(next() * (next() < 0.2 ? 90 : 10)) }, () => pick(characters)).join('');
  const value = (depth: number): unknown => {
    const kind = next();
    if (depth > 4 || kind < 0.45) {
      return pick([text(), Math.floor(next() * 1e6) - 5e5, next() * 1e3, 1e21 * next(), next() < 0.5, null]);
    }
    const length = Math.floor(next() * 6);
    if (kind < 0.7) return Array.from({ length }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length }, () => [`k${text()}`, value(depth + 1)]));
  };
  return { next, pick, value };
}

describe('layoutJson', () => {
  it('lays out any JSON value as the same JSON', () => {
    const { next, value } = generator(7);
    for (let i = 0; i < 3000; i++) {
      const input = JSON.stringify(value(0), null, next() < 0.3 ? 2 : undefined);
      const laidOut = layoutJson(input);
      expect(laidOut, input).toBeDefined();
      expect(JSON.parse(laidOut!), input).toEqual(JSON.parse(input));
    }
  });

  it('accepts exactly the texts JSON.parse accepts', () => {
    const { next, pick, value } = generator(11);
    const edits = ['', ',', ']', '}', '"', '\\', ':', '0', '-', '.', 'e', 't', ' ', '\u0000', '{', '['];
    for (let i = 0; i < 5000; i++) {
      const valid = JSON.stringify(value(0));
      const at = Math.floor(next() * (valid.length + 1));
      const edit = pick(edits);
      const input = valid.slice(0, at) + edit + valid.slice(next() < 0.5 ? at : at + 1);
      let parses = true;
      try {
        JSON.parse(input);
      } catch {
        parses = false;
      }
      expect(layoutJson(input) !== undefined, input).toBe(parses);
    }
    for (const input of [
      '01',
      '-',
      '1.',
      '1e',
      '.5',
      '1e+',
      '-01',
      'tru',
      'nul',
      '"\\x"',
      '"\\u12"',
      '\ufeff{}',
      '',
    ])
      expect(layoutJson(input), input).toBeUndefined();
  });

  it('keeps short containers on one line and indents the rest', () => {
    expect(layoutJson(' {"a" : [1,2] , "b":{}}\n')).toBe('{"a": [1, 2], "b": {}}');
    expect(layoutJson(`{"a":"${'x'.repeat(80)}","b":[true,null]}`)).toBe(
      `{\n  "a": "${'x'.repeat(80)}",\n  "b": [true, null]\n}`,
    );
  });

  it('writes a string with escapes as JSON.stringify does, numbers as they came', () => {
    expect(layoutJson('["caf\\u00e9","\\ud83d\\ude00","\\/","a\\"b",1E5,-0.0]')).toBe(
      '["café", "😀", "/", "a\\"b", 1E5, -0.0]',
    );
  });
});
