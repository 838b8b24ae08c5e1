import { describe, expect, it } from 'vitest';
import { Lru } from '../../core/lru.js';

describe('Lru', () => {
  it('keeps an entry read between every other one among many more than its bound', () => {
    const lru = new Lru<string, number>(1_000);
    lru.set('busy', 0);
    for (let i = 0; i < 20_000; i++) {
      expect(lru.get('busy')).toBe(0);
      lru.set(`scope-${i}`, i);
    }
    expect(lru.size).toBe(1_000);
    expect(lru.get('busy')).toBe(0);
    // The most recent entries are kept, the older ones went first.
    expect(lru.get('scope-19999')).toBe(19_999);
    expect(lru.get('scope-19001')).toBe(19_001);
    expect(lru.get('scope-19000')).toBeUndefined();
  });

  it('replaces a value in place, and forgets on delete and clear', () => {
    const lru = new Lru<string, string>(2);
    lru.set('a', '1');
    lru.set('b', '2');
    lru.set('a', '3');
    lru.set('c', '4');
    // `a` was written after `b`: `b` went.
    expect([lru.get('a'), lru.get('b'), lru.get('c')]).toEqual(['3', undefined, '4']);
    lru.delete('a');
    expect(lru.get('a')).toBeUndefined();
    lru.clear();
    expect(lru.size).toBe(0);
  });
});
