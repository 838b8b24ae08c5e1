import { LINK_COLUMNS, linkRecord, type LinkRow } from '../rows.js';
import type { LinkRecord, LinkStore } from '../types.js';
import type { PostgresDb } from './db.js';

export class PostgresLinks implements LinkStore {
  constructor(private readonly sql: PostgresDb) {}

  async create(tokenHash: string, link: LinkRecord): Promise<void> {
    const scopeId = await this.sql.ensureScope(link.scope);
    await this.sql.run(
      'INSERT INTO links (token_hash, scope_id, provider, purpose, payload, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)',
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
    const row = await this.sql.one<LinkRow>(
      `SELECT ${LINK_COLUMNS} FROM links l JOIN scopes s ON s.id = l.scope_id
       WHERE l.token_hash = $1 AND l.expires_at > $2`,
      tokenHash,
      now,
    );
    return row && linkRecord(row);
  }

  async consume(tokenHash: string, now: string): Promise<LinkRecord | undefined> {
    // One statement takes the link: of two concurrent uses, the second waits for the first's row
    // lock, finds the row deleted, and returns nothing.
    const row = await this.sql.one<LinkRow>(
      `DELETE FROM links l USING scopes s
       WHERE s.id = l.scope_id AND l.token_hash = $1 AND l.expires_at > $2
       RETURNING ${LINK_COLUMNS}`,
      tokenHash,
      now,
    );
    return row && linkRecord(row);
  }

  async purgeExpired(now: string): Promise<number> {
    return this.sql.run('DELETE FROM links WHERE expires_at <= $1', now);
  }
}
