import { PostgresStore } from './postgres/index.js';
import { SqliteStore } from './sqlite/index.js';
import type { Store } from './types.js';

export interface OpenStoreOptions {
  /**
   * For a server: SQLite's WAL is checkpointed by a worker thread, not inside a request's commit
   * (sqlite/checkpointer.ts); `onCheckpointFailure` is told when the worker stopped (`error`: why,
   * when it said), and SQLite checkpoints again. A command's few writes leave it to SQLite.
   */
  server?: { onCheckpointFailure: (error: Error | undefined) => void };
}

/**
 * Opens the store TOOLGATE_DATABASE_URL names. `sqlite:<path>` is the embedded default (config.ts
 * puts it in the data dir); `postgres://…` (or `postgresql://…`) is a PostgreSQL database, shared by
 * every replica of a deployment that scales out. Each implementation passes the contract suite in
 * test/unit/store/.
 */
export function openStore(databaseUrl: string, options: OpenStoreOptions = {}): Store {
  const scheme = databaseUrl.slice(0, databaseUrl.indexOf(':'));
  if (scheme === 'sqlite')
    return new SqliteStore(
      databaseUrl.slice('sqlite:'.length),
      options.server ? { backgroundCheckpoints: { onFailure: options.server.onCheckpointFailure } } : {},
    );
  if (scheme === 'postgres' || scheme === 'postgresql') return new PostgresStore(databaseUrl);
  throw new Error(
    `TOOLGATE_DATABASE_URL: unsupported database "${scheme}:"; use sqlite:<path> or postgres://<user>@<host>/<database>.`,
  );
}
