import { createHash } from 'node:crypto';

/**
 * The hash a front-door record is stored under: of its model and id, never the id (it may be a
 * bearer token). Apart from the adapter, so that what only needs the key (the identity providers'
 * sign-ins, and through them the CLI) does not load oidc-provider.
 */
export function recordKey(model: string, id: string): string {
  return createHash('sha256').update(`${model}\u0000${id}`).digest('base64url');
}
