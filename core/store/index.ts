import { SqliteStore } from './sqlite/index.js';
import type { Store } from './types.js';

/**
 * Opens the store TOOLGATE_DATABASE_URL names. `sqlite:<path>` is the embedded default (config.ts
 * puts it in the data dir); a new implementation (PostgreSQL) joins here and passes the contract
 * suite in test/unit/store/.
 */
export function openStore(databaseUrl: string): Store {
  const scheme = databaseUrl.slice(0, databaseUrl.indexOf(':'));
  if (scheme === 'sqlite') return new SqliteStore(databaseUrl.slice('sqlite:'.length));
  throw new Error(`TOOLGATE_DATABASE_URL: unsupported database "${scheme}:"; use sqlite:<path>.`);
}
