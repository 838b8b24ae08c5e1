import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hashSecretBinding } from '../auth/key-service.js';
import type { Config } from '../config.js';
import { idpSecretBinding } from '../auth/identity-providers.js';
import { appSecretBinding } from '../connections/oauth-apps.js';
import { credentialBinding } from '../connections/vault.js';
import { envelopeFingerprint, fingerprintOf, Keyring, masterKeyFile, reseal } from '../keyring.js';
import type { SealedItem, Store } from '../store/types.js';

/**
 * `toolgate master-key rotate`: a new master key, and every sealed value (provider credentials,
 * the API-key hashing secrets) re-encrypted under it in one transaction. API-key lookup hashes do
 * not change: the hashing secret is only re-sealed. Crash-safe order for a key kept in the data
 * dir: the new key is written to master.key.next, the store commits, then the file is renamed over
 * master.key; `recoverRotation` finishes an interrupted rename at the next start.
 */
function nextFile(config: Config): string {
  return `${masterKeyFile(config)}.next`;
}

function resealItem(from: Keyring, to: Keyring, item: SealedItem): string {
  const binding =
    item.kind === 'hash_secret'
      ? hashSecretBinding(item.version)
      : item.kind === 'oauth_app'
        ? appSecretBinding(item.appId, item.provider)
        : item.kind === 'identity_provider'
          ? idpSecretBinding(item.keyId)
          : credentialBinding(item.scopeId, item.provider, item.connectionId);
  return reseal(from, to, item.sealed, ...binding);
}

export interface Rotation {
  /** How many sealed values were re-encrypted. */
  resealed: number;
  /** The new key, base64: only to print when TOOLGATE_MASTER_KEY holds the key (the operator sets it). */
  key: string;
  /** Where the new key was written, when it lives in the data dir. */
  file?: string;
}

export async function rotateMasterKey(config: Config, store: Store, current: Keyring): Promise<Rotation> {
  const key = randomBytes(32);
  const next = new Keyring(key);
  const inDataDir = config.masterKey === undefined;
  if (inDataDir) writeFileSync(nextFile(config), key.toString('base64') + '\n', { mode: 0o600 });
  try {
    const resealed = await store.resealAll((item) => resealItem(current, next, item));
    if (!inDataDir) return { resealed, key: key.toString('base64') };
    renameSync(nextFile(config), masterKeyFile(config));
    return { resealed, key: key.toString('base64'), file: masterKeyFile(config) };
  } catch (error) {
    if (inDataDir) rmSync(nextFile(config), { force: true });
    throw error;
  }
}

/**
 * Finishes or forgets a rotation interrupted between the store's commit and the rename: the store
 * says which key sealed it. Returns true when master.key was replaced.
 */
export async function recoverRotation(config: Config, store: Store, loadKey: () => Buffer): Promise<boolean> {
  const pending = nextFile(config);
  if (config.masterKey !== undefined || !existsSync(pending)) return false;
  const [secret] = await store.keys.listHashSecrets();
  const sealedWith = secret && envelopeFingerprint(secret.sealed);
  const nextKey = Buffer.from(readFileSync(pending, 'utf8').trim(), 'base64');
  if (
    sealedWith !== undefined &&
    sealedWith === fingerprintOf(nextKey) &&
    sealedWith !== fingerprintOf(loadKey())
  ) {
    renameSync(pending, masterKeyFile(config));
    return true;
  }
  rmSync(pending, { force: true });
  return false;
}
