import type { MetaStore } from '../types.js';
import type { SqliteDb } from './db.js';

export class SqliteMeta implements MetaStore {
  constructor(private readonly sql: SqliteDb) {}

  async get(key: string): Promise<string | undefined> {
    return this.sql.one<{ value: string }>('SELECT value FROM meta WHERE key = ?', key)?.value;
  }

  async setOnce(key: string, value: string): Promise<boolean> {
    return this.sql.changedOne(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING',
      key,
      value,
    );
  }
}
