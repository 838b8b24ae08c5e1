import { describe, expect, it } from 'vitest';
import { readTarget } from '../../../core/upstream/target.js';
import { seeded } from '../../helpers/seeded.js';

/** What the WHATWG parser makes of a URL: the reference readTarget must agree with. */
function reference(raw: string) {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return undefined;
  }
  return {
    href: url.href,
    origin: url.origin,
    protocol: url.protocol,
    hostname: url.hostname,
    path: url.pathname + url.search,
  };
}

/** A seeded generator of URL-like texts, so that a failure names an input that fails again. */
function urls(seed: number) {
  const { next, pick } = seeded(seed);
  const prefixes = [
    'http://api.example.com',
    'https://API.Example.com:443',
    'https://api.example.com:8443',
    'http://127.0.0.1:3000',
    'http://[::1]:8080',
    'http://[::FFFF:7f00:1]',
    'http://0x7f.1',
    'http://2130706433',
    'http://a..b',
    'http://-a.example',
    'http://api.example.com:',
    'http://api.example.com:99999',
    'http://user@api.example.com',
    'http://api.example.com\\evil.com',
    'http://',
    'HTTP://api.example.com',
    'http:/api.example.com',
    'ftp://files.example.com',
    'mailto:someone',
    '',
  ];
  const pieces = [
    '/',
    '/',
    '/',
    '?',
    '#',
    '.',
    '..',
    '%2e',
    '%2E',
    '%',
    '%41',
    'a',
    'Z',
    '9',
    '_',
    '-',
    '~',
    ':',
    '@',
    '=',
    '&',
    ',',
    ';',
    '+',
    '*',
    '!',
    '$',
    "'",
    '(',
    ')',
    ' ',
    '"',
    '<',
    '>',
    '`',
    '{',
    '}',
    '|',
    '^',
    '[',
    ']',
    '\\',
    '\t',
    '\n',
    'é',
    'items',
    'v2',
  ];
  const rest = (): string => Array.from({ length: Math.floor(next() * 14) }, () => pick(pieces)).join('');
  return () => pick(prefixes) + rest();
}

describe('readTarget', () => {
  it('reads 100,000 URL-like texts exactly as the WHATWG parser does', () => {
    const url = urls(19);
    for (let i = 0; i < 100_000; i++) {
      const raw = url();
      expect(readTarget(raw), JSON.stringify(raw)).toEqual(reference(raw));
    }
  });

  it('reads the same URL alike however often its origin was seen, and apart from other origins', () => {
    for (let round = 0; round < 3; round++) {
      expect(readTarget('https://API.Example.com:443/v1/items/42?fields=name')).toEqual({
        href: 'https://api.example.com/v1/items/42?fields=name',
        origin: 'https://api.example.com',
        protocol: 'https:',
        hostname: 'api.example.com',
        path: '/v1/items/42?fields=name',
      });
      expect(readTarget('http://0x7f.1:8080?x=1')).toMatchObject({
        origin: 'http://127.0.0.1:8080',
        hostname: '127.0.0.1',
        path: '/?x=1',
      });
      expect(readTarget('http://api.example.com/a/%2e%2e/admin')?.path).toBe('/admin');
      expect(readTarget('http://api.example.com:99999/x')).toBeUndefined();
    }
  });
});
