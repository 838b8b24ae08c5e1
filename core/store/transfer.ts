import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { MIGRATIONS } from './migrations.js';
import { PostgresDb, type PgStatements } from './postgres/db.js';
import { PostgresStore } from './postgres/index.js';
import type { HashSecretRecord } from './types.js';

/*
 * `toolgate store migrate`: moves a deployment from its SQLite database into PostgreSQL, row by row
 * and verbatim. Sealed values (credentials, OAuth app secrets, hashing secrets) are bound to the ids
 * of their rows and opened by the same master key, and API keys are stored as hashes under those
 * hashing secrets: copied unchanged, everything opens and verifies as before, and the master key stays
 * what it was. Nothing is re-sealed, and the source is opened read-only.
 *
 * Resumable: every batch is one transaction inserting with ON CONFLICT DO NOTHING, so a run stopped
 * anywhere (crash, Ctrl-C, network) leaves whole batches, and running again inserts only what is
 * missing. A row the target holds already must equal the source's; one that differs is reported,
 * never overwritten nor silently kept. Once a run has verified every table, the target is the
 * deployment: later runs only compare, so that none copies back what the new gateways deleted since
 * (a used one-time link, a removed connection).
 */

/** Rows per INSERT (and transaction): 500 rows of at most 13 columns stay far below 65,535 parameters. */
const BATCH = 500;

/** The schema version this Toolgate moves: the last SQLite migration (PostgreSQL has the same numbers). */
const LATEST = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** The target's meta entry saying when a run verified the move complete (never in a source). */
const MOVED = 'moved_from_sqlite_at';

/**
 * How a table moves. The SQLite schema (migrations.ts) and the PostgreSQL one (postgres/migrations.ts)
 * have the same tables and columns but one: PostgreSQL's `seq` on reports and connection_events, an
 * identity column that breaks ties of created_at as SQLite's rowid does. It is not copied: rows are
 * inserted in rowid order, so PostgreSQL numbers them in the same order.
 */
interface Table {
  name: string;
  /** Its primary key: how a row the target holds already is found. */
  key: string;
  /** Every column both schemas have, copied verbatim, as a SQL column list. */
  columns: string;
  /** A column only PostgreSQL has, which it fills itself. */
  generated?: 'seq';
  /**
   * Rows with `expires_at` in the past are left out (one-time links, dashboard sessions): they can no
   * longer be used, and the gateway would purge them.
   */
  expires?: true;
}

/** The names in a table's column list. */
function columnNames(table: Table): string[] {
  return table.columns.split(', ');
}

/** Every table but schema_migrations (the target has its own), parents before the rows that refer to them. */
const TABLES: readonly Table[] = [
  { name: 'meta', key: 'key', columns: 'key, value' },
  { name: 'clients', key: 'id', columns: 'id, name, created_at' },
  { name: 'key_hash_secrets', key: 'version', columns: 'version, sealed, created_at' },
  {
    name: 'api_keys',
    key: 'id',
    columns: 'id, client_id, type, hash, hash_version, hint, created_at, last_used_at, revoked_at',
  },
  { name: 'scopes', key: 'id', columns: 'id, client_id, org_id, user_id, created_at' },
  {
    name: 'reports',
    key: 'id',
    columns: 'id, scope_id, summary, details, provider, tool, created_at, resolved_at',
    generated: 'seq',
  },
  {
    name: 'connections',
    key: 'id',
    columns:
      'id, scope_id, provider, state, fields, account, credentials, oauth_app, expires_at, created_at, updated_at',
  },
  {
    name: 'links',
    key: 'token_hash',
    columns: 'token_hash, scope_id, provider, purpose, payload, expires_at, created_at',
    expires: true,
  },
  {
    name: 'connection_events',
    key: 'id',
    columns: 'id, scope_id, provider, event, detail, created_at',
    generated: 'seq',
  },
  // No foreign key (an app's client_id is '' for the operator's default), but it names clients.
  {
    name: 'oauth_apps',
    key: 'id',
    columns:
      'id, provider, client_id, org_id, oauth_client_id, client_secret, branding, issuer, server, created_at, superseded_at',
  },
  { name: 'admin_credentials', key: 'name', columns: 'name, password_hash, updated_at' },
  {
    name: 'dashboard_sessions',
    key: 'id_hash',
    columns: 'id_hash, csrf_token, created_at, expires_at',
    expires: true,
  },
  { name: 'signin_failures', key: 'id', columns: 'id, source, created_at' },
  {
    name: 'tool_policies',
    key: 'id',
    columns: 'id, client_id, org_id, surface, allow_list, deny_list, updated_at',
  },
  {
    name: 'auth_server_records',
    key: 'id_hash',
    columns: 'model, id_hash, payload, grant_id, uid_hash, expires_at, consumed_at',
    expires: true,
  },
  {
    name: 'front_door_grants',
    key: 'grant_id',
    columns:
      'grant_id, key_id, scope_id, app_id, app_name, app_uri, via, created_at, last_used_at, revoked_at',
  },
  {
    name: 'identity_providers',
    key: 'key_id',
    columns:
      'key_id, name, display_name, issuer, oauth_client_id, client_secret, user_claim, org_claim, created_at, updated_at',
  },
  // No foreign keys: an entry outlives the key and client it names.
  {
    name: 'audit_events',
    key: 'id',
    columns: 'id, at, context, latency_us, upstream_status, message',
  },
];

