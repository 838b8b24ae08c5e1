import { newId } from '../ids.js';
import { CLIENT_SELECT, KEY_SELECT, keyRecord, type KeyRow } from '../rows.js';
import type { ApiKeyRecord, ClientRecord, HashSecretRecord, KeyStore, NewApiKey } from '../types.js';
import type { PostgresDb } from './db.js';

export class PostgresKeys implements KeyStore {
  constructor(private readonly sql: PostgresDb) {}

  async listHashSecrets(): Promise<HashSecretRecord[]> {
    return this.sql.all<HashSecretRecord>('SELECT version, sealed FROM key_hash_secrets ORDER BY version');
  }

  async insertHashSecret(secret: HashSecretRecord): Promise<boolean> {
    return this.sql.changedOne(
      'INSERT INTO key_hash_secrets (version, sealed, created_at) VALUES ($1, $2, $3) ON CONFLICT (version) DO NOTHING',
      secret.version,
      secret.sealed,
      new Date().toISOString(),
    );
  }

  async createClient(name: string): Promise<ClientRecord> {
    const record = { id: newId('cli'), name, createdAt: new Date().toISOString() };
    await this.sql.run(
      'INSERT INTO clients (id, name, created_at) VALUES ($1, $2, $3)',
      record.id,
      record.name,
      record.createdAt,
    );
    return record;
  }

  async findClient(name: string): Promise<ClientRecord | undefined> {
    return this.sql.one<ClientRecord>(`${CLIENT_SELECT} WHERE name = $1`, name);
  }

  async listClients(): Promise<ClientRecord[]> {
    return this.sql.all<ClientRecord>(`${CLIENT_SELECT} ORDER BY name`);
  }

  async insert(key: NewApiKey): Promise<void> {
    await this.sql.run(
      'INSERT INTO api_keys (id, client_id, type, hash, hash_version, hint, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      key.id,
      key.clientId,
      key.type,
      key.hash,
      key.hashVersion,
      key.hint,
      new Date().toISOString(),
    );
  }

  async findByHash(hashVersion: number, hash: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.sql.one<KeyRow>(
      `${KEY_SELECT} WHERE k.hash_version = $1 AND k.hash = $2`,
      hashVersion,
      hash,
    );
    return row && keyRecord(row);
  }

  async get(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await this.sql.one<KeyRow>(`${KEY_SELECT} WHERE k.id = $1`, id);
    return row && keyRecord(row);
  }

  async list(): Promise<ApiKeyRecord[]> {
    return (await this.sql.all<KeyRow>(`${KEY_SELECT} ORDER BY k.created_at, k.id`)).map(keyRecord);
  }

  async revoke(id: string, at: string): Promise<boolean> {
    return this.sql.changedOne(
      'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL',
      at,
      id,
    );
  }

  async revokedSince(since: string): Promise<string[]> {
    return (await this.sql.all<{ id: string }>('SELECT id FROM api_keys WHERE revoked_at >= $1', since)).map(
      (r) => r.id,
    );
  }

  async touch(id: string, at: string): Promise<void> {
    await this.sql.run('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', at, id);
  }
}
