import { describe, expect, it } from 'vitest';
import { resolveScope } from '../../../core/auth/scope.js';
import { GatewayError } from '../../../core/errors.js';
import { type KeyType, scopeKey } from '../../../core/domain.js';

const ID = 'cli_1';

function resolve(type: KeyType, query: { user_id?: string; org_id?: string }) {
  try {
    return resolveScope({ clientId: ID, type }, query);
  } catch (error) {
    if (error instanceof GatewayError) return error.code;
    throw error;
  }
}

describe('scope resolution (SPEC.md, Identifier resolution)', () => {
  // [key type, org_id, user_id, expected]
  const table: [KeyType, string | undefined, string | undefined, unknown][] = [
    ['solo', undefined, undefined, { mode: 'solo', scope: { clientId: ID, orgId: null, userId: null } }],
    ['solo', 'o', undefined, { mode: 'solo', scope: { clientId: ID, orgId: null, userId: null } }],
    ['solo', undefined, 'u', 'TG_ERR_SCOPE_NEEDS_CLIENT_KEY'],
    ['solo', 'o', 'u', 'TG_ERR_SCOPE_NEEDS_PLATFORM_KEY'],
    ['client', undefined, undefined, { mode: 'solo', scope: { clientId: ID, orgId: null, userId: null } }],
    ['client', 'o', undefined, { mode: 'solo', scope: { clientId: ID, orgId: null, userId: null } }],
    ['client', undefined, 'u', { mode: '2-level', scope: { clientId: ID, orgId: null, userId: 'u' } }],
    ['client', 'o', 'u', 'TG_ERR_SCOPE_NEEDS_PLATFORM_KEY'],
    ['platform', undefined, undefined, { mode: 'solo', scope: { clientId: ID, orgId: null, userId: null } }],
    ['platform', 'o', undefined, { mode: 'solo', scope: { clientId: ID, orgId: null, userId: null } }],
    ['platform', undefined, 'u', { mode: '2-level', scope: { clientId: ID, orgId: null, userId: 'u' } }],
    ['platform', 'o', 'u', { mode: '3-level', scope: { clientId: ID, orgId: 'o', userId: 'u' } }],
  ];
  it.each(table)('%s key, org_id=%s, user_id=%s', (type, org, user, expected) => {
    const query: { user_id?: string; org_id?: string } = {};
    if (org !== undefined) query.org_id = org;
    if (user !== undefined) query.user_id = user;
    expect(resolve(type, query)).toEqual(expected);
  });

  it('refuses repeated, empty, over-long and control-character identifiers', () => {
    const emoji = '\u{1F600}';
    for (const bad of [
      ['a', 'b'],
      '',
      'x'.repeat(257),
      emoji.repeat(257),
      'a\u0000b',
      'a\u007fb',
      'a\u2028b',
      'a\ud800b',
    ]) {
      expect(resolve('platform', { user_id: bad as string })).toBe('TG_ERR_IDENTIFIER_INVALID');
      expect(resolve('platform', { user_id: 'u', org_id: bad as string })).toBe('TG_ERR_IDENTIFIER_INVALID');
    }
  });

  it('counts an identifier in characters, not UTF-16 units: 256 emoji are one', () => {
    const emoji = '\u{1F600}'.repeat(256);
    expect(resolve('platform', { user_id: emoji, org_id: emoji })).toEqual({
      mode: '3-level',
      scope: { clientId: ID, orgId: emoji, userId: emoji },
    });
  });

  it('keys the same user_id under different orgs, and org vs no org, apart', () => {
    const keys = new Set([
      scopeKey({ clientId: ID, orgId: 'o1', userId: 'u' }),
      scopeKey({ clientId: ID, orgId: 'o2', userId: 'u' }),
      scopeKey({ clientId: ID, orgId: null, userId: 'u' }),
      scopeKey({ clientId: ID, orgId: null, userId: null }),
      scopeKey({ clientId: 'cli_2', orgId: 'o1', userId: 'u' }),
    ]);
    expect(keys.size).toBe(5);
  });
});