/** A row as both drivers read it: TEXT as strings, INTEGER as numbers. */
type Row = Record<string, string | number | null>;

export interface TransferOptions {
  /** The SQLite database of the deployment to move (`toolgate.db` in its data dir). */
  from: string;
  /** The PostgreSQL database to move it into: a postgres:// or postgresql:// URL. */
  to: string;
  /**
   * Opens a hashing secret with the master key the moved deployment keeps; throws when that key
   * cannot. The caller knows where the envelope is bound (auth/, above this layer).
   */
  openHashSecret: (secret: HashSecretRecord) => void;
  /** After each batch of a table, and once for a table with nothing to move. */
  onProgress?: (progress: { table: string; done: number; total: number }) => void;
}

/** One table's figures at the end of a run. */
export interface TableTransfer {
  table: string;
  /** Rows of the source to move (expired ones left out). */
  source: number;
  /** Expired rows of the source left out. */
  skipped: number;
  /** Rows this run inserted. */
  copied: number;
  /** Rows the target held already, equal to the source's (an earlier run's). */
  present: number;
  /** Rows in the target now, counted as in the source (expired ones left out). */
  target: number;
}

/** A source row the target does not hold as it is. */
export interface Difference {
  table: string;
  /** Which row, as `column=value`; a key that is the hash of a secret token is not shown. */
  row: string;
  /** What is wrong with it, in words (column names at most, never a value). */
  problem: string;
}

export interface TransferReport {
  /** The target URL, its password hidden. */
  target: string;
  /** When an earlier run completed the move; this run then only compared. */
  movedAt: string | undefined;
  tables: TableTransfer[];
  differences: Difference[];
  /** No difference, and every table holds as many rows in the target as in the source. */
  ok: boolean;
}

/** A database URL fit to print: its password replaced by `***`. */
export function redactedUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

/**
 * Copies every table of the SQLite database `from` into the PostgreSQL database `to` (migrated
 * first), then counts both sides. Refuses, before writing anything, when the source is missing, not
 * at this Toolgate's schema version, or unreadable with its master key, and when the target holds
 * another deployment. Reads the source in one snapshot; stop the old gateway first all the same, or
 * what it writes during the run is left behind.
 */
