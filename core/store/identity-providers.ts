import type { SqlRunner } from './statements.js';
import type { IdentityProviderRecord, IdentityProviderStore, NewIdentityProvider } from './types.js';

interface IdpRow {
  key_id: string;
  client_id: string;
  name: string;
  display_name: string;
  issuer: string;
  oauth_client_id: string;
  client_secret: string;
  user_claim: string;
  org_claim: string | null;
  created_at: string;
  updated_at: string;
}

const IDP = `SELECT i.key_id, k.client_id, i.name, i.display_name, i.issuer, i.oauth_client_id, i.client_secret,
  i.user_claim, i.org_claim, i.created_at, i.updated_at
  FROM identity_providers i JOIN api_keys k ON k.id = i.key_id`;

function idp(row: IdpRow): IdentityProviderRecord {
  return {
    keyId: row.key_id,
    clientId: row.client_id,
    name: row.name,
    displayName: row.display_name,
    issuer: row.issuer,
    oauthClientId: row.oauth_client_id,
    clientSecret: row.client_secret,
    userClaim: row.user_claim,
    orgClaim: row.org_claim,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Identity providers of keys, written once for SQLite and PostgreSQL (one upsert, no transaction). */
export class SqlIdentityProviders implements IdentityProviderStore {
  constructor(private readonly sql: SqlRunner) {}

  async put(i: NewIdentityProvider): Promise<void> {
    const now = new Date().toISOString();
    await this.sql.run(
      `INSERT INTO identity_providers (key_id, name, display_name, issuer, oauth_client_id, client_secret,
         user_claim, org_claim, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (key_id) DO UPDATE SET name = excluded.name, display_name = excluded.display_name,
         issuer = excluded.issuer, oauth_client_id = excluded.oauth_client_id,
         client_secret = excluded.client_secret, user_claim = excluded.user_claim,
         org_claim = excluded.org_claim, updated_at = excluded.updated_at`,
      i.keyId,
      i.name,
      i.displayName,
      i.issuer,
      i.oauthClientId,
      i.clientSecret,
      i.userClaim,
      i.orgClaim,
      now,
      now,
    );
  }

  async getByName(name: string): Promise<IdentityProviderRecord | undefined> {
    const row = await this.sql.one<IdpRow>(`${IDP} WHERE i.name = ?`, name);
    return row && idp(row);
  }

  async getByKey(keyId: string): Promise<IdentityProviderRecord | undefined> {
    const row = await this.sql.one<IdpRow>(`${IDP} WHERE i.key_id = ?`, keyId);
    return row && idp(row);
  }

  async list(): Promise<IdentityProviderRecord[]> {
    return (await this.sql.all<IdpRow>(`${IDP} ORDER BY i.name`)).map(idp);
  }

  async delete(keyId: string): Promise<boolean> {
    return (await this.sql.run('DELETE FROM identity_providers WHERE key_id = ?', keyId)) === 1;
  }
}
