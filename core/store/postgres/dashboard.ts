import { newId } from '../ids.js';
import type { DashboardSessionRecord, DashboardStore } from '../types.js';
import type { PostgresDb } from './db.js';

export class PostgresDashboard implements DashboardStore {
  constructor(private readonly sql: PostgresDb) {}

  async getPasswordHash(): Promise<string | undefined> {
    return (
      await this.sql.one<{ password_hash: string }>(
        "SELECT password_hash FROM admin_credentials WHERE name = 'admin'",
      )
    )?.password_hash;
  }

  async setPasswordHash(hash: string, options: { onlyIfUnset: boolean }): Promise<boolean> {
    const now = new Date().toISOString();
    if (options.onlyIfUnset) {
      return this.sql.changedOne(
        "INSERT INTO admin_credentials (name, password_hash, updated_at) VALUES ('admin', $1, $2) ON CONFLICT (name) DO NOTHING",
        hash,
        now,
      );
    }
    await this.sql.transaction(async (tx) => {
      await tx.run(
        `INSERT INTO admin_credentials (name, password_hash, updated_at) VALUES ('admin', $1, $2)
         ON CONFLICT (name) DO UPDATE SET password_hash = excluded.password_hash, updated_at = excluded.updated_at`,
        hash,
        now,
      );
      await tx.run('DELETE FROM dashboard_sessions');
      await tx.run('DELETE FROM signin_failures');
    });
    return true;
  }

  async createSession(idHash: string, session: DashboardSessionRecord): Promise<void> {
    await this.sql.run(
      'INSERT INTO dashboard_sessions (id_hash, csrf_token, created_at, expires_at) VALUES ($1, $2, $3, $4)',
      idHash,
      session.csrfToken,
      session.createdAt,
      session.expiresAt,
    );
  }

  async getSession(idHash: string, now: string): Promise<DashboardSessionRecord | undefined> {
    return this.sql.one<DashboardSessionRecord>(
      `SELECT csrf_token AS "csrfToken", created_at AS "createdAt", expires_at AS "expiresAt"
       FROM dashboard_sessions WHERE id_hash = $1 AND expires_at > $2`,
      idHash,
      now,
    );
  }

  async deleteSession(idHash: string): Promise<void> {
    await this.sql.run('DELETE FROM dashboard_sessions WHERE id_hash = $1', idHash);
  }

  async purge(now: string, failuresBefore: string): Promise<void> {
    await this.sql.run('DELETE FROM dashboard_sessions WHERE expires_at <= $1', now);
    await this.sql.run('DELETE FROM signin_failures WHERE created_at < $1', failuresBefore);
  }

  async addSignInFailure(source: string, at: string): Promise<void> {
    await this.sql.run(
      'INSERT INTO signin_failures (id, source, created_at) VALUES ($1, $2, $3)',
      newId('fail'),
      source,
      at,
    );
  }

  async listSignInFailures(since: string): Promise<{ source: string; at: string }[]> {
    return this.sql.all<{ source: string; at: string }>(
      'SELECT source, created_at AS at FROM signin_failures WHERE created_at >= $1 ORDER BY created_at, id',
      since,
    );
  }

  async clearSignInFailures(source: string): Promise<void> {
    await this.sql.run('DELETE FROM signin_failures WHERE source = $1', source);
  }
}
