import type { KeyService } from '../auth/key-service.js';
import type { Store } from '../store/types.js';
import { generatePassword, hashPassword } from './password.js';

/**
 * What the first-start banner shows (printed to stdout by the CLI, never through the logger). On
 * an empty data dir, once: the default client's solo key. Whenever no dashboard password is set
 * yet (first start, or the first start of a version with the dashboard): a generated one, stored
 * only as its scrypt hash.
 */
export async function bootstrap(
  store: Store,
  keys: KeyService,
): Promise<{ key?: string; adminPassword?: string }> {
  const out: { key?: string; adminPassword?: string } = {};
  if (
    (await store.meta.setOnce('bootstrapped_at', new Date().toISOString())) &&
    (await store.keys.list()).length === 0
  ) {
    out.key = (await keys.create('default', 'solo')).key;
  }
  if ((await store.dashboard.getPasswordHash()) === undefined) {
    const password = generatePassword();
    // Only if still unset: another process may have set one meanwhile.
    if (await store.dashboard.setPasswordHash(await hashPassword(password), { onlyIfUnset: true }))
      out.adminPassword = password;
  }
  return out;
}
