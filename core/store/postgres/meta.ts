import type { MetaStore } from '../types.js';
import type { PostgresDb } from './db.js';

export class PostgresMeta implements MetaStore {
  constructor(private readonly sql: PostgresDb) {}

  async get(key: string): Promise<string | undefined> {
    return (await this.sql.one<{ value: string }>('SELECT value FROM meta WHERE key = $1', key))?.value;
  }

  async setOnce(key: string, value: string): Promise<boolean> {
    return this.sql.changedOne(
      'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING',
      key,
      value,
    );
  }
}
