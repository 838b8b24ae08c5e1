import { describe, expect, it } from 'vitest';
import { compactJson } from '../../../core/tools/json-compact.js';
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

/** JSON text as an API that escapes every non-ASCII character writes it (Python's json.dumps does). */
function asciiOnly(json: string): string {
  return json.replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

describe('compactJson', () => {
  it('shows any JSON value as JSON.stringify writes it, however the provider spaced and escaped it', () => {
    const { next, pick, value } = generator(7);
    for (let i = 0; i < 3000; i++) {
      const expected = JSON.stringify(value(0));
      const spaced = JSON.stringify(JSON.parse(expected), null, pick([undefined, 2, '\t']));
      const input = next() < 0.3 ? asciiOnly(spaced) : spaced;
      expect(compactJson(input), input).toBe(expected);
    }
  });

  it('compacts exactly the texts JSON.parse accepts and shows any other as it came', () => {
    const { next, pick, value } = generator(11);
    const edits = ['', ',', ']', '}', '"', '\\', ':', '0', '-', '.', 'e', 't', ' ', '\n', '\u0000', '{', '['];
    for (let i = 0; i < 5000; i++) {
      const valid = JSON.stringify(value(0), null, next() < 0.3 ? 1 : undefined);
      const at = Math.floor(next() * (valid.length + 1));
      const input = valid.slice(0, at) + pick(edits) + valid.slice(next() < 0.5 ? at : at + 1);
      let parsed: { value: unknown } | undefined;
      try {
        parsed = { value: JSON.parse(input) };
      } catch {
        parsed = undefined;
      }
      const shown = compactJson(input);
      if (parsed === undefined) expect(shown, input).toBe(input);
      else {
        expect(JSON.parse(shown), input).toEqual(parsed.value);
        expect(compactJson(shown), input).toBe(shown);
        expect(/^\s|\s$|[,:[{]\s/.test(shown), input).toBe(
          /^\s|\s$|[,:[{]\s/.test(JSON.stringify(parsed.value)),
        );
      }
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
      ' ',
    ])
      expect(compactJson(input), input).toBe(input);
  });

  it('drops the whitespace between tokens and keeps what a string holds', () => {
    expect(compactJson(' {"a" : [1, 2] ,\n "b":{ },"c d":"e , f"}\n')).toBe(
      '{"a":[1,2],"b":{},"c d":"e , f"}',
    );
    expect(compactJson('{\r\n\t"a": [\r\n\t\ttrue,\tnull\r\n\t]\r\n}')).toBe('{"a":[true,null]}');
  });

  it('writes a string with escapes as JSON.stringify does, numbers and keys as they came', () => {
    expect(compactJson('["caf\\u00e9", "\\ud83d\\ude00", "\\/", "a\\"b\\n", "\\u001F", 1E5, -0.0]')).toBe(
      '["café","😀","/","a\\"b\\n","\\u001f",1E5,-0.0]',
    );
    // A 19-digit id read into a JavaScript number would show as 1234567890123456800.
    expect(compactJson('{"b": 1, "2": 2, "1": 1, "id": 1234567890123456789}')).toBe(
      '{"b":1,"2":2,"1":1,"id":1234567890123456789}',
    );
  });

  it('shows compact JSON as it is, however long', () => {
    // Ten million characters outside strings: more than a regular expression can backtrack over.
    const long = `[${'1,'.repeat(5_000_000)}"a \\"b\\""]`;
    expect(compactJson(long)).toBe(long);
    expect(compactJson(`${long} `)).toBe(long);
  });

  it('shows a text nested deeper than it reads as it came', () => {
    const deep = `${'[ '.repeat(600)}1${' ]'.repeat(600)}`;
    expect(compactJson(deep)).toBe(deep);
    const shallow = `${'[ '.repeat(500)}1${' ]'.repeat(500)}`;
    expect(compactJson(shallow)).toBe(`${'['.repeat(500)}1${']'.repeat(500)}`);
  });
});
