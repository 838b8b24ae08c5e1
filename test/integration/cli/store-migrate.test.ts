import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { copyFileSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../../core/store/migrations.js';
import { PostgresStore } from '../../../core/store/postgres/index.js';
import { runToolgate, spawnToolgate, startServe } from '../../helpers/cli.js';
import { connect, SYSTEM_TOOLS } from '../../helpers/clients.js';
import { PETSHOP_MANIFESTS, petshopApi } from '../../helpers/petshop.js';
import { freePort } from '../../helpers/ports.js';
import { createDatabase, requirePostgres, type TestDatabase } from '../../helpers/postgres.js';
import { deleteKeys, randomPrefix, requireRedis, TEST_REDIS_URL } from '../../helpers/redis.js';
import { jsonAnswer, startReceiver, type Receiver } from '../../helpers/receiver.js';
import { expectToolOk } from '../../helpers/results.js';

const FILE = 'test/integration/cli/store-migrate.test.ts';
const ACME = fileURLToPath(new URL('../../fixtures/catalog/oauth2/acme.yaml', import.meta.url));
const PET_KEY = 'ps_moved1';
const ACME_SECRET = 'acme-secret-moved-1';

// A deployment built on SQLite as a user builds it (`toolgate serve`, the CLI, an MCP client),
// moved with `toolgate store migrate`, then served from PostgreSQL + Redis.
await requirePostgres(import.meta.url);
await requireRedis(FILE);

let petApi: Receiver;
/** Acme Cloud's token endpoint (POST /token) and API (GET /me). */
let acmeApi: Receiver;
let dataDir: string;
const dirs: string[] = [];
const databases: TestDatabase[] = [];
const prefix = randomPrefix('store-migrate');
/** Settings both gateways share: the catalog and where its providers are. */
let common: Record<string, string>;
let soloKey: string;
let platformKey: string;
let platformKeyId: string;
let linkToken: string;
/** Everything `store migrate` printed in this file: it must hold no secret. */
const printed: string[] = [];

const tempDir = (label: string): string => {
  const dir = mkdtempSync(join(tmpdir(), `toolgate-${label}-`));
  dirs.push(dir);
  return dir;
};

const database = async (): Promise<TestDatabase> => {
  const db = await createDatabase();
  databases.push(db);
  return db;
};

const migrate = async (
  from: string,
  to: string,
  env: Record<string, string> = {},
): ReturnType<typeof runToolgate> => {
  const run = await runToolgate(['store', 'migrate', '--from', from, '--to', to], env);
  printed.push(run.stdout, run.stderr);
  return run;
};

/** The per-table figures `store migrate` printed: table -> [source, target, copied now, already there]. */
function printedCounts(stdout: string): Map<string, [number, number, number, number]> {
  const rows = [...stdout.matchAll(/^(\w+) +(\d+) +(\d+) +(\d+) +(\d+)$/gm)];
  return new Map(rows.map((m) => [m[1]!, [Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])]]));
}

