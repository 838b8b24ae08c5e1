import { describe, expect, it } from 'vitest';
import {
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  KEY_LENGTH,
  keyHint,
} from '../../../core/auth/keys.js';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

describe('API key format', () => {
  it('is toolgate_ + 43 base62 characters + 6 base62 checksum characters', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^toolgate_[0-9A-Za-z]{49}$/);
    expect(key.length).toBe(KEY_LENGTH);
    expect(isWellFormedApiKey(key)).toBe(true);
  });

  it('never repeats and spreads over the alphabet', () => {
    const keys = new Set(Array.from({ length: 2_000 }, generateApiKey));
    expect(keys.size).toBe(2_000);
    const seen = new Set([...keys].join('').replace(/toolgate_/g, ''));
    expect(seen.size).toBe(62);
  });

  it('detects every single-character typo through the checksum', () => {
    const key = generateApiKey();
    for (let i = 'toolgate_'.length; i < key.length; i++) {
      const other = ALPHABET[(ALPHABET.indexOf(key[i]!) + 1 + (i % 61)) % 62]!;
      expect(isWellFormedApiKey(key.slice(0, i) + other + key.slice(i + 1))).toBe(false);
    }
  });

  it('accepts keys whose checksum was computed by the first implementation (stored keys stay valid)', () => {
    // Checksums written by the BigInt base62 encoding the keys were first issued with.
    expect(isWellFormedApiKey(`toolgate_${'0'.repeat(43)}1IAJqP`)).toBe(true);
    expect(isWellFormedApiKey(`toolgate_${'Zz9'.repeat(14)}q1RQdou`)).toBe(true);
    expect(isWellFormedApiKey(`toolgate_${'Zz9'.repeat(14)}q1RQdov`)).toBe(false);
  });

  it('detects swapped neighbours, truncation and foreign prefixes', () => {
    const key = generateApiKey();
    for (let i = 'toolgate_'.length; i < key.length - 1; i++) {
      if (key[i] === key[i + 1]) continue;
      expect(isWellFormedApiKey(key.slice(0, i) + key[i + 1] + key[i] + key.slice(i + 2))).toBe(false);
    }
    expect(isWellFormedApiKey(key.slice(0, -1))).toBe(false);
    expect(isWellFormedApiKey('sk_live_' + key.slice(9))).toBe(false);
    expect(isWellFormedApiKey('')).toBe(false);
  });

  it('hashes under a secret: the same key gives different hashes under different secrets', () => {
    const key = generateApiKey();
    const a = hashApiKey(key, Buffer.alloc(32, 1));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key, Buffer.alloc(32, 1))).toBe(a);
    expect(hashApiKey(key, Buffer.alloc(32, 2))).not.toBe(a);
    expect(a).not.toContain(key.slice(9, 20));
  });

  it('shows a hint that does not reveal the key', () => {
    const key = generateApiKey();
    expect(keyHint(key)).toBe(`toolgate_…${key.slice(-4)}`);
  });
});
