/**
 * The deployment the cluster section measures, as README.md's "Scaling out" runs one: a PostgreSQL
 * database and a Redis key prefix of the run's own, on the servers the tests use
 * (TOOLGATE_TEST_POSTGRES_URL, TOOLGATE_TEST_REDIS_URL), and one master key for every process.
 */
import { randomBytes } from 'node:crypto';
import { createDatabase, postgresAnswers, POSTGRES_URL } from '../../../test/helpers/postgres.js';
import { deleteKeys, randomPrefix, redisIsUp, TEST_REDIS_URL } from '../../../test/helpers/redis.js';

export interface SharedStore {
  /** The database's name and the key prefix, for the run's log (to check nothing is left behind). */
  names: string;
  /** The settings every gateway process of the deployment shares (TOOLGATE_DATABASE_URL and so on). */
  env: Record<string, string>;
  /**
   * Drops the database and deletes the prefix's keys (after the gateways stopped, or they would
   * write some again); later calls wait for the first one.
   */
  remove: () => Promise<void>;
}

/** Why the cluster section cannot run here (one line), or undefined when PostgreSQL and Redis answer. */
export async function sharedStoreMissing(): Promise<string | undefined> {
  const [postgres, redis] = await Promise.all([postgresAnswers(), redisIsUp()]);
  // Host and port only: a URL may carry a password.
  const missing = [
    ...(postgres ? [] : [`PostgreSQL does not answer at ${new URL(POSTGRES_URL).host}`]),
    ...(redis ? [] : [`Redis does not answer at ${new URL(TEST_REDIS_URL).host}`]),
  ];
  return missing.length === 0
    ? undefined
    : `${missing.join(', and ')} (the servers of TOOLGATE_TEST_POSTGRES_URL and TOOLGATE_TEST_REDIS_URL, as for the tests)`;
}

/** Creates the database (random name) and picks a Redis prefix (random) for one run. */
export async function createSharedStore(): Promise<SharedStore> {
  const database = await createDatabase();
  const prefix = randomPrefix('bench');
  let removed: Promise<void> | undefined;
  return {
    names: `database ${database.name}, Redis key prefix ${prefix}`,
    env: {
      TOOLGATE_DATABASE_URL: database.url,
      TOOLGATE_REDIS_URL: TEST_REDIS_URL,
      TOOLGATE_REDIS_PREFIX: prefix,
      TOOLGATE_MASTER_KEY: randomBytes(32).toString('base64'),
    },
    remove() {
      removed ??= Promise.all([database.drop(), deleteKeys(prefix)]).then(() => undefined);
      return removed;
    },
  };
}
