import { oauthAppRecord, type OAuthAppRow } from '../rows.js';
import type { Branding, OAuthAppRecord, OAuthAppStore } from '../types.js';
import type { SqliteDb } from './db.js';

export class SqliteOAuthApps implements OAuthAppStore {
  constructor(private readonly sql: SqliteDb) {}

  async put(app: Omit<OAuthAppRecord, 'createdAt' | 'supersededAt'>): Promise<void> {
    const now = new Date().toISOString();
    const owner = [app.provider, app.clientId ?? '', app.orgId ?? ''];
    this.sql.transaction(() => {
      this.sql.run(
        'UPDATE oauth_apps SET superseded_at = ? WHERE provider = ? AND client_id = ? AND org_id = ? AND superseded_at IS NULL',
        now,
        ...owner,
      );
      this.sql.run(
        `INSERT INTO oauth_apps (id, provider, client_id, org_id, oauth_client_id, client_secret, branding, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        app.id,
        ...owner,
        app.oauthClientId,
        app.clientSecret,
        app.branding ? JSON.stringify(app.branding) : null,
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
  ): Promise<OAuthAppRecord | undefined> {
    const row = this.sql.one<OAuthAppRow>(
      'SELECT * FROM oauth_apps WHERE provider = ? AND client_id = ? AND org_id = ? AND superseded_at IS NULL',
      provider,
      owner?.clientId ?? '',
      owner?.orgId ?? '',
    );
    return row && oauthAppRecord(row);
  }

  async get(id: string): Promise<OAuthAppRecord | undefined> {
    const row = this.sql.one<OAuthAppRow>('SELECT * FROM oauth_apps WHERE id = ?', id);
    return row && oauthAppRecord(row);
  }

  async list(): Promise<OAuthAppRecord[]> {
    return this.sql
      .all<OAuthAppRow>('SELECT * FROM oauth_apps ORDER BY provider, client_id, org_id, created_at')
      .map(oauthAppRecord);
  }
}
