import type { ConnectionState, Scope } from '../../domain.js';
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
import { scopeMatch, type PostgresDb } from './db.js';

/** Targets the connection of a scope (bind provider at `$first`, then {@link scopeColumns}). */
function thisConnection(first: number): string {
  return `provider = $${first} AND scope_id = (SELECT s.id FROM scopes s WHERE ${scopeMatch(first + 1)})`;
}

export class PostgresConnections implements ConnectionStore {
  constructor(private readonly sql: PostgresDb) {}

  async list(scope: Scope): Promise<ConnectionRecord[]> {
    return (
      await this.sql.all<ConnectionRow>(
        `${CONNECTION_SELECT} WHERE ${scopeMatch(1)} ORDER BY c.provider`,
        ...scopeColumns(scope),
      )
    ).map(connectionRecord);
  }

  async get(scope: Scope, provider: string): Promise<ConnectionRecord | undefined> {
    const row = await this.sql.one<ConnectionRow>(
      `${CONNECTION_SELECT} WHERE ${scopeMatch(1)} AND c.provider = $4`,
      ...scopeColumns(scope),
      provider,
    );
    return row && connectionRecord(row);
  }

  async put(scope: Scope, c: NewConnection): Promise<void> {
    const scopeId = await this.sql.ensureScope(scope);
    const now = new Date().toISOString();
    // One statement: a concurrent put of the same scope and provider waits for this one, then
    // replaces it whole; no reader ever sees a mix of the two.
    await this.sql.run(
      `INSERT INTO connections (id, scope_id, provider, state, fields, account, credentials, oauth_app, expires_at, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
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
    return this.sql.changedOne(
      `DELETE FROM connections WHERE ${thisConnection(1)}`,
      provider,
      ...scopeColumns(scope),
    );
  }

  async setState(scope: Scope, provider: string, state: ConnectionState): Promise<boolean> {
    return this.sql.changedOne(
      `UPDATE connections SET state = $1, updated_at = $2 WHERE ${thisConnection(3)}`,
      state,
      new Date().toISOString(),
      provider,
      ...scopeColumns(scope),
    );
  }

  async listExpiring(before: string): Promise<ExpiringConnection[]> {
    const rows = await this.sql.all<ScopeRow & { provider: string; expires_at: string }>(
      `SELECT s.client_id, s.org_id, s.user_id, c.provider, c.expires_at FROM connections c JOIN scopes s ON s.id = c.scope_id
       WHERE c.state = 'connected' AND c.expires_at IS NOT NULL AND c.expires_at < $1 ORDER BY c.expires_at`,
      before,
    );
    return rows.map((r) => ({ scope: scopeOf(r), provider: r.provider, expiresAt: r.expires_at }));
  }

  async swapCredentials(
    scope: Scope,
    provider: string,
    expected: string,
    next: { credentials: string; expiresAt: string | null },
  ): Promise<boolean> {
    // Compare-and-set in one UPDATE: a concurrent swap waits for this row's lock, then re-checks
    // `credentials = expected` against the committed row, finds it changed, and updates nothing.
    return this.sql.changedOne(
      `UPDATE connections SET credentials = $1, expires_at = $2, state = 'connected', updated_at = $3
       WHERE credentials = $4 AND ${thisConnection(5)}`,
      next.credentials,
      next.expiresAt,
      new Date().toISOString(),
      expected,
      provider,
      ...scopeColumns(scope),
    );
  }

  async addEvent(scope: Scope, provider: string, event: ConnectionEvent, detail?: string): Promise<void> {
    const scopeId = await this.sql.ensureScope(scope);
    await this.sql.run(
      'INSERT INTO connection_events (id, scope_id, provider, event, detail, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
      newId('evt'),
      scopeId,
      provider,
      event,
      detail ?? null,
      new Date().toISOString(),
    );
  }

  async count(): Promise<ConnectionCount[]> {
    const rows = await this.sql.all<
      ScopeRow & { client_name: string; provider: string; state: ConnectionState; count: number }
    >(
      `SELECT s.client_id, c.name AS client_name, s.org_id, cn.provider, cn.state, COUNT(*)::integer AS count
       FROM connections cn JOIN scopes s ON s.id = cn.scope_id JOIN clients c ON c.id = s.client_id
       GROUP BY s.client_id, c.name, s.org_id, cn.provider, cn.state
       ORDER BY c.name, s.org_id, cn.provider, cn.state`,
    );
    return rows.map((r) => ({
      clientId: r.client_id,
      clientName: r.client_name,
      orgId: r.org_id || null,
      provider: r.provider,
      state: r.state,
      count: r.count,
    }));
  }

  async listEvents(limit: number): Promise<ConnectionEventRecord[]> {
    const rows = await this.sql.all<
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
       ORDER BY e.created_at DESC, e.seq DESC LIMIT $1`, // seq: ties of one millisecond, newest first
      limit,
    );
    return rows.map((r) => ({
      scope: scopeOf(r),
      clientName: r.client_name,
      provider: r.provider,
      event: r.event,
      detail: r.detail,
      createdAt: r.created_at,
    }));
  }
}
