import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { runToolgate, startServe, type Serving } from './cli.js';
import { PETSHOP_MANIFESTS } from './petshop.js';
import { freePort } from './ports.js';
import { createDatabase, type TestDatabase } from './postgres.js';
import { deleteKeys, randomPrefix, TEST_REDIS_URL } from './redis.js';
import { startRoundRobin, type RoundRobin } from './round-robin.js';

/** One `toolgate serve` process of a cluster, and its own URL (not the balancer's). */
export interface ClusterProcess extends Serving {
  url: string;
}

export interface Cluster {
  /** The balancer: where clients connect (TOOLGATE_BASE_URL of every process). */
  balancer: RoundRobin;
  processes: ClusterProcess[];
  /** The settings every process shares (database, Redis, master key, catalog). */
  env: Record<string, string>;
  /** The deployment's PostgreSQL database, for checks of what is stored. */
  database: TestDatabase;
  /** Runs the `toolgate` command against the same deployment. */
  cli(args: string[]): ReturnType<typeof runToolgate>;
  close(): Promise<void>;
}

export interface ClusterOptions {
  /** The catalog every process loads (default: the Pet Shop manifests). */
  manifestFiles?: string[];
  /** More settings every process shares (an OAuth provider's endpoints and app, refresh timing). */
  env?: Record<string, string>;
  /**
   * The balancer's port, when something must know the base URL before the cluster starts (an
   * OAuth app's redirect URI, `${base}/oauth/callback`); default: a free one.
   */
  balancerPort?: number;
}

/**
 * Several gateway processes of one deployment, as README.md's "Scaling out" runs them: a database of
 * their own on the test PostgreSQL, a Redis key prefix of their own, one master key, the Pet Shop
 * catalog pointed at `apiUrl` (or the catalog of `options.manifestFiles`), each process with its own
 * data dir and port, behind a plain round-robin balancer whose URL is every process's base URL.
 */
export async function startCluster(
  size: number,
  apiUrl: string | undefined,
  options: ClusterOptions = {},
): Promise<Cluster> {
  const database: TestDatabase = await createDatabase();
  const prefix = randomPrefix('cluster');
  const manifests = mkdtempSync(join(tmpdir(), 'toolgate-cluster-manifests-'));
  for (const file of options.manifestFiles ?? PETSHOP_MANIFESTS)
    copyFileSync(file, join(manifests, basename(file)));
  const dirs: string[] = [manifests];
  const balancerPort = options.balancerPort ?? (await freePort());
  const env: Record<string, string> = {
    TOOLGATE_DATABASE_URL: database.url,
    TOOLGATE_REDIS_URL: TEST_REDIS_URL,
    TOOLGATE_REDIS_PREFIX: prefix,
    TOOLGATE_MASTER_KEY: randomBytes(32).toString('base64'),
    TOOLGATE_MANIFESTS_DIR: manifests,
    TOOLGATE_BASE_URL: `http://127.0.0.1:${balancerPort}`,
    TOOLGATE_ALLOW_PRIVATE_NETWORK: '1',
    ...(apiUrl === undefined ? {} : { TOOLGATE_PROVIDER_PETSHOP_BASE_URL: apiUrl }),
    ...options.env,
  };
  const processes: ClusterProcess[] = [];
  const dataDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-cluster-'));
    dirs.push(dir);
    return dir;
  };
  try {
    // One after the other: the first migrates the database (the others would wait on its lock).
    for (let i = 0; i < size; i++) {
      const port = await freePort();
      const serving = await startServe({ ...env, TOOLGATE_DATA_DIR: dataDir(), TOOLGATE_PORT: String(port) });
      processes.push({ ...serving, url: `http://127.0.0.1:${port}` });
    }
  } catch (error) {
    for (const p of processes) p.child.kill('SIGKILL');
    await database.drop();
    throw error;
  }
  const balancer = await startRoundRobin(
    processes.map((p) => p.url),
    balancerPort,
  );
  const cliDir = dataDir();
  return {
    balancer,
    processes,
    env,
    database,
    cli: (args) => runToolgate(args, { ...env, TOOLGATE_DATA_DIR: cliDir }),
    async close() {
      await balancer.close();
      await Promise.all(processes.map((p) => p.stop()));
      await database.drop();
      await deleteKeys(prefix);
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}
