import { describe, expect, it } from 'vitest';
import { andThen, attempt } from '../../core/awaitable.js';

describe('awaitable values', () => {
  it('goes on at once with a value at hand, and once a promise settles', async () => {
    expect(andThen(2, (n) => n * 3)).toBe(6);
    const later = andThen(Promise.resolve(2), (n) => n * 3);
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toBe(6);
    expect(attempt(() => 'now')).toBe('now');
  });

  it('turns a throw into a rejection, never a synchronous throw, and keeps its error', async () => {
    const refused = new Error('refused');
    let answer: unknown;
    expect(() => {
      answer = andThen(1, () => {
        throw refused;
      });
    }).not.toThrow();
    await expect(answer).rejects.toBe(refused);
    // A library that throws something other than an Error still rejects with an Error.
    const odd: unknown = 'not an Error';
    expect(() => {
      answer = attempt(() => {
        throw odd;
      });
    }).not.toThrow();
    await expect(answer).rejects.toThrow('not an Error');
    await expect(andThen(Promise.reject(refused), () => 'never')).rejects.toBe(refused);
  });
});
