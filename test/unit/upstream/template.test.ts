import { describe, expect, it } from 'vitest';
import { lowerHeaderName, Template } from '../../../core/upstream/template.js';

const PATH = /\{([^}]+)\}/g;
const FORMAT = /\$\{([a-zA-Z0-9_]+)\}/g;

describe('Template', () => {
  it('fills a text as replace with a callback does, over many shapes of text', () => {
    const pieces = ['', 'a', '/', '{x}', '{y}', '${k}', '${k_2}', '{', '}', '$', '{}', 'é', '{a/b}'];
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % pieces.length;
    for (let n = 0; n < 2_000; n++) {
      const text = Array.from({ length: n % 9 }, () => pieces[next()]).join('');
      for (const variable of [PATH, FORMAT]) {
        const seen: string[] = [];
        const value = (name: string) => {
          seen.push(name);
          return `<${name}>`;
        };
        const expected = text.replace(variable, (_match, name: string) => value(name));
        const order = seen.splice(0);
        expect(Template.of(text, variable).fill(value), text).toBe(expected);
        expect(seen, text).toEqual(order);
        expect(Template.of(text, variable).names).toEqual(order);
      }
    }
  });

  it('gives the same lower-case string for a header name each time', () => {
    const first = lowerHeaderName('X-Api-Key');
    expect(first).toBe('x-api-key');
    expect(lowerHeaderName('X-Api-Key')).toBe(first);
  });
});
