import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type { KeyType } from '../auth/keys.js';
import { newId } from './ids.js';
import { MIGRATIONS } from './migrations.js';
import type {
  ConnectionCount,
  ConnectionEventRecord,
  DashboardSessionRecord,
  OrganizationRecord,
  ConnectionEvent,
  ConnectionRecord,
  Branding,
  ConnectionState,
  ExpiringConnection,
  LinkRecord,
  OAuthAppRecord,
  SealedItem,
  NewConnection,
  ApiKeyRecord,
  ClientRecord,
  HashSecretRecord,
  NewApiKey,
  NewReport,
  ReportRecord,
  Scope,
  Store,
} from './types.js';

interface KeyRow {
  id: string;
  client_id: string;
  client_name: string;
  type: KeyType;
  hint: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

interface ReportRow {
  id: string;
  client_id: string;
  org_id: string;
  user_id: string;
  summary: string;
  details: string | null;
  provider: string | null;
  tool: string | null;
  created_at: string;
  resolved_at: string | null;
}

interface ConnectionRow {
  id: string;
  provider: string;
  state: ConnectionState;
  fields: string;
  account: string | null;
  credentials: string;
  oauth_app: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

interface LinkRow {
  client_id: string;
  org_id: string;
  user_id: string;
  provider: string;
  purpose: string;
  payload: string | null;
  expires_at: string;
}

/** Rows {@link SqliteStore} keeps for the per-call path before starting over (a bound, not a tuning). */
const HOT_ROWS = 10_000;

const CONNECTION_COLUMNS = `c.id, c.provider, c.state, c.fields, c.account, c.credentials, c.oauth_app, c.expires_at, c.created_at, c.updated_at`;
const SCOPE_MATCH = `s.client_id = ? AND s.org_id = ? AND s.user_id = ?`;

function connectionRecord(row: ConnectionRow): ConnectionRecord {
  return {
    id: row.id,
    provider: row.provider,
    state: row.state,
    fields: JSON.parse(row.fields) as Record<string, string>,
    account: row.account,
    credentials: row.credentials,
    oauthApp: row.oauth_app,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function linkRecord(row: LinkRow): LinkRecord {
  return {
    scope: { clientId: row.client_id, orgId: row.org_id || null, userId: row.user_id || null },
    provider: row.provider,
    purpose: row.purpose,
    payload: row.payload,
    expiresAt: row.expires_at,
  };
}

interface OAuthAppRow {
  id: string;
  provider: string;
  client_id: string;
  org_id: string;
  oauth_client_id: string;
  client_secret: string;
  branding: string | null;
  created_at: string;
  superseded_at: string | null;
}

function oauthAppRecord(row: OAuthAppRow): OAuthAppRecord {
  return {
    id: row.id,
    provider: row.provider,
    clientId: row.client_id || null,
    orgId: row.org_id || null,
    oauthClientId: row.oauth_client_id,
    clientSecret: row.client_secret,
    branding: row.branding === null ? null : (JSON.parse(row.branding) as Branding),
    createdAt: row.created_at,
    supersededAt: row.superseded_at,
  };
}

const KEY_COLUMNS = `k.id, k.client_id, c.name AS client_name, k.type, k.hint, k.created_at, k.last_used_at, k.revoked_at`;
const REPORT_COLUMNS = `r.id, s.client_id, s.org_id, s.user_id, r.summary, r.details, r.provider, r.tool, r.created_at, r.resolved_at`;

function keyRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    clientId: row.client_id,
    clientName: row.client_name,
    type: row.type,
    hint: row.hint,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

function reportRecord(row: ReportRow): ReportRecord {
  return {
    id: row.id,
    scope: { clientId: row.client_id, orgId: row.org_id || null, userId: row.user_id || null },
    summary: row.summary,
    details: row.details,
    provider: row.provider,
    tool: row.tool,
    createdAt: row.created_at,
    resolvedAt: row.resolved_at,
  };
}

/** Scope columns never hold NULL (so the UNIQUE constraint holds): '' stands for "not set". */
function scopeColumns(scope: Scope): [string, string, string] {
  return [scope.clientId, scope.orgId ?? '', scope.userId ?? ''];
}

/**
 * The embedded default store: one SQLite file in WAL mode, foreign keys on, a busy timeout so the
 * CLI and a running server can share the file. better-sqlite3 is synchronous; each statement is
 * prepared once and answers in microseconds, so the async facade costs one microtask.
 */
export class SqliteStore implements Store {
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly scopeIds = new Map<string, string>();
  /** Rows read on every tool call (see {@link hotRead}), frozen, by statement and arguments. */
  private readonly hot = new Map<string, object>();
  /** The database state `hot` was read in: data_version (other connections) and total_changes (ours). */
  private hotState = { version: -1, changes: -1 };

  constructor(file: string) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    this.db.pragma('synchronous = NORMAL');
  }

  private stmt(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * A read of the per-call path (the key by its hash, the connection of a scope and provider),
   * answered from memory while nothing in the database changed: `PRAGMA data_version` moves when
   * another connection (the CLI, another server) commits, `total_changes()` when this one writes.
   * Checking both costs less than the lookups it saves, and a revocation or reconnect anywhere is
   * still seen by the next request. The same frozen object comes back while its row is unchanged,
   * so callers can remember work derived from it (ConnectionService keeps opened credentials).
   */
  private hotRead<T extends object>(key: string, read: () => T | undefined): T | undefined {
    const version = this.stmt('PRAGMA data_version').pluck().get() as number;
    const changes = this.stmt('SELECT total_changes()').pluck().get() as number;
    if (version !== this.hotState.version || changes !== this.hotState.changes) {
      this.hot.clear();
      this.hotState = { version, changes };
    }
    const cached = this.hot.get(key);
    if (cached) return cached as T;
    const value = read();
    if (value === undefined) return undefined;
    if (this.hot.size >= HOT_ROWS) this.hot.clear();
    this.hot.set(key, Object.freeze(value));
    return value;
  }

  migrate(): Promise<number[]> {
    this.db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    const applied = new Set(
      (this.db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map(
        (r) => r.version,
      ),
    );
    const now: number[] = [];
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      this.db
        .transaction(() => {
          this.db.exec(migration.sql);
          this.db
            .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
            .run(migration.version, migration.name, new Date().toISOString());
        })
        .immediate();
      now.push(migration.version);
    }
    return Promise.resolve(now);
  }

  ping(): Promise<boolean> {
    try {
      return Promise.resolve(this.stmt('SELECT 1 AS ok').get() !== undefined);
    } catch {
      return Promise.resolve(false);
    }
  }

  close(): Promise<void> {
    if (this.db.open) this.db.close();
    return Promise.resolve();
  }

  getMeta(key: string): Promise<string | undefined> {
    const row = this.stmt('SELECT value FROM meta WHERE key = ?').get(key) as { value: string } | undefined;
    return Promise.resolve(row?.value);
  }

  setMetaOnce(key: string, value: string): Promise<boolean> {
    const result = this.stmt('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING').run(
      key,
      value,
    );
    return Promise.resolve(result.changes === 1);
  }

  listHashSecrets(): Promise<HashSecretRecord[]> {
    return Promise.resolve(
      this.stmt('SELECT version, sealed FROM key_hash_secrets ORDER BY version').all() as HashSecretRecord[],
    );
  }

  insertHashSecret(secret: HashSecretRecord): Promise<boolean> {
    const result = this.stmt(
      'INSERT INTO key_hash_secrets (version, sealed, created_at) VALUES (?, ?, ?) ON CONFLICT (version) DO NOTHING',
    ).run(secret.version, secret.sealed, new Date().toISOString());
    return Promise.resolve(result.changes === 1);
  }

  createClient(name: string): Promise<ClientRecord> {
    const record = { id: newId('cli'), name, createdAt: new Date().toISOString() };
    this.stmt('INSERT INTO clients (id, name, created_at) VALUES (?, ?, ?)').run(
      record.id,
      record.name,
      record.createdAt,
    );
    return Promise.resolve(record);
  }

  findClientByName(name: string): Promise<ClientRecord | undefined> {
    const row = this.stmt('SELECT id, name, created_at AS createdAt FROM clients WHERE name = ?').get(name);
    return Promise.resolve(row as ClientRecord | undefined);
  }

  listClients(): Promise<ClientRecord[]> {
    return Promise.resolve(
      this.stmt(
        'SELECT id, name, created_at AS createdAt FROM clients ORDER BY name',
      ).all() as ClientRecord[],
    );
  }

  insertApiKey(key: NewApiKey): Promise<void> {
    this.stmt(
      'INSERT INTO api_keys (id, client_id, type, hash, hash_version, hint, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).run(key.id, key.clientId, key.type, key.hash, key.hashVersion, key.hint, new Date().toISOString());
    return Promise.resolve();
  }

  findApiKeyByHash(hashVersion: number, hash: string): Promise<ApiKeyRecord | undefined> {
    return Promise.resolve(
      this.hotRead(`key\u0000${hashVersion}\u0000${hash}`, () => {
        const row = this.stmt(
          `SELECT ${KEY_COLUMNS} FROM api_keys k JOIN clients c ON c.id = k.client_id WHERE k.hash_version = ? AND k.hash = ?`,
        ).get(hashVersion, hash) as KeyRow | undefined;
        return row && keyRecord(row);
      }),
    );
  }

  getApiKey(id: string): Promise<ApiKeyRecord | undefined> {
    const row = this.stmt(
      `SELECT ${KEY_COLUMNS} FROM api_keys k JOIN clients c ON c.id = k.client_id WHERE k.id = ?`,
    ).get(id) as KeyRow | undefined;
    return Promise.resolve(row && keyRecord(row));
  }

  listApiKeys(): Promise<ApiKeyRecord[]> {
    const rows = this.stmt(
      `SELECT ${KEY_COLUMNS} FROM api_keys k JOIN clients c ON c.id = k.client_id ORDER BY k.created_at, k.id`,
    ).all() as KeyRow[];
    return Promise.resolve(rows.map(keyRecord));
  }

  revokeApiKey(id: string, at: string): Promise<boolean> {
    const result = this.stmt('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(
      at,
      id,
    );
    return Promise.resolve(result.changes === 1);
  }

  keysRevokedSince(since: string): Promise<string[]> {
    const rows = this.stmt('SELECT id FROM api_keys WHERE revoked_at >= ?').all(since) as { id: string }[];
    return Promise.resolve(rows.map((r) => r.id));
  }

  touchApiKey(id: string, at: string): Promise<void> {
    this.stmt('UPDATE api_keys SET last_used_at = ? WHERE id = ?').run(at, id);
    return Promise.resolve();
  }

  ensureScope(scope: Scope): Promise<string> {
    const columns = scopeColumns(scope);
    const cacheKey = columns.join('\u0000');
    const cached = this.scopeIds.get(cacheKey);
    if (cached) return Promise.resolve(cached);
    this.stmt(
      'INSERT INTO scopes (id, client_id, org_id, user_id, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (client_id, org_id, user_id) DO NOTHING',
    ).run(newId('scp'), ...columns, new Date().toISOString());
    const row = this.stmt('SELECT id FROM scopes WHERE client_id = ? AND org_id = ? AND user_id = ?').get(
      ...columns,
    ) as {
      id: string;
    };
    this.scopeIds.set(cacheKey, row.id);
    return Promise.resolve(row.id);
  }

  async insertReport(scope: Scope, report: NewReport): Promise<ReportRecord> {
    const scopeId = await this.ensureScope(scope);
    const record: ReportRecord = {
      ...report,
      id: newId('rep'),
      scope,
      createdAt: new Date().toISOString(),
      resolvedAt: null,
    };
    this.stmt(
      'INSERT INTO reports (id, scope_id, summary, details, provider, tool, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).run(record.id, scopeId, record.summary, record.details, record.provider, record.tool, record.createdAt);
    return record;
  }

  listReportsForScope(scope: Scope): Promise<ReportRecord[]> {
    const rows = this.stmt(
      `SELECT ${REPORT_COLUMNS} FROM reports r JOIN scopes s ON s.id = r.scope_id
       WHERE s.client_id = ? AND s.org_id = ? AND s.user_id = ? ORDER BY r.created_at DESC, r.id`,
    ).all(...scopeColumns(scope)) as ReportRow[];
    return Promise.resolve(rows.map(reportRecord));
  }

  listReports(filter: { status?: 'open' | 'resolved' }): Promise<ReportRecord[]> {
    const where =
      filter.status === 'open'
        ? 'WHERE r.resolved_at IS NULL'
        : filter.status === 'resolved'
          ? 'WHERE r.resolved_at IS NOT NULL'
          : '';
    const rows = this.stmt(
      `SELECT ${REPORT_COLUMNS} FROM reports r JOIN scopes s ON s.id = r.scope_id ${where} ORDER BY r.created_at DESC, r.id`,
    ).all() as ReportRow[];
    return Promise.resolve(rows.map(reportRecord));
  }

  resolveReport(id: string, at: string): Promise<boolean> {
    const result = this.stmt('UPDATE reports SET resolved_at = ? WHERE id = ? AND resolved_at IS NULL').run(
      at,
      id,
    );
    return Promise.resolve(result.changes === 1);
  }
  listConnections(scope: Scope): Promise<ConnectionRecord[]> {
    const rows = this.stmt(
      `SELECT ${CONNECTION_COLUMNS} FROM connections c JOIN scopes s ON s.id = c.scope_id WHERE ${SCOPE_MATCH} ORDER BY c.provider`,
    ).all(...scopeColumns(scope)) as ConnectionRow[];
    return Promise.resolve(rows.map(connectionRecord));
  }

  getConnection(scope: Scope, provider: string): Promise<ConnectionRecord | undefined> {
    const columns = scopeColumns(scope);
    return Promise.resolve(
      this.hotRead(`connection\u0000${columns.join('\u0000')}\u0000${provider}`, () => {
        const row = this.stmt(
          `SELECT ${CONNECTION_COLUMNS} FROM connections c JOIN scopes s ON s.id = c.scope_id WHERE ${SCOPE_MATCH} AND c.provider = ?`,
        ).get(...columns, provider) as ConnectionRow | undefined;
        if (!row) return undefined;
        const record = connectionRecord(row);
        Object.freeze(record.fields);
        return record;
      }),
    );
  }

  async putConnection(scope: Scope, c: NewConnection): Promise<void> {
    const scopeId = await this.ensureScope(scope);
    const now = new Date().toISOString();
    this.stmt(
      `INSERT INTO connections (id, scope_id, provider, state, fields, account, credentials, oauth_app, expires_at, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (scope_id, provider) DO UPDATE SET
         id = excluded.id, state = excluded.state, fields = excluded.fields, account = excluded.account,
         credentials = excluded.credentials, oauth_app = excluded.oauth_app, expires_at = excluded.expires_at,
         updated_at = excluded.updated_at`,
    ).run(
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

  deleteConnection(scope: Scope, provider: string): Promise<boolean> {
    const result = this.stmt(
      `DELETE FROM connections WHERE provider = ? AND scope_id = (SELECT s.id FROM scopes s WHERE ${SCOPE_MATCH})`,
    ).run(provider, ...scopeColumns(scope));
    return Promise.resolve(result.changes === 1);
  }

  setConnectionState(scope: Scope, provider: string, state: ConnectionState): Promise<boolean> {
    const result = this.stmt(
      `UPDATE connections SET state = ?, updated_at = ? WHERE provider = ? AND scope_id = (SELECT s.id FROM scopes s WHERE ${SCOPE_MATCH})`,
    ).run(state, new Date().toISOString(), provider, ...scopeColumns(scope));
    return Promise.resolve(result.changes === 1);
  }

  async createLink(tokenHash: string, link: LinkRecord): Promise<void> {
    const scopeId = await this.ensureScope(link.scope);
    this.stmt(
      'INSERT INTO links (token_hash, scope_id, provider, purpose, payload, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ).run(
      tokenHash,
      scopeId,
      link.provider,
      link.purpose,
      link.payload,
      link.expiresAt,
      new Date().toISOString(),
    );
  }

  peekLink(tokenHash: string, now: string): Promise<LinkRecord | undefined> {
    const row = this.stmt(
      `SELECT s.client_id, s.org_id, s.user_id, l.provider, l.purpose, l.payload, l.expires_at
       FROM links l JOIN scopes s ON s.id = l.scope_id WHERE l.token_hash = ? AND l.expires_at > ?`,
    ).get(tokenHash, now) as LinkRow | undefined;
    return Promise.resolve(row && linkRecord(row));
  }

  consumeLink(tokenHash: string, now: string): Promise<LinkRecord | undefined> {
    // One transaction: two concurrent uses of a link cannot both get it.
    const take = this.db.transaction((): LinkRow | undefined => {
      const row = this.stmt(
        `SELECT s.client_id, s.org_id, s.user_id, l.provider, l.purpose, l.payload, l.expires_at
         FROM links l JOIN scopes s ON s.id = l.scope_id WHERE l.token_hash = ? AND l.expires_at > ?`,
      ).get(tokenHash, now) as LinkRow | undefined;
      if (row) this.stmt('DELETE FROM links WHERE token_hash = ?').run(tokenHash);
      return row;
    });
    const row = take.immediate();
    return Promise.resolve(row && linkRecord(row));
  }

  purgeExpiredLinks(now: string): Promise<number> {
    return Promise.resolve(this.stmt('DELETE FROM links WHERE expires_at <= ?').run(now).changes);
  }

  async addConnectionEvent(
    scope: Scope,
    provider: string,
    event: ConnectionEvent,
    detail?: string,
  ): Promise<void> {
    const scopeId = await this.ensureScope(scope);
    this.stmt(
      'INSERT INTO connection_events (id, scope_id, provider, event, detail, created_at) VALUES (?, ?, ?, ?, ?, ?)',
    ).run(newId('evt'), scopeId, provider, event, detail ?? null, new Date().toISOString());
  }
  listExpiringConnections(before: string): Promise<ExpiringConnection[]> {
    const rows = this.stmt(
      `SELECT s.client_id, s.org_id, s.user_id, c.provider, c.expires_at FROM connections c JOIN scopes s ON s.id = c.scope_id
       WHERE c.state = 'connected' AND c.expires_at IS NOT NULL AND c.expires_at < ? ORDER BY c.expires_at`,
    ).all(before) as {
      client_id: string;
      org_id: string;
      user_id: string;
      provider: string;
      expires_at: string;
    }[];
    return Promise.resolve(
      rows.map((r) => ({
        scope: { clientId: r.client_id, orgId: r.org_id || null, userId: r.user_id || null },
        provider: r.provider,
        expiresAt: r.expires_at,
      })),
    );
  }

  swapConnectionCredentials(
    scope: Scope,
    provider: string,
    expected: string,
    next: { credentials: string; expiresAt: string | null },
  ): Promise<boolean> {
    const result = this.stmt(
      `UPDATE connections SET credentials = ?, expires_at = ?, state = 'connected', updated_at = ?
       WHERE provider = ? AND credentials = ? AND scope_id = (SELECT s.id FROM scopes s WHERE ${SCOPE_MATCH})`,
    ).run(
      next.credentials,
      next.expiresAt,
      new Date().toISOString(),
      provider,
      expected,
      ...scopeColumns(scope),
    );
    return Promise.resolve(result.changes === 1);
  }

  putOAuthApp(app: Omit<OAuthAppRecord, 'createdAt' | 'supersededAt'>): Promise<void> {
    const now = new Date().toISOString();
    const owner = [app.provider, app.clientId ?? '', app.orgId ?? ''];
    this.db
      .transaction(() => {
        this.stmt(
          'UPDATE oauth_apps SET superseded_at = ? WHERE provider = ? AND client_id = ? AND org_id = ? AND superseded_at IS NULL',
        ).run(now, ...owner);
        this.stmt(
          `INSERT INTO oauth_apps (id, provider, client_id, org_id, oauth_client_id, client_secret, branding, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          app.id,
          ...owner,
          app.oauthClientId,
          app.clientSecret,
          app.branding ? JSON.stringify(app.branding) : null,
          now,
        );
      })
      .immediate();
    return Promise.resolve();
  }

  setOAuthAppBranding(id: string, branding: Branding | null): Promise<boolean> {
    const result = this.stmt('UPDATE oauth_apps SET branding = ? WHERE id = ?').run(
      branding ? JSON.stringify(branding) : null,
      id,
    );
    return Promise.resolve(result.changes === 1);
  }

  currentOAuthApp(
    provider: string,
    owner: { clientId: string; orgId: string } | null,
  ): Promise<OAuthAppRecord | undefined> {
    const row = this.stmt(
      'SELECT * FROM oauth_apps WHERE provider = ? AND client_id = ? AND org_id = ? AND superseded_at IS NULL',
    ).get(provider, owner?.clientId ?? '', owner?.orgId ?? '') as OAuthAppRow | undefined;
    return Promise.resolve(row && oauthAppRecord(row));
  }

  getOAuthApp(id: string): Promise<OAuthAppRecord | undefined> {
    const row = this.stmt('SELECT * FROM oauth_apps WHERE id = ?').get(id) as OAuthAppRow | undefined;
    return Promise.resolve(row && oauthAppRecord(row));
  }

  listOAuthApps(): Promise<OAuthAppRecord[]> {
    const rows = this.stmt(
      'SELECT * FROM oauth_apps ORDER BY provider, client_id, org_id, created_at',
    ).all() as OAuthAppRow[];
    return Promise.resolve(rows.map(oauthAppRecord));
  }

  resealAll(reseal: (item: SealedItem) => string): Promise<number> {
    const run = this.db.transaction((): number => {
      let count = 0;
      const secrets = this.db.prepare('SELECT version, sealed FROM key_hash_secrets').all() as {
        version: number;
        sealed: string;
      }[];
      const updateSecret = this.db.prepare('UPDATE key_hash_secrets SET sealed = ? WHERE version = ?');
      for (const row of secrets) {
        updateSecret.run(reseal({ kind: 'hash_secret', ...row }), row.version);
        count++;
      }
      const connections = this.db
        .prepare('SELECT id, scope_id, provider, credentials FROM connections')
        .all() as {
        id: string;
        scope_id: string;
        provider: string;
        credentials: string;
      }[];
      const updateConnection = this.db.prepare('UPDATE connections SET credentials = ? WHERE id = ?');
      for (const row of connections) {
        const item: SealedItem = {
          kind: 'connection',
          scopeId: row.scope_id,
          provider: row.provider,
          connectionId: row.id,
          sealed: row.credentials,
        };
        updateConnection.run(reseal(item), row.id);
        count++;
      }
      const apps = this.db.prepare('SELECT id, provider, client_secret FROM oauth_apps').all() as {
        id: string;
        provider: string;
        client_secret: string;
      }[];
      const updateApp = this.db.prepare('UPDATE oauth_apps SET client_secret = ? WHERE id = ?');
      for (const row of apps) {
        updateApp.run(
          reseal({ kind: 'oauth_app', appId: row.id, provider: row.provider, sealed: row.client_secret }),
          row.id,
        );
        count++;
      }
      return count;
    });
    return Promise.resolve(run.immediate());
  }

  getAdminPasswordHash(): Promise<string | undefined> {
    const row = this.stmt("SELECT password_hash FROM admin_credentials WHERE name = 'admin'").get() as
      { password_hash: string } | undefined;
    return Promise.resolve(row?.password_hash);
  }

  setAdminPasswordHash(hash: string, options: { onlyIfUnset: boolean }): Promise<boolean> {
    const now = new Date().toISOString();
    if (options.onlyIfUnset) {
      const result = this.stmt(
        "INSERT INTO admin_credentials (name, password_hash, updated_at) VALUES ('admin', ?, ?) ON CONFLICT (name) DO NOTHING",
      ).run(hash, now);
      return Promise.resolve(result.changes === 1);
    }
    this.db
      .transaction(() => {
        this.stmt(
          `INSERT INTO admin_credentials (name, password_hash, updated_at) VALUES ('admin', ?, ?)
           ON CONFLICT (name) DO UPDATE SET password_hash = excluded.password_hash, updated_at = excluded.updated_at`,
        ).run(hash, now);
        this.stmt('DELETE FROM dashboard_sessions').run();
        this.stmt('DELETE FROM signin_failures').run();
      })
      .immediate();
    return Promise.resolve(true);
  }

  createDashboardSession(idHash: string, session: DashboardSessionRecord): Promise<void> {
    this.stmt(
      'INSERT INTO dashboard_sessions (id_hash, csrf_token, created_at, expires_at) VALUES (?, ?, ?, ?)',
    ).run(idHash, session.csrfToken, session.createdAt, session.expiresAt);
    return Promise.resolve();
  }

  getDashboardSession(idHash: string, now: string): Promise<DashboardSessionRecord | undefined> {
    const row = this.stmt(
      `SELECT csrf_token AS csrfToken, created_at AS createdAt, expires_at AS expiresAt
       FROM dashboard_sessions WHERE id_hash = ? AND expires_at > ?`,
    ).get(idHash, now);
    return Promise.resolve(row as DashboardSessionRecord | undefined);
  }

  deleteDashboardSession(idHash: string): Promise<void> {
    this.stmt('DELETE FROM dashboard_sessions WHERE id_hash = ?').run(idHash);
    return Promise.resolve();
  }

  purgeDashboard(now: string, failuresBefore: string): Promise<void> {
    this.stmt('DELETE FROM dashboard_sessions WHERE expires_at <= ?').run(now);
    this.stmt('DELETE FROM signin_failures WHERE created_at < ?').run(failuresBefore);
    return Promise.resolve();
  }

  addSignInFailure(source: string, at: string): Promise<void> {
    this.stmt('INSERT INTO signin_failures (id, source, created_at) VALUES (?, ?, ?)').run(
      newId('fail'),
      source,
      at,
    );
    return Promise.resolve();
  }

  listSignInFailures(since: string): Promise<{ source: string; at: string }[]> {
    return Promise.resolve(
      this.stmt(
        'SELECT source, created_at AS at FROM signin_failures WHERE created_at >= ? ORDER BY created_at, id',
      ).all(since) as { source: string; at: string }[],
    );
  }

  clearSignInFailures(source: string): Promise<void> {
    this.stmt('DELETE FROM signin_failures WHERE source = ?').run(source);
    return Promise.resolve();
  }

  listOrganizations(): Promise<OrganizationRecord[]> {
    // One scope row per (client, org, user): counting rows counts distinct users.
    return Promise.resolve(
      this.stmt(
        `SELECT s.client_id AS clientId, c.name AS clientName, s.org_id AS orgId, COUNT(*) AS users,
           MIN(s.created_at) AS firstSeenAt
         FROM scopes s JOIN clients c ON c.id = s.client_id
         WHERE s.org_id <> ''
         GROUP BY s.client_id, c.name, s.org_id
         ORDER BY c.name, s.org_id`,
      ).all() as OrganizationRecord[],
    );
  }

  countConnections(): Promise<ConnectionCount[]> {
    const rows = this.stmt(
      `SELECT s.client_id, c.name AS client_name, s.org_id, cn.provider, cn.state, COUNT(*) AS count
       FROM connections cn JOIN scopes s ON s.id = cn.scope_id JOIN clients c ON c.id = s.client_id
       GROUP BY s.client_id, c.name, s.org_id, cn.provider, cn.state
       ORDER BY c.name, s.org_id, cn.provider, cn.state`,
    ).all() as {
      client_id: string;
      client_name: string;
      org_id: string;
      provider: string;
      state: ConnectionState;
      count: number;
    }[];
    return Promise.resolve(
      rows.map((r) => ({
        clientId: r.client_id,
        clientName: r.client_name,
        orgId: r.org_id || null,
        provider: r.provider,
        state: r.state,
        count: r.count,
      })),
    );
  }

  listConnectionEvents(limit: number): Promise<ConnectionEventRecord[]> {
    const rows = this.stmt(
      `SELECT s.client_id, c.name AS client_name, s.org_id, s.user_id, e.provider, e.event, e.detail, e.created_at
       FROM connection_events e JOIN scopes s ON s.id = e.scope_id JOIN clients c ON c.id = s.client_id
       ORDER BY e.created_at DESC, e.id DESC LIMIT ?`,
    ).all(limit) as {
      client_id: string;
      client_name: string;
      org_id: string;
      user_id: string;
      provider: string;
      event: ConnectionEvent;
      detail: string | null;
      created_at: string;
    }[];
    return Promise.resolve(
      rows.map((r) => ({
        scope: { clientId: r.client_id, orgId: r.org_id || null, userId: r.user_id || null },
        clientName: r.client_name,
        provider: r.provider,
        event: r.event,
        detail: r.detail,
        createdAt: r.created_at,
      })),
    );
  }
}

/** Opens the store named by TOOLGATE_DATABASE_URL (`sqlite:<path>`). */
export function openStore(databaseUrl: string): Store {
  return new SqliteStore(databaseUrl.slice('sqlite:'.length));
}
