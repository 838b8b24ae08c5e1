import { randomBytes } from 'node:crypto';
import { andThen, type Awaitable } from '../awaitable.js';
import type { Bus } from '../coordination/bus.js';
import { GatewayError } from '../errors.js';
import type { Keyring } from '../keyring.js';
import type { AuditLog } from '../store/audit-log.js';
import { newId } from '../store/ids.js';
import type { ApiKeyRecord, Store } from '../store/types.js';
import { generateApiKey, hashApiKey, isWellFormedApiKey, keyHint } from './keys.js';
import type { KeyType } from '../domain.js';
import { Lru, PER_CALL_ENTRIES } from '../lru.js';

const HASH_SECRET_PURPOSE = 'toolgate/key-hash-secret';

/** Where a hashing secret's envelope is bound: its purpose, context and additional data. */
export function hashSecretBinding(version: number): [purpose: string, context: string, aad: string] {
  return [HASH_SECRET_PURPOSE, String(version), `key-hash-secret:${version}`];
}
/** last_used_at is a hint for the operator; writing it more often than this would cost a write per call. */
const TOUCH_INTERVAL_MS = 60_000;

/**
 * Creates, verifies and revokes caller API keys. Keys are looked up by HMAC under a hashing secret
 * of their own (sealed by the master key, versioned), so rotating the master key re-seals the
 * secret and never changes a lookup hash. Verification reads the store on every request: a
 * revocation, even by the CLI in another process, takes effect on the next request.
 */
export class KeyService {
  private secrets: { version: number; secret: Buffer }[] = [];
  private readonly touched = new Map<string, number>();
  /**
   * The lookup hash of each key that verified lately, by the key: its checksum and HMAC cost about
   * 5 µs of every request's CPU (scripts/bench), and a client sends the same key on every call. Only
   * the hash is remembered, never the verdict: each request still reads the key's record, so a
   * revocation takes effect on the next request as before. Kept in this process's memory only, for
   * keys that matched a record.
   */
  private readonly hashes = new Lru<string, { version: number; hash: string }>(PER_CALL_ENTRIES);

  constructor(
    private readonly store: Store,
    private readonly keyring: Keyring,
    private readonly bus: Bus,
    private readonly audit: AuditLog,
  ) {}

  /** Loads the hashing secrets, creating version 1 on an empty store. */
  async init(): Promise<void> {
    let rows = await this.store.keys.listHashSecrets();
    if (rows.length === 0) {
      const sealed = this.keyring.seal(randomBytes(32), ...hashSecretBinding(1));
      await this.store.keys.insertHashSecret({ version: 1, sealed });
      rows = await this.store.keys.listHashSecrets();
    }
    this.secrets = rows
      .map((row) => ({
        version: row.version,
        secret: this.keyring.open(
          row.sealed,
          HASH_SECRET_PURPOSE,
          String(row.version),
          `key-hash-secret:${row.version}`,
        ),
      }))
      .sort((a, b) => b.version - a.version);
    this.hashes.clear();
  }

  /** Creates a key for the named client (created on first use). The raw key is returned once. */
  async create(clientName: string, type: KeyType): Promise<{ key: string; record: ApiKeyRecord }> {
    const current = this.secrets[0];
    if (!current) throw new Error('KeyService.init() was not called');
    const client =
      (await this.store.keys.findClient(clientName)) ?? (await this.store.keys.createClient(clientName));
    const key = generateApiKey();
    const id = newId('key');
    await this.store.keys.insert({
      id,
      clientId: client.id,
      type,
      hash: hashApiKey(key, current.secret),
      hashVersion: current.version,
      hint: keyHint(key),
    });
    const record = await this.store.keys.get(id);
    if (!record) throw new Error(`Key ${id} vanished after insert`);
    this.audit.record({ event: 'key_created', clientId: client.id, keyId: id });
    return { key, record };
  }

  /**
   * The active key record for a raw key, or a GatewayError saying why it is refused (a rejection).
   * A key seen before whose record the store holds in memory, nearly every request's, is answered
   * at once (core/awaitable.ts).
   */
  verify(key: string | undefined): Awaitable<ApiKeyRecord> {
    const remembered = key === undefined ? undefined : this.hashes.get(key);
    if (remembered === undefined) return this.lookUp(key);
    return andThen(this.store.keys.findByHash(remembered.version, remembered.hash), (record) => {
      if (record) return this.active(record);
      this.hashes.delete(key!);
      return this.lookUp(key);
    });
  }

  /** {@link verify} of a key not remembered: hashed under each secret, newest first, and looked up. */
  private async lookUp(key: string | undefined): Promise<ApiKeyRecord> {
    if (key === undefined || key === '') throw new GatewayError('TG_ERR_KEY_MISSING');
    if (!isWellFormedApiKey(key)) throw new GatewayError('TG_ERR_KEY_MALFORMED');
    for (const { version, secret } of this.secrets) {
      const hash = hashApiKey(key, secret);
      const record = await this.store.keys.findByHash(version, hash);
      if (!record) continue;
      this.hashes.set(key, { version, hash });
      return this.active(record);
    }
    throw new GatewayError('TG_ERR_KEY_UNKNOWN');
  }

  private active(record: ApiKeyRecord): ApiKeyRecord {
    if (record.revokedAt !== null) throw new GatewayError('TG_ERR_KEY_REVOKED');
    this.touch(record.id);
    return record;
  }

  private touch(id: string): void {
    const now = Date.now();
    if (now - (this.touched.get(id) ?? 0) < TOUCH_INTERVAL_MS) return;
    this.touched.set(id, now);
    // A failed hint update must never fail the request it rides on.
    this.store.keys.touch(id, new Date(now).toISOString()).catch(() => this.touched.delete(id));
  }

  list(): Promise<ApiKeyRecord[]> {
    return this.store.keys.list();
  }

  /**
   * Revokes a key; returns false when it does not exist or was revoked already. Every process
   * refuses it from the next request (the store), and cuts off its open streams on the bus's
   * `key.revoked` (a revocation by a process without a bus, such as the CLI, reaches open streams
   * through the revocation sweep in jobs.ts).
   */
  async revoke(id: string): Promise<boolean> {
    const revoked = await this.store.keys.revoke(id, new Date().toISOString());
    if (revoked) {
      const clientId = (await this.store.keys.get(id))?.clientId ?? null;
      this.audit.record({ event: 'key_revoked', clientId, keyId: id });
    }
    // Published even when already revoked: a stream opened a moment before a revocation is cut too.
    await this.bus.publish({ type: 'key.revoked', keyId: id });
    return revoked;
  }
}

/** The key a request carries: X-API-Key, or Authorization: Bearer (identical behaviour). */
export function keyFromHeaders(headers: Record<string, string | string[] | undefined>): string | undefined {
  const explicit = headers['x-api-key'];
  if (typeof explicit === 'string' && explicit.trim() !== '') return explicit.trim();
  const authorization = headers.authorization;
  if (typeof authorization === 'string') {
    const match = /^bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  return undefined;
}
