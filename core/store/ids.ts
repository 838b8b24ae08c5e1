import { randomBytes } from 'node:crypto';

/** A random record id with a readable prefix (`key_…`, `rep_…`): 64 bits, hex, easy to type. */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(8).toString('hex')}`;
}
