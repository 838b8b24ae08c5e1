import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from './config.js';
import { Lru } from './lru.js';

/**
 * The master key and everything derived from it. Purpose keys are derived with HKDF so that no
 * two uses share key material; sealed values are AES-256-GCM envelopes whose additional data
 * binds them to where they belong (a copied ciphertext fails to open anywhere else).
 */
export class Keyring {
  /** Short fingerprint of the master key, stored in every envelope to name the key that sealed it. */
  fingerprint: string;
  /**
   * Derived keys by purpose and context, each as a latin1 string (a character a byte): kept in V8's
   * heap, which the garbage collector compacts. A Buffer kept per entry would hold memory malloc'd
   * outside that heap for as long as the entry lives; 10,000 such keys, made among each connect's
   * short-lived allocations, fragment the process's C heap, and every later request's malloc and
   * free pay for it (scripts/bench: a gateway after 10,000 connects spent 5-14 % more CPU per call
   * than a fresh one, _int_malloc 2.3 % of its samples against 0.9 %).
   */
  private readonly derived = new Lru<string, string>(10_000);

  /**
   * @param reload - re-reads the master key from where it is kept; called when an envelope names
   *   another key, so a server picks up `toolgate master-key rotate` run beside it.
   */
  constructor(
    private masterKey: Buffer,
    private readonly reload?: () => Buffer,
  ) {
    if (masterKey.length !== 32) throw new Error('The master key must be 32 bytes');
    this.fingerprint = fingerprintOf(masterKey);
  }

  /**
   * A 32-byte key for one purpose (and optionally one scope), stable for this master key: a copy
   * of its own for the caller, short-lived.
   */
  derive(purpose: string, context = ''): Buffer {
    const id = `${purpose}\u0000${context}`;
    let key = this.derived.get(id);
    if (key === undefined) {
      key = Buffer.from(
        hkdfSync('sha256', this.masterKey, Buffer.from(context), Buffer.from(purpose), 32),
      ).toString('latin1');
      this.derived.set(id, key);
    }
    return Buffer.from(key, 'latin1');
  }

  /** Encrypts `plaintext` under the purpose key; `aad` must be given again to open it. */
  seal(plaintext: Buffer, purpose: string, context: string, aad: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.derive(purpose, context), iv);
    cipher.setAAD(Buffer.from(aad));
    const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return [
      'v1',
      this.fingerprint,
      iv.toString('base64url'),
      cipher.getAuthTag().toString('base64url'),
      body.toString('base64url'),
    ].join('.');
  }

  /** Opens an envelope made by `seal`; throws when the key, purpose, context or aad differ. */
  open(envelope: string, purpose: string, context: string, aad: string): Buffer {
    const [version, fingerprint, iv, tag, body] = envelope.split('.');
    if (version !== 'v1' || iv === undefined || tag === undefined || body === undefined) {
      throw new Error('Unrecognised envelope format');
    }
    if (fingerprint !== this.fingerprint && this.reload) {
      const fresh = this.reload();
      if (fingerprintOf(fresh) === fingerprint) {
        this.masterKey = fresh;
        this.fingerprint = fingerprint;
        this.derived.clear();
      }
    }
    if (fingerprint !== this.fingerprint) {
      throw new Error(`Sealed with another master key (${fingerprint}); this one is ${this.fingerprint}`);
    }
    const decipher = createDecipheriv(
      'aes-256-gcm',
      this.derive(purpose, context),
      Buffer.from(iv, 'base64url'),
    );
    decipher.setAAD(Buffer.from(aad));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
  }
}

/** The fingerprint an envelope records for a master key. */
export function fingerprintOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** The fingerprint recorded in an envelope made by `Keyring.seal`. */
export function envelopeFingerprint(envelope: string): string | undefined {
  return envelope.split('.')[1];
}

/** Re-seals an envelope made under `from` with the same binding under `to`. */
export function reseal(
  from: Keyring,
  to: Keyring,
  envelope: string,
  purpose: string,
  context: string,
  aad: string,
): string {
  return to.seal(from.open(envelope, purpose, context, aad), purpose, context, aad);
}

export interface MasterKeySource {
  key: Buffer;
  /** Set when the key was generated now; the caller warns the operator to back it up. */
  generatedAt?: string;
}

/**
 * TOOLGATE_MASTER_KEY (base64 of 32 bytes), else `<dataDir>/master.key`, created (mode 0600) when
 * absent. Losing this key loses every stored provider credential, hence the backup warning.
 */
export function masterKeyFile(config: Config): string {
  return join(config.dataDir, 'master.key');
}

export function loadMasterKey(config: Config): MasterKeySource {
  if (config.masterKey !== undefined) {
    const key = Buffer.from(config.masterKey, 'base64');
    if (key.length !== 32)
      throw new Error('TOOLGATE_MASTER_KEY must be the base64 encoding of exactly 32 bytes');
    return { key };
  }
  const file = masterKeyFile(config);
  if (existsSync(file)) {
    const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64');
    if (key.length !== 32) throw new Error(`${file} does not hold a base64 32-byte key`);
    return { key };
  }
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const key = randomBytes(32);
  writeFileSync(file, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return { key, generatedAt: file };
}
