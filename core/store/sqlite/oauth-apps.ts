import { oauthAppRecord, type OAuthAppRow } from '../rows.js';
import type { Branding, OAuthAppRecord, OAuthAppStore } from '../types.js';
import type { SqliteDb } from './db.js';

export class SqliteOAuthApps implements OAuthAppStore {
  constructor(private readonly sql: SqliteDb) {}

  async put(app: Omit<OAuthAppRecord, 'createdAt' | 'supersededAt'>): Promise<void> {
    const now = new Date().toISOString();
    const owner = [app.provider, app.clientId ?? '', app.orgId ?? '', app.server?.issuer ?? ''];
    this.sql.transaction(() => {
      this.sql.run(
        'UPDATE oauth_apps SET superseded_at = ? WHERE provider = ? AND client_id = ? AND org_id = ? AND issuer = ? AND superseded_at IS NULL',
        now,
        ...owner,
      );
      this.sql.run(
        `INSERT INTO oauth_apps (id, provider, client_id, org_id, issuer, oauth_client_id, client_secret, branding, server, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        app.id,
        ...owner,
        app.oauthClientId,
        app.clientSecret,
        app.branding ? JSON.stringify(app.branding) : null,
        app.server ? JSON.stringify(app.server) : null,
        now,
      );
    });
  }

  async setBranding(id: string, branding: Branding | null): Promise<boolean> {
    return this.sql.changedOne(
      'UPDATE oauth_apps SET branding = ? WHERE id = ?',
      branding ? JSON.stringify(branding) : null,
      id,
    );
  }

  async current(
    provider: string,
    owner: { clientId: string; orgId: string } | null,
    issuer = '',
  ): Promise<OAuthAppRecord | undefined> {
    const row = this.sql.one<OAuthAppRow>(
      'SELECT * FROM oauth_apps WHERE provider = ? AND client_id = ? AND org_id = ? AND issuer = ? AND superseded_at IS NULL',
      provider,
      owner?.clientId ?? '',
      owner?.orgId ?? '',
      issuer,
    );
    return row && oauthAppRecord(row);
  }

  async get(id: string): Promise<OAuthAppRecord | undefined> {
    const row = this.sql.one<OAuthAppRow>('SELECT * FROM oauth_apps WHERE id = ?', id);
    return row && oauthAppRecord(row);
  }

  async supersede(id: string): Promise<boolean> {
    return this.sql.changedOne(
      'UPDATE oauth_apps SET superseded_at = ? WHERE id = ? AND superseded_at IS NULL',
      new Date().toISOString(),
      id,
    );
  }

  async list(): Promise<OAuthAppRecord[]> {
    return this.sql
      .all<OAuthAppRow>(
        "SELECT * FROM oauth_apps WHERE issuer = '' ORDER BY provider, client_id, org_id, created_at",
      )
      .map(oauthAppRecord);
  }
}