/** Reads the source deployment's database (read-only, as the move does). */
function readSource<T>(read: (db: Database.Database) => T): T {
  const db = new Database(join(dataDir, 'toolgate.db'), { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

/** Every table of the SQLite deployment but schema_migrations, with its row count. */
const sourceCounts = (): Map<string, number> =>
  readSource(
    (db) =>
      new Map(
        db
          .prepare<[], { name: string }>(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> 'schema_migrations'",
          )
          .all()
          .map(({ name }) => [
            name,
            db.prepare<[], { n: number }>(`SELECT COUNT(*) AS n FROM ${name}`).get()!.n,
          ]),
      ),
  );

const targetCount = async (db: TestDatabase, table: string): Promise<number> =>
  (await db.query<{ n: number }>(`SELECT COUNT(*)::integer AS n FROM ${table}`))[0]!.n;

/** Report ids in the order the store breaks created_at ties: rowid in SQLite, seq in PostgreSQL. */
const sourceReportOrder = (): string[] =>
  readSource((db) =>
    db
      .prepare<[], { id: string }>('SELECT id FROM reports ORDER BY rowid')
      .all()
      .map((r) => r.id),
  );
const targetReportOrder = async (db: TestDatabase): Promise<string[]> =>
  (await db.query<{ id: string }>('SELECT id FROM reports ORDER BY seq')).map((r) => r.id);

beforeAll(async () => {
  petApi = await startReceiver(
    petshopApi({
      keys: [PET_KEY],
      body: { email: 'ann@petshop.example', items: [{ id: 'p1', name: 'Rex' }] },
    }),
  );
  acmeApi = await startReceiver((req) =>
    req.url === '/token'
      ? jsonAnswer(200, {
          access_token: 'acme-access-1',
          refresh_token: 'acme-refresh-1',
          token_type: 'Bearer',
          expires_in: 3600,
          scope: 'read write',
        })
      : jsonAnswer(200, { login: 'ann-at-acme' }),
  );
  const manifests = tempDir('store-migrate-manifests');
  for (const file of [...PETSHOP_MANIFESTS, ACME]) copyFileSync(file, join(manifests, basename(file)));
  dataDir = tempDir('store-migrate-sqlite');
  common = {
    TOOLGATE_MANIFESTS_DIR: manifests,
    TOOLGATE_ALLOW_PRIVATE_NETWORK: '1',
    TOOLGATE_PROVIDER_PETSHOP_BASE_URL: petApi.url,
    TOOLGATE_PROVIDER_ACME_BASE_URL: acmeApi.url,
    TOOLGATE_PROVIDER_ACME_TOKEN_URL: `${acmeApi.url}/token`,
  };
  const env = { ...common, TOOLGATE_DATA_DIR: dataDir, TOOLGATE_PORT: String(await freePort()) };

  const old = await startServe(env);
  try {
    soloKey = /^ {2}(toolgate_\w+)$/m.exec(old.output())![1]!;
    const created = await runToolgate(['keys', 'create', '--client', 'acme', '--type', 'platform'], env);
    expect(created.code, created.stderr).toBe(0);
    platformKey = /^(toolgate_\w+)$/m.exec(created.stdout)![1]!;
    platformKeyId = /^Created (key_\w+)/m.exec(created.stdout)![1]!;
    const app = await runToolgate(
      ['oauth-app', 'set', 'acme', '--client-id', 'acme-client', '--org', 'org1', '--client', 'acme'],
      env,
      `${ACME_SECRET}\n`,
    );
    expect(app.code, app.stderr).toBe(0);

    const base = `http://127.0.0.1:${env.TOOLGATE_PORT}`;
    const ann = await connect('2026-07-28', new URL(`${base}/mcp/?org_id=org1&user_id=ann`), {
      'X-API-Key': platformKey,
    });
    expectToolOk(
      await ann.callTool('connect_provider', { provider: 'petshop', credentials: { api_key: PET_KEY } }),
      'ann@petshop.example',
    );
    for (const summary of ['Rex is missing', 'Rex is missing again', 'The list is slow'])
      expectToolOk(await ann.callTool('report_problem', { summary, provider: 'petshop' }), 'was filed');
    // A consent link handed out before the move, used after it.
    const started = expectToolOk(await ann.callTool('connect_provider', { provider: 'acme' }));
    linkToken = /\/oauth\/start\/([\w-]+)/.exec(started)![1]!;
    await ann.close();
  } finally {
    expect(await old.stop()).toBe(0);
  }
}, 120_000);

afterAll(async () => {
  await petApi?.close();
  await acmeApi?.close();
  for (const db of databases) await db.drop();
  await deleteKeys(prefix);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('toolgate store migrate', () => {
  let target: TestDatabase;
  /** The PostgreSQL deployment's settings: the old master key, from the old data dir's key file. */
  let postgresEnv: Record<string, string>;

  beforeAll(async () => {
    target = await database();
    postgresEnv = {
      ...common,
      TOOLGATE_DATA_DIR: tempDir('store-migrate-postgres'),
      TOOLGATE_DATABASE_URL: target.url,
      TOOLGATE_REDIS_URL: TEST_REDIS_URL,
      TOOLGATE_REDIS_PREFIX: prefix,
      TOOLGATE_MASTER_KEY: readFileSync(join(dataDir, 'master.key'), 'utf8').trim(),
    };
  });

  it('copies every table, prints counts that match both databases, and says what to do next', async () => {
    const run = await migrate(dataDir, target.url);
    expect(run.code, run.stderr).toBe(0);
    const source = sourceCounts();
    const counts = printedCounts(run.stdout);
    expect([...counts.keys()].sort()).toEqual([...source.keys()].sort());
    for (const [table, [inSource, inTarget, copied, present]] of counts) {
      expect(inSource, table).toBe(source.get(table));
      // meta also holds the target's own record of the completed move.
      expect(inTarget + (table === 'meta' ? 1 : 0), table).toBe(await targetCount(target, table));
      expect([inTarget, copied, present], table).toEqual([inSource, inSource, 0]);
    }
    expect(counts.get('clients')![0]).toBe(2);
    expect(counts.get('api_keys')![0]).toBe(2);
    expect(counts.get('connections')![0]).toBe(1);
    expect(counts.get('reports')![0]).toBe(3);
    expect(counts.get('oauth_apps')![0]).toBe(1);
    expect(counts.get('links')![0]).toBe(1);
    // The audit trail: 5 tool calls, a connection, 2 keys and an OAuth app (the old gateway's and the CLI's).
    expect(counts.get('audit_events')![0]).toBe(9);
    expect(run.stdout).toMatch(/^scopes: \d+\/\d+ rows$/m);
    expect(run.stdout).toContain('Verified: every table holds as many rows');
    expect(run.stdout).toContain(`TOOLGATE_MASTER_KEY="$(cat ${join(dataDir, 'master.key')})"`);
    expect(await target.query("SELECT 1 FROM meta WHERE key = 'moved_from_sqlite_at'")).toHaveLength(1);
    expect(await targetReportOrder(target)).toEqual(sourceReportOrder());
  });

  it('finds everything there on a second run, and changes nothing', async () => {
    const before = await target.query('SELECT * FROM connections');
    const run = await migrate(dataDir, target.url);
    expect(run.code, run.stderr).toBe(0);
    for (const [table, [inSource, inTarget, copied, present]] of printedCounts(run.stdout))
      expect([inTarget, copied, present], table).toEqual([inSource, 0, inSource]);
    expect(await target.query('SELECT * FROM connections')).toEqual(before);
  });

  it('is served from PostgreSQL: the old keys, connection, OAuth app, link and reports work as before', async () => {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const moved = await startServe({ ...postgresEnv, TOOLGATE_PORT: String(port) });
    try {
      // The deployment is known: no first-start key, no new dashboard password.
      expect(moved.output()).not.toContain('Your first API key');
      expect(moved.output()).not.toContain('admin password');

      const solo = await connect('2025 (v1 client)', new URL(`${url}/mcp/`), { 'X-API-Key': soloKey });
      expect(await solo.listToolNames()).toEqual(SYSTEM_TOOLS);
      await solo.close();

      const ann = await connect('2026-07-28', new URL(`${url}/mcp/?org_id=org1&user_id=ann`), {
        'X-API-Key': platformKey,
      });
      expect(await ann.listToolNames()).toContain('petshop_list_pets');
      const calls = petApi.received.length;
      expectToolOk(await ann.callTool('petshop_list_pets', { limit: 1 }), 'Rex');
      // The moved sealed credentials opened: the Pet Shop API saw the key the user gave.
      expect(petApi.received.slice(calls).map((r) => r.headers.authorization)).toEqual([`Bearer ${PET_KEY}`]);

      // The consent link from before the move leads on, with the organization's moved OAuth app.
      const start = await fetch(`${url}/oauth/start/${linkToken}`, { method: 'POST', redirect: 'manual' });
      expect(start.status).toBe(303);
      const consent = new URL(start.headers.get('location')!);
      expect(consent.searchParams.get('client_id')).toBe('acme-client');
      const callback = await fetch(
        `${url}/oauth/callback?code=moved-code&state=${consent.searchParams.get('state')!}`,
      );
      expect(callback.status, await callback.clone().text()).toBe(200);
      const token = acmeApi.received.find((r) => r.url === '/token')!;
      // The moved, sealed client secret opened: the token endpoint saw it.
      expect(token.headers.authorization).toBe(
        `Basic ${Buffer.from(`acme-client:${ACME_SECRET}`).toString('base64')}`,
      );
      expectToolOk(await ann.callTool('acme_me'), 'ann-at-acme');
      await ann.close();

      const [keys, reports, apps] = await Promise.all(
        [
          ['keys', 'list'],
          ['reports', 'list'],
          ['oauth-app', 'list'],
        ].map((args) => runToolgate(args, postgresEnv)),
      );
      expect(keys!.stdout).toContain(`${platformKeyId}\tclient=acme\ttype=platform`);
      expect(keys!.stdout).toContain('client=default\ttype=solo');
      expect(reports!.stdout).toContain('org_id=org1 user_id=ann\tprovider=petshop\tRex is missing again');
      expect(apps!.stdout).toContain('acme\tclient=acme org_id=org1\tclient_id=acme-client');
    } finally {
      expect(await moved.stop()).toBe(0);
    }
  });

  it('only compares once the move is complete: what the new deployment changed is reported, not copied back', async () => {
    const before = await target.query('SELECT * FROM connections ORDER BY id');
    const run = await migrate(dataDir, target.url);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('compared only, nothing copied');
    // The link was used, and a connection added, on PostgreSQL: the counts no longer match.
    expect(run.stdout).toMatch(/^Counts differ for .*connections.*links/m);
    expect(run.stdout).toContain('links token_hash=(hash of a token): not in the target');
    // The used link stays used; the connections stay as the new deployment has them.
    expect(await targetCount(target, 'links')).toBe(0);
    expect(await target.query('SELECT * FROM connections ORDER BY id')).toEqual(before);
  });
});

describe('toolgate store migrate, interrupted', () => {
  it('is run again and finishes the job', async () => {
    const target = await database();
    const store = new PostgresStore(target.url);
    await store.migrate();
    await store.close();
    // Holding a lock on reports stops the move there: the tables before it are committed by then.
    const locker = new pg.Client({ connectionString: target.url });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE reports IN EXCLUSIVE MODE');
    const child = spawnToolgate(['store', 'migrate', '--from', dataDir, '--to', target.url], {});
    const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    let stdout = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (/^scopes: /m.test(stdout)) resolve();
      });
      void exited.then(() => reject(new Error(`store migrate ended before it moved scopes:\n${stdout}`)));
    });
    // Ctrl-C, while it waits to write reports.
    child.kill('SIGINT');
    expect((await exited)[1]).toBe('SIGINT');
    printed.push(stdout);
    await locker.query('COMMIT');
    await locker.end();
    const source = sourceCounts();
    expect(await targetCount(target, 'scopes')).toBe(source.get('scopes'));
    expect(await targetCount(target, 'reports')).toBe(0);
    expect(await targetCount(target, 'connections')).toBe(0);

    const run = await migrate(dataDir, target.url);
    expect(run.code, run.stderr).toBe(0);
    const counts = printedCounts(run.stdout);
    expect(counts.get('scopes')).toEqual([
      source.get('scopes'),
      source.get('scopes'),
      0,
      source.get('scopes'),
    ]);
    expect(counts.get('reports')).toEqual([3, 3, 3, 0]);
    for (const [table, [inSource, inTarget]] of counts) expect(inTarget, table).toBe(inSource);
    expect(await targetReportOrder(target)).toEqual(sourceReportOrder());
  });
});

describe('toolgate store migrate, some time later', () => {
  it('leaves expired one-time links behind, and says so', async () => {
    const later = tempDir('store-migrate-later');
    cpSync(dataDir, later, { recursive: true });
    // The deployment as it is once the consent link has run out (links live 10 minutes).
    const db = new Database(join(later, 'toolgate.db'));
    db.prepare('UPDATE links SET expires_at = ?').run(new Date(Date.now() - 1_000).toISOString());
    db.close();
    const target = await database();
    const run = await migrate(later, target.url);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Left out as expired (no longer usable): 1 of links.');
    expect(printedCounts(run.stdout).get('links')).toEqual([0, 0, 0, 0]);
    expect(await targetCount(target, 'links')).toBe(0);
  });
});

describe('toolgate store migrate refuses, saying why, and copies nothing', () => {
  it('a wrong master key, a target that is not PostgreSQL, a missing database or flag', async () => {
    const target = await database();
    const empty = tempDir('store-migrate-empty');
    const [wrongKey, sqliteTarget, noDatabase, noTarget, unknown] = await Promise.all([
      migrate(dataDir, target.url, { TOOLGATE_MASTER_KEY: randomBytes(32).toString('base64') }),
      migrate(dataDir, `sqlite:${join(empty, 'toolgate.db')}`),
      migrate(empty, target.url),
      runToolgate(['store', 'migrate', '--from', dataDir], {}),
      runToolgate(['store', 'copy'], {}),
    ]);
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toContain(
      "The master key does not open this deployment's API-key hashing secret",
    );
    expect(sqliteTarget.code).toBe(1);
    expect(sqliteTarget.stderr).toContain('--to must be a PostgreSQL URL');
    expect(noDatabase.code).toBe(1);
    expect(noDatabase.stderr).toContain(`No Toolgate database at ${join(empty, 'toolgate.db')}`);
    expect(noTarget.code).toBe(2);
    expect(noTarget.stderr).toContain('store migrate needs --to');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown store command: copy');
    // Refused before the target was touched: not even migrated.
    expect(await target.query("SELECT to_regclass('schema_migrations') AS found")).toEqual([{ found: null }]);
  });

  it('a database that holds another deployment', async () => {
    const target = await database();
    // A command run on it first made it a deployment of its own (its own hashing secret).
    const other = await runToolgate(['keys', 'list'], {
      TOOLGATE_DATA_DIR: tempDir('store-migrate-other'),
      TOOLGATE_DATABASE_URL: target.url,
      TOOLGATE_REDIS_URL: TEST_REDIS_URL,
      TOOLGATE_REDIS_PREFIX: prefix,
    });
    expect(other.code, other.stderr).toBe(0);
    const run = await migrate(dataDir, target.url);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('holds another Toolgate deployment');
    expect(await targetCount(target, 'clients')).toBe(0);
  });

  it('a database at an older schema version, until this version has opened it', async () => {
    const old = tempDir('store-migrate-old');
    const db = new Database(join(old, 'toolgate.db'));
    db.exec(
      'CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)',
    );
    db.exec(MIGRATIONS[0]!.sql);
    db.prepare('INSERT INTO schema_migrations VALUES (?, ?, ?)').run(
      1,
      MIGRATIONS[0]!.name,
      new Date().toISOString(),
    );
    db.close();
    const target = await database();
    const refused = await migrate(old, target.url);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `is at schema version 1; this Toolgate moves version ${MIGRATIONS[MIGRATIONS.length - 1]!.version}`,
    );
    expect(refused.stderr).toContain('`toolgate reports list`');
    // As the message says: this version's CLI applies the migrations, and the move goes ahead.
    expect((await runToolgate(['reports', 'list'], { TOOLGATE_DATA_DIR: old })).code).toBe(0);
    const moved = await migrate(old, target.url);
    expect(moved.code, moved.stderr).toBe(0);
  });
});

describe('what store migrate printed', () => {
  it('holds no secret and no sealed value', () => {
    const sealed = readSource((db) => [
      ...db.prepare<[], { v: string }>('SELECT sealed AS v FROM key_hash_secrets').all(),
      ...db.prepare<[], { v: string }>('SELECT credentials AS v FROM connections').all(),
      ...db.prepare<[], { v: string }>('SELECT client_secret AS v FROM oauth_apps').all(),
      ...db.prepare<[], { v: string }>('SELECT hash AS v FROM api_keys').all(),
      ...db.prepare<[], { v: string }>('SELECT password_hash AS v FROM admin_credentials').all(),
    ]);
    const secrets = [
      PET_KEY,
      ACME_SECRET,
      soloKey,
      platformKey,
      readFileSync(join(dataDir, 'master.key'), 'utf8').trim(),
      ...sealed.map((row) => row.v),
    ];
    expect(printed.length).toBeGreaterThan(10);
    for (const output of printed) for (const secret of secrets) expect(output).not.toContain(secret);
  });
});
