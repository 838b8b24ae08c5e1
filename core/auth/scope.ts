import { GatewayError } from '../errors.js';
import type { KeyType, Scope, ScopeMode } from '../domain.js';

/** In characters (Unicode code points, as README says), not UTF-16 units: 256 emoji fit. */
const MAX_IDENTIFIER = 256;
// C0, DEL, C1 controls and the Unicode line/paragraph separators: never part of an identifier.
// A lone surrogate is no character at all, and would be stored as U+FFFD, alike for every one.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]|\p{Cs}/u;

/** Code points, counted only past the length where UTF-16 units could overstate them. */
function tooLong(value: string): boolean {
  return value.length > MAX_IDENTIFIER && [...value].length > MAX_IDENTIFIER;
}

function identifier(value: unknown): string | null {
  if (value === undefined) return null;
  if (typeof value !== 'string' || value.length === 0 || tooLong(value) || CONTROL.test(value)) {
    throw new GatewayError('TG_ERR_IDENTIFIER_INVALID');
  }
  return value;
}

/**
 * Resolves the scope of a request from its key and the `user_id` / `org_id` query parameters,
 * exactly per SPEC.md's table: org_id without user_id is solo for every key type; user_id needs a
 * client or platform key (a solo key would silently merge users); org_id with user_id needs a
 * platform key. A repeated or empty parameter is refused rather than guessed at.
 */
export function resolveScope(
  key: { clientId: string; type: KeyType },
  query: { user_id?: unknown; org_id?: unknown },
): { scope: Scope; mode: ScopeMode } {
  const userId = identifier(query.user_id);
  const orgId = identifier(query.org_id);
  if (userId === null) return { scope: { clientId: key.clientId, orgId: null, userId: null }, mode: 'solo' };
  if (key.type === 'solo') {
    throw new GatewayError(
      orgId === null ? 'TG_ERR_SCOPE_NEEDS_CLIENT_KEY' : 'TG_ERR_SCOPE_NEEDS_PLATFORM_KEY',
    );
  }
  if (orgId === null) return { scope: { clientId: key.clientId, orgId: null, userId }, mode: '2-level' };
  if (key.type !== 'platform') throw new GatewayError('TG_ERR_SCOPE_NEEDS_PLATFORM_KEY');
  return { scope: { clientId: key.clientId, orgId, userId }, mode: '3-level' };
}
