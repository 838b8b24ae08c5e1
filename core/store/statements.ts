import type { Scope } from '../domain.js';

export type SqlParam = string | number | null;

/**
 * Statements as a port written once for both dialects runs them: `?` placeholders, every call
 * async. SQLite takes the text as it is; PostgreSQL's runner numbers the placeholders. A port written
 * against this keeps to SQL both dialects read alike (no dialect functions, no `?` in literals).
 */
export interface SqlRunner {
  one<T>(sql: string, ...params: SqlParam[]): Promise<T | undefined>;
  all<T>(sql: string, ...params: SqlParam[]): Promise<T[]>;
  /** Runs a write; returns how many rows it changed. */
  run(sql: string, ...params: SqlParam[]): Promise<number>;
  /** The id of the scope's row, created on first use. */
  ensureScope(scope: Scope): Promise<string>;
}

const numbered = new Map<string, string>();

/** `?` placeholders as PostgreSQL's `$1, $2, …`, worked out once per statement text. */
export function numberPlaceholders(sql: string): string {
  let out = numbered.get(sql);
  if (out === undefined) {
    let n = 0;
    out = sql.replace(/\?/g, () => `$${++n}`);
    numbered.set(sql, out);
  }
  return out;
}
