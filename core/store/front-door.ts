import { scopeOf, type ScopeRow } from './rows.js';
import type { SqlRunner } from './statements.js';
import type { AuthServerRecord, FrontDoorGrantRecord, FrontDoorStore } from './types.js';

interface RecordRow {
  model: string;
  payload: string;
  grant_id: string | null;
  uid_hash: string | null;
  expires_at: string;
  consumed_at: string | null;
}

const RECORD = 'SELECT model, payload, grant_id, uid_hash, expires_at, consumed_at FROM auth_server_records';
const LIVE = 'expires_at > ?';

function record(row: RecordRow): AuthServerRecord {
  return {
    model: row.model,
    payload: row.payload,
    grantId: row.grant_id,
    uidHash: row.uid_hash,
    expiresAt: row.expires_at,
    consumedAt: row.consumed_at,
  };
}

interface GrantRow extends ScopeRow {
  grant_id: string;
  key_id: string;
  app_id: string;
  app_name: string | null;
  app_uri: string | null;
  via: 'key' | 'idp';
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const GRANT = `SELECT g.grant_id, g.key_id, s.client_id, s.org_id, s.user_id, g.app_id, g.app_name, g.app_uri,
  g.via, g.created_at, g.last_used_at, g.revoked_at
  FROM front_door_grants g JOIN scopes s ON s.id = g.scope_id`;

function grant(row: GrantRow): FrontDoorGrantRecord {
  return {
    grantId: row.grant_id,
    keyId: row.key_id,
    scope: scopeOf(row),
    appId: row.app_id,
    appName: row.app_name,
    appUri: row.app_uri,
    via: row.via,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

/**
 * The front door's port, written once for SQLite and PostgreSQL: every statement is one atomic
 * statement (an upsert, a conditional UPDATE), so neither dialect needs a transaction here.
 */
export class SqlFrontDoor implements FrontDoorStore {
  constructor(private readonly sql: SqlRunner) {}

  async put(idHash: string, r: Omit<AuthServerRecord, 'consumedAt'>): Promise<void> {
    await this.sql.run(
      `INSERT INTO auth_server_records (model, id_hash, payload, grant_id, uid_hash, expires_at, consumed_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL)
       ON CONFLICT (id_hash) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id,
         uid_hash = excluded.uid_hash, expires_at = excluded.expires_at`,
      r.model,
      idHash,
      r.payload,
      r.grantId,
      r.uidHash,
      r.expiresAt,
    );
  }

  async get(idHash: string, now: string): Promise<AuthServerRecord | undefined> {
    const row = await this.sql.one<RecordRow>(`${RECORD} WHERE id_hash = ? AND ${LIVE}`, idHash, now);
    return row && record(row);
  }

  async getByUid(model: string, uidHash: string, now: string): Promise<AuthServerRecord | undefined> {
    const row = await this.sql.one<RecordRow>(
      `${RECORD} WHERE model = ? AND uid_hash = ? AND ${LIVE}`,
      model,
      uidHash,
      now,
    );
    return row && record(row);
  }

  async consume(idHash: string, at: string): Promise<boolean> {
    return (
      (await this.sql.run(
        'UPDATE auth_server_records SET consumed_at = ? WHERE id_hash = ? AND consumed_at IS NULL',
        at,
        idHash,
      )) === 1
    );
  }

  async destroy(idHash: string): Promise<void> {
    await this.sql.run('DELETE FROM auth_server_records WHERE id_hash = ?', idHash);
  }

  destroyGrant(grantId: string): Promise<number> {
    return this.sql.run('DELETE FROM auth_server_records WHERE grant_id = ?', grantId);
  }

  purgeExpired(now: string): Promise<number> {
    return this.sql.run('DELETE FROM auth_server_records WHERE expires_at <= ?', now);
  }

  async addGrant(g: Omit<FrontDoorGrantRecord, 'lastUsedAt' | 'revokedAt'>): Promise<void> {
    const scopeId = await this.sql.ensureScope(g.scope);
    await this.sql.run(
      `INSERT INTO front_door_grants (grant_id, key_id, scope_id, app_id, app_name, app_uri, via, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      g.grantId,
      g.keyId,
      scopeId,
      g.appId,
      g.appName,
      g.appUri,
      g.via,
      g.createdAt,
    );
  }

  async getGrant(grantId: string): Promise<FrontDoorGrantRecord | undefined> {
    const row = await this.sql.one<GrantRow>(`${GRANT} WHERE g.grant_id = ?`, grantId);
    return row && grant(row);
  }

  async grantsOfKey(keyId: string): Promise<FrontDoorGrantRecord[]> {
    const rows = await this.sql.all<GrantRow>(
      `${GRANT} WHERE g.key_id = ? ORDER BY g.created_at DESC, g.grant_id`,
      keyId,
    );
    return rows.map(grant);
  }

  async touchGrant(grantId: string, at: string): Promise<void> {
    await this.sql.run('UPDATE front_door_grants SET last_used_at = ? WHERE grant_id = ?', at, grantId);
  }

  async revokeGrant(grantId: string, at: string): Promise<boolean> {
    return (
      (await this.sql.run(
        'UPDATE front_door_grants SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL',
        at,
        grantId,
      )) === 1
    );
  }
}
