import type { Scope } from '../../domain.js';
import type { OrganizationRecord, ScopeStore } from '../types.js';
import type { PostgresDb } from './db.js';

export class PostgresScopes implements ScopeStore {
  constructor(private readonly sql: PostgresDb) {}

  async ensure(scope: Scope): Promise<string> {
    return this.sql.ensureScope(scope);
  }

  async listOrganizations(): Promise<OrganizationRecord[]> {
    // One scope row per (client, org, user): counting rows counts distinct users.
    return this.sql.all<OrganizationRecord>(
      `SELECT s.client_id AS "clientId", c.name AS "clientName", s.org_id AS "orgId", COUNT(*)::integer AS users,
         MIN(s.created_at) AS "firstSeenAt"
       FROM scopes s JOIN clients c ON c.id = s.client_id
       WHERE s.org_id <> ''
       GROUP BY s.client_id, c.name, s.org_id
       ORDER BY c.name, s.org_id`,
    );
  }
}
