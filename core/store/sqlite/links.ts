import { LINK_COLUMNS, linkRecord, type LinkRow } from '../rows.js';
import type { LinkRecord, LinkStore } from '../types.js';
import type { SqliteDb } from './db.js';

const LIVE_LINK = `SELECT ${LINK_COLUMNS}
  FROM links l JOIN scopes s ON s.id = l.scope_id WHERE l.token_hash = ? AND l.expires_at > ?`;

export class SqliteLinks implements LinkStore {
  constructor(private readonly sql: SqliteDb) {}

  async create(tokenHash: string, link: LinkRecord): Promise<void> {
    const scopeId = this.sql.ensureScope(link.scope);
    this.sql.run(
      'INSERT INTO links (token_hash, scope_id, provider, purpose, payload, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      tokenHash,
      scopeId,
      link.provider,
      link.purpose,
      link.payload,
      link.expiresAt,
      new Date().toISOString(),
    );
  }

  async peek(tokenHash: string, now: string): Promise<LinkRecord | undefined> {
    const row = this.sql.one<LinkRow>(LIVE_LINK, tokenHash, now);
    return row && linkRecord(row);
  }

  async consume(tokenHash: string, now: string): Promise<LinkRecord | undefined> {
    // One transaction: two concurrent uses of a link cannot both get it.
    const row = this.sql.transaction(() => {
      const found = this.sql.one<LinkRow>(LIVE_LINK, tokenHash, now);
      if (found) this.sql.run('DELETE FROM links WHERE token_hash = ?', tokenHash);
      return found;
    });
    return row && linkRecord(row);
  }

  async purgeExpired(now: string): Promise<number> {
    return this.sql.run('DELETE FROM links WHERE expires_at <= ?', now);
  }
}
