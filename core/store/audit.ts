import { jsonString } from '../json.js';
import { storable } from './rows.js';
import type { SqlParam, SqlRunner } from './statements.js';
import type { AuditEntry, AuditFilter, AuditRecord, AuditStore } from './types.js';

interface AuditRow {
  id: string;
  at: string;
  context: string;
  client_name: string | null;
  latency_us: number | null;
  upstream_status: number | null;
  message: string | null;
}

/** Who and what of an entry: the `context` column, one JSON object. */
type AuditContext = Pick<
  AuditEntry,
  'event' | 'outcome' | 'clientId' | 'keyId' | 'orgId' | 'userId' | 'provider' | 'tool'
>;

/**
 * The columns an entry is written to. Who and what (event, outcome, client, key, scope, provider,
 * tool) is one JSON text: binding a text value costs better-sqlite3 about 1.5k instructions, so
 * eight of them were most of an entry's INSERT (31k instructions against 12k now, callgrind), the
 * largest part of what the audit trail costs a tools/call (issue 18). Both dialects read a field
 * of it with `->>`.
 */
const COLUMNS = ['id', 'at', 'context', 'latency_us', 'upstream_status', 'message'] as const;

/** Most rows per INSERT: 512 rows of 6 columns stay far below either dialect's limit of bound values. */
const ROWS_PER_INSERT = 512;

const ROW_PLACEHOLDERS = `(${COLUMNS.map(() => '?').join(', ')})`;

/** A context field as JSON. */
function fieldText(value: string | null): string {
  return value === null ? 'null' : jsonString(storable(value));
}

/**
 * The context columns of entries written one after another: JSON text, written field by field
 * (JSON.stringify costs more), each field's text kept from the entry before when its value is the
 * same. Consecutive calls in a deployment of many scopes share most fields (the client, the key,
 * the tool) and differ in one or two (the user): rebuilding every field of each entry cost a
 * tools/call among 10,000 scopes about 7.5k instructions, 2 % of it (scripts/bench/instructions.ts
 * --scopes=10000 --baseline).
 */
class ContextTexts {
  private previous: AuditEntry | undefined;
  /** The JSON text of each field of `previous`, in the column's order. */
  private readonly fields: string[] = [];
  private text = '';

  of(entry: AuditEntry): string {
    const before = this.previous;
    this.previous = entry;
    // `|`, not `||`: every field that changed is written, not only the first.
    const changed =
      this.field(0, entry.event, before?.event) |
      this.field(1, entry.outcome, before?.outcome) |
      this.field(2, entry.clientId, before?.clientId) |
      this.field(3, entry.keyId, before?.keyId) |
      this.field(4, entry.orgId, before?.orgId) |
      this.field(5, entry.userId, before?.userId) |
      this.field(6, entry.provider, before?.provider) |
      this.field(7, entry.tool, before?.tool);
    if (changed !== 0) {
      const f = this.fields;
      this.text =
        `{"event":${f[0]},"outcome":${f[1]},"clientId":${f[2]},"keyId":${f[3]},"orgId":${f[4]},` +
        `"userId":${f[5]},"provider":${f[6]},"tool":${f[7]}}`;
    }
    return this.text;
  }

  /** Writes field `i`'s text unless its value is the entry before's; 1 when it wrote it. */
  private field(i: number, value: string | null, before: string | null | undefined): number {
    if (value === before) return 0;
    this.fields[i] = fieldText(value);
    return 1;
  }
}

/** The entries' values in column order, row after row, in one array (no array per entry). */
function values(entries: readonly AuditEntry[]): SqlParam[] {
  const out: SqlParam[] = [];
  const contexts = new ContextTexts();
  for (const entry of entries) {
    const message = entry.message === null ? null : storable(entry.message);
    out.push(entry.id, entry.at, contexts.of(entry), entry.latencyUs, entry.upstreamStatus, message);
  }
  return out;
}

/** Records out of rows; the rows of one read share few contexts, each parsed once. */
function records(rows: readonly AuditRow[]): AuditRecord[] {
  const contexts = new Map<string, AuditContext>();
  return rows.map((row) => {
    let context = contexts.get(row.context);
    if (context === undefined) {
      context = JSON.parse(row.context) as AuditContext;
      contexts.set(row.context, context);
    }
    return {
      id: row.id,
      at: row.at,
      event: context.event,
      clientId: context.clientId,
      clientName: row.client_name,
      keyId: context.keyId,
      orgId: context.orgId,
      userId: context.userId,
      provider: context.provider,
      tool: context.tool,
      outcome: context.outcome,
      latencyUs: row.latency_us,
      upstreamStatus: row.upstream_status,
      message: row.message,
    };
  });
}

/** Each filter field as its condition; the client by name, through the join. */
const CONDITIONS: Record<Exclude<keyof AuditFilter, 'limit'>, string> = {
  since: 'a.at >= ?',
  until: 'a.at < ?',
  client: 'c.name = ?',
  org: "a.context ->> 'orgId' = ?",
  user: "a.context ->> 'userId' = ?",
  provider: "a.context ->> 'provider' = ?",
  outcome: "a.context ->> 'outcome' = ?",
  event: "a.context ->> 'event' = ?",
};

/**
 * The audit trail, written once for SQLite and PostgreSQL. No foreign keys: an entry outlives the
 * key, client or connection it names, and a batch never fails on one that was deleted meanwhile.
 */
export class SqlAudit implements AuditStore {
  /**
   * The INSERT of n rows by n, built once. A batch is written in INSERTs of powers of two rows
   * (500 = 256 + 128 + 64 + 32 + 16 + 4), so a store prepares and keeps at most ten of them,
   * whatever the sizes of the batches; one per size would keep up to 512 statements of up to 3,072
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
      `SELECT a.id, a.at, a.context, c.name AS client_name, a.latency_us, a.upstream_status, a.message
       FROM audit_events a LEFT JOIN clients c ON c.id = a.context ->> 'clientId'
       ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
       ORDER BY a.at DESC, a.id DESC LIMIT ?`,
      ...params,
      filter.limit,
    );
    return records(rows);
  }

  purge(before: string): Promise<number> {
    return this.sql.run('DELETE FROM audit_events WHERE at < ?', before);
  }
}
