import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERRORS } from '../../core/errors.js';

describe('the error catalogue', () => {
  it('matches the README table, code for code and status for status', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Error codes'));
    const rows = [...section.matchAll(/^\| `(TG_ERR_[A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => [
      m[1],
      Number(m[2]),
    ]);
    expect(rows).toEqual(Object.entries(ERRORS).map(([code, entry]) => [code, entry.status]));
  });

  it('gives every code a message that says what to do, without placeholders', () => {
    for (const [code, entry] of Object.entries(ERRORS)) {
      expect(entry.message.length, code).toBeGreaterThan(20);
      expect(entry.message, code).not.toMatch(/TODO|\$\{/);
    }
  });
});
