import { randomBytes } from 'node:crypto';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The PostgreSQL server the tests use: a role that may create databases, on a database to connect
 * to for that (trust auth on the CI machine, where Debian's postgresql package runs it).
 */
export const POSTGRES_URL =
  process.env.TOOLGATE_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** How to start the machine's cluster (Debian's postgresql package, no systemd). */
export const START_POSTGRES = 'pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start';

/** How long a test waits to learn that the server does not answer. */
const CONNECT_TIMEOUT_MS = 3_000;

/** The URL without its password, fit for a message. */
function shown(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

/** A lower-case identifier, unique enough for databases and schemas that tests create and drop. */
export function randomName(prefix: string): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** The URL of another database on the server of `url`. */
export function databaseUrl(name: string, url = POSTGRES_URL): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/** Runs statements on one short-lived connection to `url`. */
async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // A connection the server ends while idle reports here; the statement in flight rejects anyway.
  client.on('error', () => {});
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** True when the server at `url` answers a trivial query. */
export async function postgresAnswers(url = POSTGRES_URL): Promise<boolean> {
  try {
    return await withClient(url, async (client) => (await client.query('SELECT 1')).rowCount === 1);
  } catch {
    return false;
  }
}

/**
 * Fails the test file (its `import.meta.url`) at once, saying how to start the server, when
 * PostgreSQL does not answer: a backend a run cannot reach is never skipped silently.
 */
export async function requirePostgres(testFile: string): Promise<void> {
  if (await postgresAnswers()) return;
  const file = relative(ROOT, fileURLToPath(testFile));
  throw new Error(
    `${file}: PostgreSQL does not answer at ${shown(POSTGRES_URL)}; start it (${START_POSTGRES}) or point TOOLGATE_TEST_POSTGRES_URL at a server.`,
  );
}

/** A database of its own for a test file, on the server of {@link POSTGRES_URL}. */
export interface TestDatabase {
  name: string;
  /** Its URL, for the stores under test. */
  url: string;
  /** Runs one statement in it, as the role of {@link POSTGRES_URL} (schemas, checks of the catalog). */
  query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<R[]>;
  /** Drops it, and with it every schema and table; connections still open to it are cut. */
  drop(): Promise<void>;
}

/**
 * Creates a database with a random name. `icuLocale` gives it a linguistic default collation (ICU's
 * 'en-US', as many production servers have) instead of the server's, so that any ordering or
 * comparison that relies on byte order without saying so shows.
 */
export async function createDatabase(options: { icuLocale?: string } = {}): Promise<TestDatabase> {
  const name = randomName('toolgate_test');
  const collation =
    options.icuLocale === undefined
      ? ''
      : ` TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE ${pg.escapeLiteral(options.icuLocale)}`;
  await withClient(POSTGRES_URL, (client) =>
    client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}${collation}`),
  );
  const url = databaseUrl(name);
  const admin = new pg.Pool({ connectionString: url, max: 2, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  admin.on('error', () => {});
  let dropped: Promise<void> | undefined;
  return {
    name,
    url,
    async query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []) {
      return (await admin.query<R>(sql, params)).rows;
    },
    drop() {
      dropped ??= (async () => {
        await admin.end();
        await withClient(POSTGRES_URL, (client) =>
          client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`),
        );
      })();
      return dropped;
    },
  };
}
