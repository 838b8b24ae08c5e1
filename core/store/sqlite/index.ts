import { SqlAudit } from '../audit.js';
import { SqlFrontDoor } from '../front-door.js';
import { SqlIdentityProviders } from '../identity-providers.js';
import { MIGRATIONS } from '../migrations.js';
import type { SealedItem, Store } from '../types.js';
import { SqliteConnections } from './connections.js';
import { SqliteDashboard } from './dashboard.js';
import { SqliteDb, type SqliteOptions } from './db.js';
import { SqliteKeys } from './keys.js';
import { SqliteLinks } from './links.js';
import { SqliteMeta } from './meta.js';
import { SqliteOAuthApps } from './oauth-apps.js';
import { SqlitePolicies } from './policies.js';
import { SqliteReports } from './reports.js';
import { SqliteScopes } from './scopes.js';

/**
 * The embedded default store: one SQLite file (TOOLGATE_DATABASE_URL `sqlite:<path>`, by default
 * in the data dir), one port per aggregate over one shared connection (see db.ts).
 */
export class SqliteStore implements Store {
  private readonly sql: SqliteDb;
  readonly meta: SqliteMeta;
  readonly keys: SqliteKeys;
  readonly scopes: SqliteScopes;
  readonly reports: SqliteReports;
  readonly connections: SqliteConnections;
  readonly links: SqliteLinks;
  readonly oauthApps: SqliteOAuthApps;
  readonly dashboard: SqliteDashboard;
  readonly policies: SqlitePolicies;
  readonly frontDoor: SqlFrontDoor;
  readonly identityProviders: SqlIdentityProviders;
  readonly audit: SqlAudit;

  constructor(file: string, options: SqliteOptions = {}) {
    this.sql = new SqliteDb(file, options);
    this.meta = new SqliteMeta(this.sql);
    this.keys = new SqliteKeys(this.sql);
    this.scopes = new SqliteScopes(this.sql);
    this.reports = new SqliteReports(this.sql);
    this.connections = new SqliteConnections(this.sql);
    this.links = new SqliteLinks(this.sql);
    this.oauthApps = new SqliteOAuthApps(this.sql);
    this.dashboard = new SqliteDashboard(this.sql);
    this.policies = new SqlitePolicies(this.sql);
    this.frontDoor = new SqlFrontDoor(this.sql.runner());
    this.identityProviders = new SqlIdentityProviders(this.sql.runner());
    this.audit = new SqlAudit(this.sql.runner());
  }

  async migrate(): Promise<number[]> {
    this.sql.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    const applied = new Set(
      this.sql.all<{ version: number }>('SELECT version FROM schema_migrations').map((r) => r.version),
    );
    const now: number[] = [];
    for (const migration of MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      this.sql.transaction(() => {
        this.sql.exec(migration.sql);
        this.sql.run(
          'INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)',
          migration.version,
          migration.name,
          new Date().toISOString(),
        );
      });
      now.push(migration.version);
    }
    return now;
  }

  async ping(): Promise<boolean> {
    try {
      return this.sql.one('SELECT 1 AS ok') !== undefined;
    } catch {
      return false;
    }
  }

  close(): Promise<void> {
    return this.sql.close();
  }

  async resealAll(reseal: (item: SealedItem) => string): Promise<number> {
    const sql = this.sql;
    return sql.transaction((): number => {
      let count = 0;
      for (const row of sql.all<{ version: number; sealed: string }>(
        'SELECT version, sealed FROM key_hash_secrets',
      )) {
        sql.run(
          'UPDATE key_hash_secrets SET sealed = ? WHERE version = ?',
          reseal({ kind: 'hash_secret', ...row }),
          row.version,
        );
        count++;
      }
      const connections = sql.all<{ id: string; scope_id: string; provider: string; credentials: string }>(
        'SELECT id, scope_id, provider, credentials FROM connections',
      );
      for (const row of connections) {
        const item: SealedItem = {
          kind: 'connection',
          scopeId: row.scope_id,
          provider: row.provider,
          connectionId: row.id,
          sealed: row.credentials,
        };
        sql.run('UPDATE connections SET credentials = ? WHERE id = ?', reseal(item), row.id);
        count++;
      }
      for (const row of sql.all<{ id: string; provider: string; client_secret: string }>(
        'SELECT id, provider, client_secret FROM oauth_apps',
      )) {
        const item: SealedItem = {
          kind: 'oauth_app',
          appId: row.id,
          provider: row.provider,
          sealed: row.client_secret,
        };
        sql.run('UPDATE oauth_apps SET client_secret = ? WHERE id = ?', reseal(item), row.id);
        count++;
      }
      for (const row of sql.all<{ key_id: string; client_secret: string }>(
        'SELECT key_id, client_secret FROM identity_providers',
      )) {
        const item: SealedItem = { kind: 'identity_provider', keyId: row.key_id, sealed: row.client_secret };
        sql.run('UPDATE identity_providers SET client_secret = ? WHERE key_id = ?', reseal(item), row.key_id);
        count++;
      }
      return count;
    });
  }
}
