import { newId } from '../ids.js';
import { CLIENT_SELECT, KEY_SELECT, keyRecord, type KeyRow } from '../rows.js';
import type { ApiKeyRecord, ClientRecord, HashSecretRecord, KeyStore, NewApiKey } from '../types.js';
import { attempt, type Awaitable } from '../../awaitable.js';
import type { SqliteDb } from './db.js';

export class SqliteKeys implements KeyStore {
  constructor(private readonly sql: SqliteDb) {}

  async listHashSecrets(): Promise<HashSecretRecord[]> {
    return this.sql.all<HashSecretRecord>('SELECT version, sealed FROM key_hash_secrets ORDER BY version');
  }

  async insertHashSecret(secret: HashSecretRecord): Promise<boolean> {
    return this.sql.changedOne(
      'INSERT INTO key_hash_secrets (version, sealed, created_at) VALUES (?, ?, ?) ON CONFLICT (version) DO NOTHING',
      secret.version,
      secret.sealed,
      new Date().toISOString(),
    );
  }

  async createClient(name: string): Promise<ClientRecord> {
    const record = { id: newId('cli'), name, createdAt: new Date().toISOString() };
    this.sql.run(
      'INSERT INTO clients (id, name, created_at) VALUES (?, ?, ?)',
      record.id,
      record.name,
      record.createdAt,
    );
    return record;
  }

  async findClient(name: string): Promise<ClientRecord | undefined> {
    return this.sql.one<ClientRecord>(`${CLIENT_SELECT} WHERE name = ?`, name);
  }

  async listClients(): Promise<ClientRecord[]> {
    return this.sql.all<ClientRecord>(`${CLIENT_SELECT} ORDER BY name`);
  }

  async insert(key: NewApiKey): Promise<void> {
    this.sql.run(
      'INSERT INTO api_keys (id, client_id, type, hash, hash_version, hint, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      key.id,
      key.clientId,
      key.type,
      key.hash,
      key.hashVersion,
      key.hint,
      new Date().toISOString(),
    );
  }

  findByHash(hashVersion: number, hash: string): Awaitable<ApiKeyRecord | undefined> {
    return attempt(() => {
      const read = (): { hashVersion: number; record: ApiKeyRecord } | undefined => {
        const row = this.sql.one<KeyRow>(
          `${KEY_SELECT} WHERE k.hash_version = ? AND k.hash = ?`,
          hashVersion,
          hash,
        );
        return row && { hashVersion, record: keyRecord(row) };
      };
      // Kept under the hash alone, its version beside it: the key service asks with the hash string
      // it keeps, so the lookup builds no key (db.ts, HotTable).
      const hot = this.sql.hotRead('keys', hash, read);
      if (hot === undefined || hot.hashVersion === hashVersion) return hot?.record;
      return read()?.record;
    });
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const row = this.sql.one<KeyRow>(`${KEY_SELECT} WHERE k.id = ?`, id);
    return row && keyRecord(row);
  }

  async list(): Promise<ApiKeyRecord[]> {
    return this.sql.all<KeyRow>(`${KEY_SELECT} ORDER BY k.created_at, k.id`).map(keyRecord);
  }

  async revoke(id: string, at: string): Promise<boolean> {
    return this.sql.changedOne(
      'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL',
      at,
      id,
    );
  }

  async revokedSince(since: string): Promise<string[]> {
    return this.sql
      .all<{ id: string }>('SELECT id FROM api_keys WHERE revoked_at >= ?', since)
      .map((r) => r.id);
  }

  async touch(id: string, at: string): Promise<void> {
    // The key's own hot row goes, found by its hash (the key it is kept under); the other keys' stay.
    const hash = this.sql.one<{ hash: string }>('SELECT hash FROM api_keys WHERE id = ?', id)?.hash;
    this.sql.runOnRow('keys', hash, 'UPDATE api_keys SET last_used_at = ? WHERE id = ?', at, id);
  }
}
