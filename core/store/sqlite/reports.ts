import type { Scope } from '../../domain.js';
import { newReportRecord, REPORT_SELECT, reportRecord, scopeColumns, type ReportRow } from '../rows.js';
import type { NewReport, ReportRecord, ReportStore } from '../types.js';
import { SCOPE_MATCH, type SqliteDb } from './db.js';

// rowid breaks ties of one millisecond: a later insert always has the larger rowid.
const NEWEST_FIRST = 'ORDER BY r.created_at DESC, r.rowid DESC';

export class SqliteReports implements ReportStore {
  constructor(private readonly sql: SqliteDb) {}

  async insert(scope: Scope, report: NewReport): Promise<ReportRecord> {
    const scopeId = this.sql.ensureScope(scope);
    const record = newReportRecord(scope, report);
    this.sql.run(
      'INSERT INTO reports (id, scope_id, summary, details, provider, tool, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
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
    return this.sql
      .all<ReportRow>(`${REPORT_SELECT} WHERE ${SCOPE_MATCH} ${NEWEST_FIRST}`, ...scopeColumns(scope))
      .map(reportRecord);
  }

  async list(filter: { status?: 'open' | 'resolved' }): Promise<ReportRecord[]> {
    const where =
      filter.status === 'open'
        ? 'WHERE r.resolved_at IS NULL'
        : filter.status === 'resolved'
          ? 'WHERE r.resolved_at IS NOT NULL'
          : '';
    return this.sql.all<ReportRow>(`${REPORT_SELECT} ${where} ${NEWEST_FIRST}`).map(reportRecord);
  }

  async resolve(id: string, at: string): Promise<boolean> {
    return this.sql.changedOne(
      'UPDATE reports SET resolved_at = ? WHERE id = ? AND resolved_at IS NULL',
      at,
      id,
    );
  }
}
