import {
  TOOL_POLICY_COLUMNS,
  TOOL_POLICY_REPLACE,
  toolPolicyRecord,
  toolPolicyValues,
  type ToolPolicyRow,
} from '../rows.js';
import type { NewToolPolicy, PolicyStore, ToolPolicyRecord } from '../types.js';
import { attempt, type Awaitable } from '../../awaitable.js';
import type { SqliteDb } from './db.js';

export class SqlitePolicies implements PolicyStore {
  constructor(private readonly sql: SqliteDb) {}

  get(clientId: string, orgId: string | null): Awaitable<ToolPolicyRecord | undefined> {
    // Read on every request: from memory while the database is unchanged (db.ts, hotRead), absence
    // included, since most clients have no policy. Without an organization, keyed by the client id
    // the key's record holds: no key built per call.
    const key = orgId === null ? clientId : `${clientId}\u0000${orgId}`;
    return attempt(
      () =>
        this.sql.hotRead('policies', key, () => {
          const row = this.sql.one<ToolPolicyRow>(
            'SELECT * FROM tool_policies WHERE client_id = ? AND org_id = ?',
            clientId,
            orgId ?? '',
          );
          return { record: row && toolPolicyRecord(row) };
        })?.record,
    );
  }

  async set(policy: NewToolPolicy): Promise<void> {
    this.sql.run(
      `INSERT INTO tool_policies (${TOOL_POLICY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?) ${TOOL_POLICY_REPLACE}`,
      ...toolPolicyValues(policy),
    );
  }

  async delete(clientId: string, orgId: string | null): Promise<boolean> {
    return this.sql.changedOne(
      'DELETE FROM tool_policies WHERE client_id = ? AND org_id = ?',
      clientId,
      orgId ?? '',
    );
  }

  async list(): Promise<ToolPolicyRecord[]> {
    return this.sql
      .all<ToolPolicyRow>('SELECT * FROM tool_policies ORDER BY client_id, org_id')
      .map(toolPolicyRecord);
  }
}
