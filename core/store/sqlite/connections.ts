import { type ConnectionState, type Scope, scopeKey } from '../../domain.js';
import { newId } from '../ids.js';
import {
  CONNECTION_SELECT,
  connectionRecord,
  scopeColumns,
  scopeOf,
  type ConnectionRow,
  type ScopeRow,
} from '../rows.js';
import type {
  ConnectionCount,
  ConnectionEvent,
  ConnectionEventRecord,
  ConnectionRecord,
  ConnectionStore,
  ExpiringConnection,
  NewConnection,
} from '../types.js';
import { attempt, type Awaitable } from '../../awaitable.js';
import { SCOPE_MATCH, type SqliteDb } from './db.js';

/**
 * The key a scope's connection to `provider` is kept under among the hot rows (db.ts, hotRead). Each
 * write below changes that one row at most, and drops it alone (runOnRow): a reconnect or a token
 * refresh of one scope leaves every other scope's connection in memory. Built on every tool call:
 * one template, no array joined.
 */
function hotKey(scope: Scope, provider: string): string {
  return `${scopeKey(scope)}\u0000${provider}`;
}

/** Targets the connection of a scope (bind provider, then {@link scopeColumns}). */
const THIS_CONNECTION = `provider = ? AND scope_id = (SELECT s.id FROM scopes s WHERE ${SCOPE_MATCH})`;

export class SqliteConnections implements ConnectionStore {
  constructor(private readonly sql: SqliteDb) {}

  async list(scope: Scope): Promise<ConnectionRecord[]> {
    return this.sql
      .all<ConnectionRow>(
        `${CONNECTION_SELECT} WHERE ${SCOPE_MATCH} ORDER BY c.provider`,
        ...scopeColumns(scope),
      )
      .map(connectionRecord);
  }

  get(scope: Scope, provider: string): Awaitable<ConnectionRecord | undefined> {
    return attempt(() =>
      this.sql.hotRead('connections', hotKey(scope, provider), () => {
        const row = this.sql.one<ConnectionRow>(
          `${CONNECTION_SELECT} WHERE ${SCOPE_MATCH} AND c.provider = ?`,
          ...scopeColumns(scope),
          provider,
        );
        if (!row) return undefined;
        const record = connectionRecord(row);
        Object.freeze(record.fields);
        return record;
      }),
    );
  }

  async put(scope: Scope, c: NewConnection): Promise<void> {
    const scopeId = this.sql.ensureScope(scope);
    const now = new Date().toISOString();
    this.sql.runOnRow(
      'connections',
      hotKey(scope, c.provider),
      `INSERT INTO connections (id, scope_id, provider, state, fields, account, credentials, oauth_app, expires_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (scope_id, provider) DO UPDATE SET
         id = excluded.id, state = excluded.state, fields = excluded.fields, account = excluded.account,
         credentials = excluded.credentials, oauth_app = excluded.oauth_app, expires_at = excluded.expires_at,
         updated_at = excluded.updated_at`,
      c.id,
      scopeId,
      c.provider,
      c.state,
      JSON.stringify(c.fields),
      c.account,
      c.credentials,
      c.oauthApp,
      c.expiresAt,
      now,
      now,
    );
  }

  async delete(scope: Scope, provider: string): Promise<boolean> {
    return this.sql.runOnRow(
      'connections',
      hotKey(scope, provider),
      `DELETE FROM connections WHERE ${THIS_CONNECTION}`,
      provider,
      ...scopeColumns(scope),
    );
  }

  async setState(scope: Scope, provider: string, state: ConnectionState): Promise<boolean> {
    return this.sql.runOnRow(
      'connections',
      hotKey(scope, provider),
      `UPDATE connections SET state = ?, updated_at = ? WHERE ${THIS_CONNECTION}`,
      state,
      new Date().toISOString(),
      provider,
      ...scopeColumns(scope),
    );
  }

  async listExpiring(before: string): Promise<ExpiringConnection[]> {
    return this.sql
      .all<ScopeRow & { provider: string; expires_at: string }>(
        `SELECT s.client_id, s.org_id, s.user_id, c.provider, c.expires_at FROM connections c JOIN scopes s ON s.id = c.scope_id
         WHERE c.state = 'connected' AND c.expires_at IS NOT NULL AND c.expires_at < ? ORDER BY c.expires_at`,
        before,
      )
      .map((r) => ({ scope: scopeOf(r), provider: r.provider, expiresAt: r.expires_at }));
  }

  async swapCredentials(
    scope: Scope,
    provider: string,
    expected: string,
    next: { credentials: string; expiresAt: string | null },
  ): Promise<boolean> {
    return this.sql.runOnRow(
      'connections',
      hotKey(scope, provider),
      `UPDATE connections SET credentials = ?, expires_at = ?, state = 'connected', updated_at = ?
       WHERE credentials = ? AND ${THIS_CONNECTION}`,
      next.credentials,
      next.expiresAt,
      new Date().toISOString(),
      expected,
      provider,
      ...scopeColumns(scope),
    );
  }

  async addEvent(scope: Scope, provider: string, event: ConnectionEvent, detail?: string): Promise<void> {
    const scopeId = this.sql.ensureScope(scope);
    this.sql.run(
      'INSERT INTO connection_events (id, scope_id, provider, event, detail, created_at) VALUES (?, ?, ?, ?, ?, ?)',
      newId('evt'),
      scopeId,
      provider,
      event,
      detail ?? null,
      new Date().toISOString(),
    );
  }

  async count(): Promise<ConnectionCount[]> {
    return this.sql
      .all<ScopeRow & { client_name: string; provider: string; state: ConnectionState; count: number }>(
        `SELECT s.client_id, c.name AS client_name, s.org_id, cn.provider, cn.state, COUNT(*) AS count
         FROM connections cn JOIN scopes s ON s.id = cn.scope_id JOIN clients c ON c.id = s.client_id
         GROUP BY s.client_id, c.name, s.org_id, cn.provider, cn.state
         ORDER BY c.name, s.org_id, cn.provider, cn.state`,
      )
      .map((r) => ({
        clientId: r.client_id,
        clientName: r.client_name,
        orgId: r.org_id || null,
        provider: r.provider,
        state: r.state,
        count: r.count,
      }));
  }

  async listEvents(limit: number): Promise<ConnectionEventRecord[]> {
    return this.sql
      .all<
        ScopeRow & {
          client_name: string;
          provider: string;
          event: ConnectionEvent;
          detail: string | null;
          created_at: string;
        }
      >(
        `SELECT s.client_id, c.name AS client_name, s.org_id, s.user_id, e.provider, e.event, e.detail, e.created_at
         FROM connection_events e JOIN scopes s ON s.id = e.scope_id JOIN clients c ON c.id = s.client_id
         ORDER BY e.created_at DESC, e.rowid DESC LIMIT ?`, // rowid: ties of one millisecond, newest first
        limit,
      )
      .map((r) => ({
        scope: scopeOf(r),
        clientName: r.client_name,
        provider: r.provider,
        event: r.event,
        detail: r.detail,
        createdAt: r.created_at,
      }));
  }
}
