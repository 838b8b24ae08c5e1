import type { SqlParam, SqlRunner } from './statements.js';
import type { AuditEntry, AuditEvent, AuditFilter, AuditOutcome, AuditRecord, AuditStore } from './types.js';

interface AuditRow {
  id: string;
  at: string;
  event: AuditEvent;
  client_id: string | null;
  client_name: string | null;
  key_id: string | null;
  org_id: string | null;
  user_id: string | null;
  provider: string | null;
  tool: string | null;
  outcome: AuditOutcome;
  latency_us: number | null;
  upstream_status: number | null;
  message: string | null;
}

const COLUMNS = [
  'id',
  'at',
  'event',
  'client_id',
  'key_id',
  'org_id',
  'user_id',
  'provider',
  'tool',
  'outcome',
  'latency_us',
  'upstream_status',
  'message',
] as const;

/** Most rows per INSERT: 512 rows of 13 columns stay far below either dialect's limit of bound values. */
const ROWS_PER_INSERT = 512;

const ROW_PLACEHOLDERS = `(${COLUMNS.map(() => '?').join(', ')})`;

/** The entries' values in column order, row after row, in one array (no array per entry). */
function values(entries: readonly AuditEntry[]): SqlParam[] {
  const out: SqlParam[] = [];
  for (const entry of entries) {
    out.push(
      entry.id,
      entry.at,
      entry.event,
      entry.clientId,
      entry.keyId,
      entry.orgId,
      entry.userId,
      entry.provider,
      entry.tool,
      entry.outcome,
      entry.latencyUs,
      entry.upstreamStatus,
      entry.message,
    );
  }
  return out;
}

function record(row: AuditRow): AuditRecord {
  return {
    id: row.id,
    at: row.at,
    event: row.event,
    clientId: row.client_id,
    clientName: row.client_name,
    keyId: row.key_id,
    orgId: row.org_id,
    userId: row.user_id,
    provider: row.provider,
    tool: row.tool,
    outcome: row.outcome,
    latencyUs: row.latency_us,
    upstreamStatus: row.upstream_status,
    message: row.message,
  };
}

/** Each filter field as its condition; the client by name, through the join. */
const CONDITIONS: Record<Exclude<keyof AuditFilter, 'limit'>, string> = {
  since: 'a.at >= ?',
  until: 'a.at < ?',
  client: 'c.name = ?',
  org: 'a.org_id = ?',
  user: 'a.user_id = ?',
  provider: 'a.provider = ?',
  outcome: 'a.outcome = ?',
  event: 'a.event = ?',
};

/**
 * The audit trail, written once for SQLite and PostgreSQL. No foreign keys: an entry outlives the
 * key, client or connection it names, and a batch never fails on one that was deleted meanwhile.
 */
export class SqlAudit implements AuditStore {
  /**
   * The INSERT of n rows by n, built once. A batch is written in INSERTs of powers of two rows
   * (500 = 256 + 128 + 64 + 32 + 16 + 4), so a store prepares and keeps at most ten of them,
   * whatever the sizes of the batches; one per size would keep up to 512 statements of up to 6,656
   * parameters each. The same text each time also spares hashing a fresh 20 KB string per batch.
   */
  private readonly inserts = new Map<number, string>();

  constructor(private readonly sql: SqlRunner) {}

  async append(entries: readonly AuditEntry[]): Promise<void> {
    for (let start = 0; start < entries.length;) {
      const left = Math.min(entries.length - start, ROWS_PER_INSERT);
      const rows = 2 ** Math.floor(Math.log2(left));
      await this.sql.run(this.insert(rows), ...values(entries.slice(start, start + rows)));
      start += rows;
    }
  }

  private insert(rows: number): string {
    let sql = this.inserts.get(rows);
    if (sql === undefined) {
      sql = `INSERT INTO audit_events (${COLUMNS.join(', ')}) VALUES ${Array<string>(rows).fill(ROW_PLACEHOLDERS).join(', ')}`;
      this.inserts.set(rows, sql);
    }
    return sql;
  }

  async list(filter: AuditFilter): Promise<AuditRecord[]> {
    const where: string[] = [];
    const params: SqlParam[] = [];
    for (const [field, condition] of Object.entries(CONDITIONS)) {
      const value = filter[field as keyof typeof CONDITIONS];
      if (value === undefined) continue;
      where.push(condition);
      params.push(value);
    }
    const rows = await this.sql.all<AuditRow>(
      `SELECT a.id, a.at, a.event, a.client_id, c.name AS client_name, a.key_id, a.org_id, a.user_id,
         a.provider, a.tool, a.outcome, a.latency_us, a.upstream_status, a.message
       FROM audit_events a LEFT JOIN clients c ON c.id = a.client_id
       ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY a.at DESC, a.id DESC LIMIT ?`,
      ...params,
      filter.limit,
    );
    return rows.map(record);
  }

  purge(before: string): Promise<number> {
    return this.sql.run('DELETE FROM audit_events WHERE at < ?', before);
  }
}