export async function transferStore(options: TransferOptions): Promise<TransferReport> {
  const { from, to } = options;
  if (!/^postgres(ql)?:\/\/./.test(to)) {
    throw new Error(
      `--to must be a PostgreSQL URL, postgres://USER:PASSWORD@HOST:5432/DATABASE (or postgresql://), not "${to.split(':')[0]}:…".`,
    );
  }
  const target = redactedUrl(to);
  if (!existsSync(from)) {
    throw new Error(
      `No Toolgate database at ${from}. --from is the data dir of the gateway to move (its TOOLGATE_DATA_DIR), which holds toolgate.db.`,
    );
  }
  const source = new Database(from, { readonly: true, fileMustExist: true });
  try {
    checkSourceVersion(source, from);
    checkColumns(
      'The SQLite database',
      source
        .prepare<[], { entry: string }>(
          `SELECT m.name || '.' || c.name AS entry FROM sqlite_master m, pragma_table_info(m.name) c
           WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.name <> 'schema_migrations'`,
        )
        .all(),
      false,
    );
    // One read transaction: every table is read in the same snapshot, counts included.
    source.exec('BEGIN');
    const secrets = source
      .prepare<[], HashSecretRecord>('SELECT version, sealed FROM key_hash_secrets ORDER BY version')
      .all();
    for (const secret of secrets) checkMasterKey(options, secret);

    const store = new PostgresStore(to);
    try {
      await store.migrate();
    } catch (error) {
      throw new Error(`Could not prepare the PostgreSQL database ${target}: ${messageOf(error)}`);
    } finally {
      await store.close();
    }
    const db = new PostgresDb(to, { max: 1 });
    try {
      await checkTarget(db, secrets);
      const movedAt = (await db.one<{ value: string }>('SELECT value FROM meta WHERE key = $1', MOVED))
        ?.value;
      const now = new Date().toISOString();
      const tables: TableTransfer[] = [];
      const differences: Difference[] = [];
      for (const table of TABLES) {
        const moved = await moveTable(
          source,
          db,
          table,
          { now, copy: movedAt === undefined },
          options.onProgress,
        );
        tables.push(moved.figures);
        differences.push(...moved.differences);
      }
      const ok = differences.length === 0 && tables.every((t) => t.source === t.target);
      if (ok) {
        await db.run(
          'INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING',
          MOVED,
          now,
        );
      }
      return { target, movedAt, tables, differences, ok };
    } finally {
      await db.close();
    }
  } finally {
    source.close();
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function checkSourceVersion(source: Database.Database, file: string): void {
  const hasTable = source
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'")
    .get();
  if (!hasTable) throw new Error(`${file} is not a Toolgate database (it has no schema_migrations table).`);
  const version =
    source
      .prepare<[], { version: number | null }>('SELECT MAX(version) AS version FROM schema_migrations')
      .get()?.version ?? 0;
  if (version < LATEST) {
    // Any command that opens the store applies the pending migrations (admin/open.ts).
    throw new Error(
      `${file} is at schema version ${version}; this Toolgate moves version ${LATEST}. Open it once with this Toolgate, ` +
        `with the old gateway stopped and its settings (TOOLGATE_DATA_DIR, TOOLGATE_MASTER_KEY): \`toolgate reports list\` ` +
        '(or `toolgate serve`) applies the pending migrations. Then run store migrate again.',
    );
  }
  if (version > LATEST) {
    throw new Error(
      `${file} is at schema version ${version}, written by a newer Toolgate than this one (version ${LATEST}): run that version's \`toolgate store migrate\`.`,
    );
  }
}

/**
 * Holds a database's tables and columns to {@link TABLES}: a column this module does not map would
 * otherwise be left behind without a word. `entries` are `table.column`.
 */
function checkColumns(what: string, entries: { entry: string }[], postgres: boolean): void {
  const expected = new Set(
    TABLES.flatMap((t) => [
      ...columnNames(t).map((c) => `${t.name}.${c}`),
      ...(postgres && t.generated ? [`${t.name}.${t.generated}`] : []),
    ]),
  );
  const actual = new Set(entries.map((e) => e.entry));
  const unmapped = [...actual].filter((e) => !expected.has(e));
  const missing = [...expected].filter((e) => !actual.has(e));
  if (unmapped.length > 0 || missing.length > 0) {
    throw new Error(
      `${what} does not have the tables and columns store migrate copies (core/store/transfer.ts)` +
        (unmapped.length > 0 ? `; not mapped: ${unmapped.join(', ')}` : '') +
        (missing.length > 0 ? `; missing: ${missing.join(', ')}` : '') +
        '. Nothing was copied.',
    );
  }
}

/** Refuses when the master key cannot open the hashing secret: the moved deployment would be unreadable. */
function checkMasterKey(options: TransferOptions, secret: HashSecretRecord): void {
  try {
    options.openHashSecret(secret);
  } catch (error) {
    throw new Error(
      `The master key does not open this deployment's API-key hashing secret (version ${secret.version}): ${messageOf(error)}. ` +
        'Moved with it, no API key would verify and no stored credential would open. Run store migrate with the master key ' +
        'the old gateway runs with: its TOOLGATE_MASTER_KEY, or, when that was unset, the master.key file in its data dir. Nothing was copied.',
    );
  }
}

/**
 * The target, migrated: at this Toolgate's schema version, with the mapped columns, and empty or
 * holding this deployment (an earlier run's rows). Hashing secrets are created once per deployment
 * and never change but by master-key rotation: a target with one the source does not hold belongs to
 * another deployment, and no API key of either would verify in the other's.
 */
async function checkTarget(db: PgStatements, secrets: HashSecretRecord[]): Promise<void> {
  const applied = await db.one<{ version: number | null }>(
    'SELECT MAX(version) AS version FROM schema_migrations',
  );
  if (applied?.version !== LATEST) {
    throw new Error(
      `The PostgreSQL database is at schema version ${applied?.version ?? 0}, written by a newer Toolgate than this one (version ${LATEST}): run that version's \`toolgate store migrate\`.`,
    );
  }
  checkColumns(
    'The PostgreSQL database',
    // Only the tables Toolgate has: the database may hold others', which the move leaves alone.
    await db.all<{ entry: string }>(
      `SELECT table_name || '.' || column_name AS entry FROM information_schema.columns
       WHERE table_schema = current_schema() AND table_name = ANY($1)`,
      TABLES.map((t) => t.name),
    ),
    true,
  );
  const held = await db.all<HashSecretRecord>(
    'SELECT version, sealed FROM key_hash_secrets ORDER BY version',
  );
  const ours = new Map(secrets.map((s) => [s.version, s.sealed]));
  if (held.some((s) => ours.get(s.version) !== s.sealed)) {
    throw new Error(
      "The PostgreSQL database holds another Toolgate deployment (its API-key hashing secret differs from this one's: " +
        "a gateway or toolgate command ran on it, or this deployment's master key was rotated since an earlier run). " +
        'The two cannot be merged. Move into an empty database (or drop and recreate this one). Nothing was copied.',
    );
  }
}

/**
 * Moves one table in rowid order, a batch per transaction (or, with `copy` false, only compares);
 * counts both sides afterwards.
 */
async function moveTable(
  source: Database.Database,
  db: PostgresDb,
  table: Table,
  run: { now: string; copy: boolean },
  onProgress: TransferOptions['onProgress'],
): Promise<{ figures: TableTransfer; differences: Difference[] }> {
  const { name } = table;
  const live = table.expires ? [run.now] : [];
  const count = (where: string): number =>
    source.prepare<unknown[], { n: number }>(`SELECT COUNT(*) AS n FROM ${name}${where}`).get(...live)!.n;
  const total = count(table.expires ? ' WHERE expires_at > ?' : '');
  const skipped = table.expires ? count(' WHERE expires_at <= ?') : 0;
  const page = source.prepare<unknown[], Row & { source_rowid: number }>(
    `SELECT rowid AS source_rowid, ${table.columns} FROM ${name}
     WHERE rowid > ?${table.expires ? ' AND expires_at > ?' : ''} ORDER BY rowid LIMIT ${BATCH}`,
  );
  const differences: Difference[] = [];
  let after = -1;
  let done = 0;
  let copied = 0;
  let present = 0;
  for (let rows = page.all(after, ...live); rows.length > 0; rows = page.all(after, ...live)) {
    const batch = await db.transaction((tx) => moveBatch(tx, table, rows, run.copy));
    copied += batch.copied;
    present += batch.present;
    differences.push(...batch.differences);
    done += rows.length;
    after = rows[rows.length - 1]!.source_rowid;
    onProgress?.({ table: name, done, total });
  }
  if (total === 0) onProgress?.({ table: name, done: 0, total: 0 });
  const where = [
    ...(table.expires ? ['expires_at > $1'] : []),
    // The target's own entry, which no source has.
    ...(name === 'meta' ? [`key <> '${MOVED}'`] : []),
  ];
  const held = await db.one<{ n: number }>(
    `SELECT COUNT(*)::integer AS n FROM ${name}${where.length > 0 ? ` WHERE ${where.join(' AND ')}` : ''}`,
    ...live,
  );
  return {
    figures: { table: name, source: total, skipped, copied, present, target: held?.n ?? 0 },
    differences,
  };
}

/**
 * Inserts rows, in their order (with `copy`), leaving those whose key or other unique values the
 * target holds already; those must equal the source's, else each is a {@link Difference}.
 */
async function moveBatch(
  tx: PgStatements,
  table: Table,
  rows: Row[],
  copy: boolean,
): Promise<{ copied: number; present: number; differences: Difference[] }> {
  const { name, key } = table;
  const columns = columnNames(table);
  const tuples = rows.map(
    (_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(', ')})`,
  );
  const inserted = copy
    ? await tx.all<{ key: string | number }>(
        `INSERT INTO ${name} (${table.columns}) VALUES ${tuples.join(', ')}
         ON CONFLICT DO NOTHING RETURNING ${key} AS key`,
        ...rows.flatMap((row) => columns.map((c) => row[c] ?? null)),
      )
    : [];
  const fresh = new Set(inserted.map((r) => r.key));
  const rest = rows.filter((row) => !fresh.has(row[key]!));
  if (rest.length === 0) return { copied: inserted.length, present: 0, differences: [] };
  const held = new Map(
    (
      await tx.all<Row>(
        `SELECT ${table.columns} FROM ${name} WHERE ${key} = ANY($1)`,
        rest.map((row) => row[key]) as string[] | number[],
      )
    ).map((row) => [row[key], row]),
  );
  const differences = rest.flatMap((row): Difference[] => {
    const there = held.get(row[key]);
    const differ = there ? columns.filter((c) => there[c] !== row[c]) : [];
    if (there && differ.length === 0) return [];
    const problem = there
      ? `differs in ${differ.join(', ')}`
      : copy
        ? 'another row holds its unique values'
        : 'not in the target';
    // links and dashboard_sessions are keyed by the hash of a secret token: not shown.
    const shown = key.endsWith('_hash') ? `${key}=(hash of a token)` : `${key}=${String(row[key])}`;
    return [{ table: name, row: shown, problem }];
  });
  return { copied: inserted.length, present: rest.length - differences.length, differences };
}

/** How many differences {@link formatTransfer} lists one by one. */
const SHOWN_DIFFERENCES = 20;

/** The report as `toolgate store migrate` prints it: counts per table, what was left out, what differs. */
export function formatTransfer(report: TransferReport): string {
  const header = ['table', 'source', 'target', 'copied now', 'already there'];
  const rows = report.tables.map((t) => [t.table, t.source, t.target, t.copied, t.present].map(String));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]): string =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ');
  const out = report.movedAt
    ? [
        `${report.target} holds this deployment since a completed move (${report.movedAt}): compared only, nothing copied.`,
      ]
    : [];
  out.push(line(header), ...rows.map(line));
  const skipped = report.tables.filter((t) => t.skipped > 0);
  if (skipped.length > 0) {
    out.push(
      `Left out as expired (no longer usable): ${skipped.map((t) => `${t.skipped} of ${t.table}`).join(', ')}.`,
    );
  }
  const { differences } = report;
  if (differences.length > 0) {
    out.push(
      `${differences.length} row(s) of the source are not in the target as they are, and were left as they are there:`,
      ...differences.slice(0, SHOWN_DIFFERENCES).map((d) => `  ${d.table} ${d.row}: ${d.problem}`),
      ...(differences.length > SHOWN_DIFFERENCES
        ? [`  and ${differences.length - SHOWN_DIFFERENCES} more`]
        : []),
      report.movedAt
        ? 'Since the move, the gateways on PostgreSQL changed them (as they do), or the old gateway ran again: ' +
            'what it wrote after the move stays behind.'
        : 'The old gateway changed them since an earlier run (stop it before moving), or the database holds other data. ' +
            'To start over, drop and recreate the target database and run store migrate again.',
    );
  }
  const uneven = report.tables.filter((t) => t.source !== t.target).map((t) => t.table);
  out.push(
    uneven.length === 0
      ? `Verified: every table holds as many rows in ${report.target} as in the source.`
      : `Counts differ for ${uneven.join(', ')}: the target does not hold exactly the source's rows.`,
  );
  return out.join('\n');
}
