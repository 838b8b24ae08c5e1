import type { Config } from '../config.js';
import { openCoordination, type Coordination } from '../coordination/index.js';
import { Keyring, loadMasterKey } from '../keyring.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';
import { recoverRotation } from './master-key.js';

export const MASTER_KEY_WARNING =
  'Generated a new master key. Back this file up somewhere safe and separate from the database: without it, stored provider credentials cannot be decrypted. Or set TOOLGATE_MASTER_KEY.';

export interface Core {
  store: Store;
  keyring: Keyring;
  coordination: Coordination;
  /** Set when this call generated the master key into the data dir. */
  masterKeyFile?: string;
  close(): Promise<void>;
}

/** What both the server and the CLI open on the data dir: the migrated store, the keyring, coordination. */
export async function openCore(
  config: Config,
  onBusError: (error: unknown) => void = () => {},
): Promise<Core> {
  const store = openStore(config.databaseUrl);
  await store.migrate();
  await recoverRotation(config, store, () => loadMasterKey(config).key);
  const master = loadMasterKey(config);
  // A key kept in the data dir is re-read when an envelope names another one (a rotation by the CLI).
  const keyring = new Keyring(
    master.key,
    config.masterKey === undefined ? () => loadMasterKey(config).key : undefined,
  );
  const coordination = openCoordination({
    redisUrl: config.redisUrl,
    redisPrefix: config.redisPrefix,
    onBusError,
  });
  const close = async (): Promise<void> => {
    await coordination.close();
    await store.close();
  };
  return master.generatedAt
    ? { store, keyring, coordination, masterKeyFile: master.generatedAt, close }
    : { store, keyring, coordination, close };
}
