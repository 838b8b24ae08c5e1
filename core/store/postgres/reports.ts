import type { Scope } from '../../domain.js';
import { newReportRecord, REPORT_SELECT, reportRecord, scopeColumns, type ReportRow } from '../rows.js';
import type { NewReport, ReportRecord, ReportStore } from '../types.js';
import { scopeMatch, type PostgresDb } from './db.js';

// seq breaks ties of one millisecond: a later insert always has the larger seq (an identity column).
const NEWEST_FIRST = 'ORDER BY r.created_at DESC, r.seq DESC';

export class PostgresReports implements ReportStore {
  constructor(private readonly sql: PostgresDb) {}

  async insert(scope: Scope, report: NewReport): Promise<ReportRecord> {
    const scopeId = await this.sql.ensureScope(scope);
    const record = newReportRecord(scope, report);
    await this.sql.run(
      'INSERT INTO reports (id, scope_id, summary, details, provider, tool, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      record.id,
      scopeId,
      record.summary,
      record.details,
      record.provider,
      record.tool,
      record.createdAt,
    );
    return record;
  }

  async listForScope(scope: Scope): Promise<ReportRecord[]> {
    return (
      await this.sql.all<ReportRow>(
        `${REPORT_SELECT} WHERE ${scopeMatch(1)} ${NEWEST_FIRST}`,
        ...scopeColumns(scope),
      )
    ).map(reportRecord);
  }

  async list(filter: { status?: 'open' | 'resolved' }): Promise<ReportRecord[]> {
    const where =
      filter.status === 'open'
        ? 'WHERE r.resolved_at IS NULL'
        : filter.status === 'resolved'
          ? 'WHERE r.resolved_at IS NOT NULL'
          : '';
    return (await this.sql.all<ReportRow>(`${REPORT_SELECT} ${where} ${NEWEST_FIRST}`)).map(reportRecord);
  }

  async resolve(id: string, at: string): Promise<boolean> {
    return this.sql.changedOne(
      'UPDATE reports SET resolved_at = $1 WHERE id = $2 AND resolved_at IS NULL',
      at,
      id,
    );
  }
}
