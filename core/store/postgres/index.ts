import { SqlAudit } from '../audit.js';
import { SqlFrontDoor } from '../front-door.js';
import { SqlIdentityProviders } from '../identity-providers.js';
import type { SealedItem, Store } from '../types.js';
import { PostgresConnections } from './connections.js';
import { PostgresDashboard } from './dashboard.js';
import { PostgresDb, type PostgresOptions } from './db.js';
import { PostgresKeys } from './keys.js';
import { PostgresLinks } from './links.js';
import { PostgresMeta } from './meta.js';
import { MIGRATIONS } from './migrations.js';
import { PostgresOAuthApps } from './oauth-apps.js';
import { PostgresPolicies } from './policies.js';
import { PostgresReports } from './reports.js';
import { PostgresScopes } from './scopes.js';

export type { PostgresOptions } from './db.js';

/**
 * The store of a deployment that scales out: one PostgreSQL database (TOOLGATE_DATABASE_URL
 * `postgres://…` or `postgresql://…`) shared by every replica and the CLI, one port per aggregate
 * over one connection pool (see db.ts).
 */
export class PostgresStore implements Store {
  private readonly sql: PostgresDb;
  readonly meta: PostgresMeta;
  readonly keys: PostgresKeys;
  readonly scopes: PostgresScopes;
  readonly reports: PostgresReports;
  readonly connections: PostgresConnections;
  readonly links: PostgresLinks;
  readonly oauthApps: PostgresOAuthApps;
  readonly dashboard: PostgresDashboard;
  readonly policies: PostgresPolicies;
  readonly frontDoor: SqlFrontDoor;
  readonly identityProviders: SqlIdentityProviders;
  readonly audit: SqlAudit;

  constructor(url: string, options: PostgresOptions = {}) {
    this.sql = new PostgresDb(url, options);
    this.meta = new PostgresMeta(this.sql);
    this.keys = new PostgresKeys(this.sql);
    this.scopes = new PostgresScopes(this.sql);
    this.reports = new PostgresReports(this.sql);
    this.connections = new PostgresConnections(this.sql);
    this.links = new PostgresLinks(this.sql);
    this.oauthApps = new PostgresOAuthApps(this.sql);
    this.dashboard = new PostgresDashboard(this.sql);
    this.policies = new PostgresPolicies(this.sql);
    this.frontDoor = new SqlFrontDoor(this.sql.runner());
    this.identityProviders = new SqlIdentityProviders(this.sql.runner());
    this.audit = new SqlAudit(this.sql.runner());
  }

  /**
   * Applies pending migrations, each in a transaction of its own. Every replica runs this when it
   * starts, often at the same moment: each transaction first takes the migration lock, and only then
   * reads what is applied, so the processes take turns and each migration runs exactly once.
   */
  async migrate(): Promise<number[]> {
    const applied: number[] = [];
    for (;;) {
      const version = await this.sql.transaction(async (tx) => {
        await tx.lock('migrate');
        // Under the lock: two processes creating the table at once would collide in the catalog.
        // Looked up first, because CREATE TABLE IF NOT EXISTS needs the right to create even when
        // the table exists: a role without it (the schema migrated by another) still starts.
        const table = await tx.one<{ found: string | null }>(
          "SELECT to_regclass('schema_migrations') AS found",
        );
        if (!table?.found) {
          await tx.run(
            'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
          );
        }
        const done = new Set(
          (await tx.all<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version),
        );
        const next = MIGRATIONS.find((migration) => !done.has(migration.version));
        if (!next) return undefined;
        await tx.exec(next.sql);
        await tx.run(
          'INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)',
          next.version,
          next.name,
          new Date().toISOString(),
        );
        return next.version;
      });
      if (version === undefined) return applied;
      applied.push(version);
    }
  }

  async ping(): Promise<boolean> {
    try {
      return (await this.sql.one('SELECT 1 AS ok')) !== undefined;
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await this.sql.close();
  }

  async resealAll(reseal: (item: SealedItem) => string): Promise<number> {
    return this.sql.transaction(async (tx) => {
      // FOR UPDATE: a refresh (swapCredentials) committing between this read and the write below
      // would otherwise be overwritten by the re-sealed old value; it waits, then finds its expected
      // value gone. ORDER BY: two rotations lock rows in the same order, so neither deadlocks.
      const secrets = await tx.all<{ version: number; sealed: string }>(
        'SELECT version, sealed FROM key_hash_secrets ORDER BY version FOR UPDATE',
      );
      const connections = await tx.all<{
        id: string;
        scope_id: string;
        provider: string;
        credentials: string;
      }>('SELECT id, scope_id, provider, credentials FROM connections ORDER BY id FOR UPDATE');
      const apps = await tx.all<{ id: string; provider: string; client_secret: string }>(
        'SELECT id, provider, client_secret FROM oauth_apps ORDER BY id FOR UPDATE',
      );
      const idps = await tx.all<{ key_id: string; client_secret: string }>(
        'SELECT key_id, client_secret FROM identity_providers ORDER BY key_id FOR UPDATE',
      );
      // A throwing `reseal` rejects the transaction before anything is written: nothing changes.
      const resealedSecrets = secrets.map((row) => reseal({ kind: 'hash_secret', ...row }));
      const resealedConnections = connections.map((row) =>
        reseal({
          kind: 'connection',
          scopeId: row.scope_id,
          provider: row.provider,
          connectionId: row.id,
          sealed: row.credentials,
        }),
      );
      const resealedApps = apps.map((row) =>
        reseal({ kind: 'oauth_app', appId: row.id, provider: row.provider, sealed: row.client_secret }),
      );
      const resealedIdps = idps.map((row) =>
        reseal({ kind: 'identity_provider', keyId: row.key_id, sealed: row.client_secret }),
      );
      // One UPDATE per table, whatever the number of rows (one round trip each).
      await tx.run(
        `UPDATE key_hash_secrets k SET sealed = v.sealed
         FROM unnest($1::integer[], $2::text[]) AS v(version, sealed) WHERE k.version = v.version`,
        secrets.map((row) => row.version),
        resealedSecrets,
      );
      await tx.run(
        `UPDATE connections c SET credentials = v.sealed
         FROM unnest($1::text[], $2::text[]) AS v(id, sealed) WHERE c.id = v.id`,
        connections.map((row) => row.id),
        resealedConnections,
      );
      await tx.run(
        `UPDATE oauth_apps a SET client_secret = v.sealed
         FROM unnest($1::text[], $2::text[]) AS v(id, sealed) WHERE a.id = v.id`,
        apps.map((row) => row.id),
        resealedApps,
      );
      await tx.run(
        `UPDATE identity_providers i SET client_secret = v.sealed
         FROM unnest($1::text[], $2::text[]) AS v(key_id, sealed) WHERE i.key_id = v.key_id`,
        idps.map((row) => row.key_id),
        resealedIdps,
      );
      return secrets.length + connections.length + apps.length + idps.length;
    });
  }
}
