import {
  TOOL_POLICY_COLUMNS,
  TOOL_POLICY_REPLACE,
  toolPolicyRecord,
  toolPolicyValues,
  type ToolPolicyRow,
} from '../rows.js';
import type { NewToolPolicy, PolicyStore, ToolPolicyRecord } from '../types.js';
import type { PostgresDb } from './db.js';

export class PostgresPolicies implements PolicyStore {
  constructor(private readonly sql: PostgresDb) {}

  async get(clientId: string, orgId: string | null): Promise<ToolPolicyRecord | undefined> {
    const row = await this.sql.one<ToolPolicyRow>(
      'SELECT * FROM tool_policies WHERE client_id = $1 AND org_id = $2',
      clientId,
      orgId ?? '',
    );
    return row && toolPolicyRecord(row);
  }

  async set(policy: NewToolPolicy): Promise<void> {
    await this.sql.run(
      `INSERT INTO tool_policies (${TOOL_POLICY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) ${TOOL_POLICY_REPLACE}`,
      ...toolPolicyValues(policy),
    );
  }

  async delete(clientId: string, orgId: string | null): Promise<boolean> {
    return this.sql.changedOne(
      'DELETE FROM tool_policies WHERE client_id = $1 AND org_id = $2',
      clientId,
      orgId ?? '',
    );
  }

  async list(): Promise<ToolPolicyRecord[]> {
    return (await this.sql.all<ToolPolicyRow>('SELECT * FROM tool_policies ORDER BY client_id, org_id')).map(
      toolPolicyRecord,
    );
  }
}
