import { oauthAppRecord, type OAuthAppRow } from '../rows.js';
import type { Branding, OAuthAppRecord, OAuthAppStore } from '../types.js';
import type { PostgresDb } from './db.js';

export class PostgresOAuthApps implements OAuthAppStore {
  constructor(private readonly sql: PostgresDb) {}

  async put(app: Omit<OAuthAppRecord, 'createdAt' | 'supersededAt'>): Promise<void> {
    const now = new Date().toISOString();
    const owner = [app.provider, app.clientId ?? '', app.orgId ?? '', app.server?.issuer ?? ''];
    await this.sql.transaction(async (tx) => {
      // Puts take turns: two concurrent puts for one owner would otherwise each supersede only the
      // rows committed before them, and leave two current apps. An advisory lock rather than a table
      // lock: readers, setBranding and resealAll's row locks do not wait for it, nor it for them.
      await tx.lock('oauthAppPut');
      await tx.run(
        'UPDATE oauth_apps SET superseded_at = $1 WHERE provider = $2 AND client_id = $3 AND org_id = $4 AND issuer = $5 AND superseded_at IS NULL',
        now,
        ...owner,
      );
      await tx.run(
        `INSERT INTO oauth_apps (id, provider, client_id, org_id, issuer, oauth_client_id, client_secret, branding, server, created_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
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
      'UPDATE oauth_apps SET branding = $1 WHERE id = $2',
      branding ? JSON.stringify(branding) : null,
      id,
    );
  }

  async current(
    provider: string,
    owner: { clientId: string; orgId: string } | null,
    issuer = '',
  ): Promise<OAuthAppRecord | undefined> {
    const row = await this.sql.one<OAuthAppRow>(
      'SELECT * FROM oauth_apps WHERE provider = $1 AND client_id = $2 AND org_id = $3 AND issuer = $4 AND superseded_at IS NULL',
      provider,
      owner?.clientId ?? '',
      owner?.orgId ?? '',
      issuer,
    );
    return row && oauthAppRecord(row);
  }

  async get(id: string): Promise<OAuthAppRecord | undefined> {
    const row = await this.sql.one<OAuthAppRow>('SELECT * FROM oauth_apps WHERE id = $1', id);
    return row && oauthAppRecord(row);
  }

  async supersede(id: string): Promise<boolean> {
    return this.sql.changedOne(
      'UPDATE oauth_apps SET superseded_at = $1 WHERE id = $2 AND superseded_at IS NULL',
      new Date().toISOString(),
      id,
    );
  }

  async list(): Promise<OAuthAppRecord[]> {
    return (
      await this.sql.all<OAuthAppRow>(
        "SELECT * FROM oauth_apps WHERE issuer = '' ORDER BY provider, client_id, org_id, created_at",
      )
    ).map(oauthAppRecord);
  }
}
