import type { Config } from '../config.js';
import {
  CachedSessionStore,
  CachedStore,
  openCoordination,
  type Coordination,
} from '../coordination/index.js';
import { Keyring, loadMasterKey } from '../keyring.js';
import { AuditLog } from '../store/audit-log.js';
import { openStore, type OpenStoreOptions } from '../store/index.js';
import type { Store } from '../store/types.js';
import { recoverRotation } from './master-key.js';

export const MASTER_KEY_WARNING =
  'Generated a new master key. Back this file up somewhere safe and separate from the database: without it, stored provider credentials cannot be decrypted. Or set TOOLGATE_MASTER_KEY.';

export interface Core {
  store: Store;
  keyring: Keyring;
  coordination: Coordination;
  /** The audit trail's writer; `close()` writes what it still holds. */
  audit: AuditLog;
  /** Set when this call generated the master key into the data dir. */
  masterKeyFile?: string;
  close(): Promise<void>;
}

/** What both the server and the CLI open on the data dir: the migrated store, the keyring, coordination. */
export async function openCore(
  config: Config,
  onBusError: (error: unknown) => void = () => {},
  onAuditError: (error: unknown, dropped: number) => void = reportAuditError,
  storeOptions: OpenStoreOptions = {},
): Promise<Core> {
  const database = openStore(config.databaseUrl, storeOptions);
  await database.migrate();
  await recoverRotation(config, database, () => loadMasterKey(config).key);
  const master = loadMasterKey(config);
  // A key kept in the data dir is re-read when an envelope names another one (a rotation by the CLI).
  const keyring = new Keyring(
    master.key,
    config.masterKey === undefined ? () => loadMasterKey(config).key : undefined,
  );
  const opened = openCoordination({
    redisUrl: config.redisUrl,
    redisPrefix: config.redisPrefix,
    onBusError,
  });
  // Sessions in Redis are read on every POST of a 2025/2024 session: through a cache the bus
  // keeps true, as the shared store's reads are (in memory they are read in place).
  const sessions =
    config.redisUrl === undefined ? undefined : new CachedSessionStore(opened.sessions, opened.bus);
  const coordination: Coordination = sessions
    ? {
        ...opened,
        sessions,
        close: () => {
          sessions.close();
          return opened.close();
        },
      }
    : opened;
  // SQLite answers from memory while its data_version says nothing changed; a shared database is
  // read through a cache the bus keeps true across processes.
  const store = config.databaseUrl.startsWith('sqlite:')
    ? database
    : new CachedStore(database, coordination.bus);
  const audit = new AuditLog(store.audit, {
    enabled: config.audit,
    flushMs: config.auditFlushMs,
    onError: onAuditError,
  });
  const close = async (): Promise<void> => {
    await audit.close();
    await coordination.close();
    await store.close();
  };
  return master.generatedAt
    ? { store, keyring, coordination, audit, masterKeyFile: master.generatedAt, close }
    : { store, keyring, coordination, audit, close };
}

/** A command line's audit write that failed: said on stderr (the server logs it instead). */
function reportAuditError(error: unknown, dropped: number): void {
  const lost = dropped > 0 ? ` ${dropped} entries were dropped.` : '';
  process.stderr.write(
    `Could not write the audit trail: ${error instanceof Error ? error.message : String(error)}.${lost} Check the database (toolgate serve logs the same as TG_AUDIT_WRITE_FAILED).\n`,
  );
}
