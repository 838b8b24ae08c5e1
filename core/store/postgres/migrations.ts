import type { Migration } from '../migrations.js';

/**
 * The PostgreSQL schema: the same numbered migrations as the SQLite one (../migrations.ts), reaching
 * the same tables, columns, constraints and indexes, so both stores give the same records. Each is
 * applied once, in order, in its own transaction (see PostgresStore.migrate). Never edit a released
 * migration: add the next number, here and in ../migrations.ts.
 *
 * Where PostgreSQL needs saying more than SQLite:
 * - Every TEXT column is `COLLATE "C"`: comparisons and ORDER BY go byte by byte, as SQLite's BINARY
 *   collation does, whatever the database's default collation (en_US sorts 'acme' before 'ACME').
 *   ISO timestamps stay TEXT, so they compare as strings in both stores and records are identical.
 * - reports and connection_events have `seq`, an identity column: it breaks ties of one millisecond
 *   in "newest first" (created_at DESC, seq DESC), as SQLite's rowid does; their indexes end in it.
 */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'clients, keys, scopes, reports',
    sql: `
CREATE TABLE meta (
  key TEXT COLLATE "C" PRIMARY KEY,
  value TEXT COLLATE "C" NOT NULL
);
CREATE TABLE clients (
  id TEXT COLLATE "C" PRIMARY KEY,
  name TEXT COLLATE "C" NOT NULL UNIQUE,
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE key_hash_secrets (
  version INTEGER PRIMARY KEY,
  sealed TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE api_keys (
  id TEXT COLLATE "C" PRIMARY KEY,
  client_id TEXT COLLATE "C" NOT NULL REFERENCES clients(id),
  type TEXT COLLATE "C" NOT NULL CHECK (type IN ('solo', 'client', 'platform')),
  hash TEXT COLLATE "C" NOT NULL,
  hash_version INTEGER NOT NULL REFERENCES key_hash_secrets(version),
  hint TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL,
  last_used_at TEXT COLLATE "C",
  revoked_at TEXT COLLATE "C"
);
CREATE UNIQUE INDEX api_keys_hash ON api_keys(hash_version, hash);
CREATE INDEX api_keys_revoked ON api_keys(revoked_at);
CREATE TABLE scopes (
  id TEXT COLLATE "C" PRIMARY KEY,
  client_id TEXT COLLATE "C" NOT NULL REFERENCES clients(id),
  org_id TEXT COLLATE "C" NOT NULL,
  user_id TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL,
  UNIQUE (client_id, org_id, user_id)
);
CREATE TABLE reports (
  id TEXT COLLATE "C" PRIMARY KEY,
  seq BIGINT GENERATED ALWAYS AS IDENTITY,
  scope_id TEXT COLLATE "C" NOT NULL REFERENCES scopes(id),
  summary TEXT COLLATE "C" NOT NULL,
  details TEXT COLLATE "C",
  provider TEXT COLLATE "C",
  tool TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  resolved_at TEXT COLLATE "C"
);
CREATE INDEX reports_scope ON reports(scope_id, created_at, seq);
CREATE INDEX reports_created ON reports(created_at, seq);
`,
  },
  {
    version: 2,
    name: 'connections, one-time links, connection events',
    sql: `
CREATE TABLE connections (
  id TEXT COLLATE "C" PRIMARY KEY,
  scope_id TEXT COLLATE "C" NOT NULL REFERENCES scopes(id),
  provider TEXT COLLATE "C" NOT NULL,
  state TEXT COLLATE "C" NOT NULL CHECK (state IN ('connected', 'reapproval_needed')),
  fields TEXT COLLATE "C" NOT NULL,
  account TEXT COLLATE "C",
  credentials TEXT COLLATE "C" NOT NULL,
  oauth_app TEXT COLLATE "C",
  expires_at TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL,
  UNIQUE (scope_id, provider)
);
CREATE INDEX connections_provider ON connections(provider, state);
CREATE INDEX connections_expiry ON connections(expires_at);
CREATE TABLE links (
  token_hash TEXT COLLATE "C" PRIMARY KEY,
  scope_id TEXT COLLATE "C" NOT NULL REFERENCES scopes(id),
  provider TEXT COLLATE "C" NOT NULL,
  purpose TEXT COLLATE "C" NOT NULL,
  payload TEXT COLLATE "C",
  expires_at TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX links_expiry ON links(expires_at);
CREATE TABLE connection_events (
  id TEXT COLLATE "C" PRIMARY KEY,
  seq BIGINT GENERATED ALWAYS AS IDENTITY,
  scope_id TEXT COLLATE "C" NOT NULL REFERENCES scopes(id),
  provider TEXT COLLATE "C" NOT NULL,
  event TEXT COLLATE "C" NOT NULL,
  detail TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX connection_events_created ON connection_events(created_at, seq);
`,
  },
  {
    version: 3,
    name: 'OAuth apps',
    sql: `
CREATE TABLE oauth_apps (
  id TEXT COLLATE "C" PRIMARY KEY,
  provider TEXT COLLATE "C" NOT NULL,
  client_id TEXT COLLATE "C" NOT NULL,
  org_id TEXT COLLATE "C" NOT NULL,
  oauth_client_id TEXT COLLATE "C" NOT NULL,
  client_secret TEXT COLLATE "C" NOT NULL,
  branding TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  superseded_at TEXT COLLATE "C"
);
CREATE INDEX oauth_apps_owner ON oauth_apps(provider, client_id, org_id, superseded_at);
`,
  },
  {
    version: 4,
    name: 'dashboard: admin credential, sessions, sign-in failures',
    sql: `
CREATE TABLE admin_credentials (
  name TEXT COLLATE "C" PRIMARY KEY,
  password_hash TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL
);
CREATE TABLE dashboard_sessions (
  id_hash TEXT COLLATE "C" PRIMARY KEY,
  csrf_token TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL,
  expires_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions(expires_at);
CREATE TABLE signin_failures (
  id TEXT COLLATE "C" PRIMARY KEY,
  source TEXT COLLATE "C" NOT NULL,
  created_at TEXT COLLATE "C" NOT NULL
);
CREATE INDEX signin_failures_created ON signin_failures(created_at);
`,
  },
  {
    version: 5,
    name: 'tool policies of clients and organizations',
    sql: `
CREATE TABLE tool_policies (
  id TEXT COLLATE "C" PRIMARY KEY,
  client_id TEXT COLLATE "C" NOT NULL REFERENCES clients(id),
  org_id TEXT COLLATE "C" NOT NULL,
  surface TEXT COLLATE "C" NOT NULL CHECK (surface IN ('auto', 'compact', 'full')),
  allow_list TEXT COLLATE "C",
  deny_list TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL,
  UNIQUE (client_id, org_id)
);
`,
  },
  {
    version: 6,
    name: 'OAuth front door: authorization server records and grants',
    sql: `
CREATE TABLE auth_server_records (
  model TEXT COLLATE "C" NOT NULL,
  id_hash TEXT COLLATE "C" PRIMARY KEY,
  payload TEXT COLLATE "C" NOT NULL,
  grant_id TEXT COLLATE "C",
  uid_hash TEXT COLLATE "C",
  expires_at TEXT COLLATE "C" NOT NULL,
  consumed_at TEXT COLLATE "C"
);
CREATE INDEX auth_server_records_grant ON auth_server_records(grant_id);
CREATE INDEX auth_server_records_uid ON auth_server_records(model, uid_hash);
CREATE INDEX auth_server_records_expires ON auth_server_records(expires_at);
CREATE TABLE front_door_grants (
  grant_id TEXT COLLATE "C" PRIMARY KEY,
  key_id TEXT COLLATE "C" NOT NULL REFERENCES api_keys(id),
  scope_id TEXT COLLATE "C" NOT NULL REFERENCES scopes(id),
  app_id TEXT COLLATE "C" NOT NULL,
  app_name TEXT COLLATE "C",
  app_uri TEXT COLLATE "C",
  via TEXT COLLATE "C" NOT NULL CHECK (via IN ('key', 'idp')),
  created_at TEXT COLLATE "C" NOT NULL,
  last_used_at TEXT COLLATE "C",
  revoked_at TEXT COLLATE "C"
);
CREATE INDEX front_door_grants_key ON front_door_grants(key_id);
`,
  },
  {
    version: 7,
    name: 'identity providers clients sign their users in through at the front door',
    sql: `
CREATE TABLE identity_providers (
  key_id TEXT COLLATE "C" PRIMARY KEY REFERENCES api_keys(id),
  name TEXT COLLATE "C" NOT NULL UNIQUE,
  display_name TEXT COLLATE "C" NOT NULL,
  issuer TEXT COLLATE "C" NOT NULL,
  oauth_client_id TEXT COLLATE "C" NOT NULL,
  client_secret TEXT COLLATE "C" NOT NULL,
  user_claim TEXT COLLATE "C" NOT NULL,
  org_claim TEXT COLLATE "C",
  created_at TEXT COLLATE "C" NOT NULL,
  updated_at TEXT COLLATE "C" NOT NULL
);
`,
  },
  {
    version: 8,
    name: 'audit trail of tool calls and connection events',
    sql: `
CREATE TABLE audit_events (
  id TEXT COLLATE "C" PRIMARY KEY,
  at TEXT COLLATE "C" NOT NULL,
  event TEXT COLLATE "C" NOT NULL,
  client_id TEXT COLLATE "C",
  key_id TEXT COLLATE "C",
  org_id TEXT COLLATE "C",
  user_id TEXT COLLATE "C",
  provider TEXT COLLATE "C",
  tool TEXT COLLATE "C",
  outcome TEXT COLLATE "C" NOT NULL CHECK (outcome IN ('ok', 'error', 'refused', 'failed')),
  latency_us INTEGER,
  upstream_status INTEGER,
  message TEXT COLLATE "C"
);
CREATE INDEX audit_events_at ON audit_events(at);
`,
  },
  {
    version: 9,
    name: "OAuth apps: clients of upstream MCP servers' authorization servers",
    sql: `
ALTER TABLE oauth_apps ADD COLUMN issuer TEXT COLLATE "C" NOT NULL DEFAULT '';
ALTER TABLE oauth_apps ADD COLUMN server TEXT COLLATE "C";
`,
  },
  {
    version: 10,
    name: 'audit trail: who and what of an entry in one JSON column',
    // json, not jsonb: stored as written (an INSERT is the hot path; reads are the operator's).
    sql: `
ALTER TABLE audit_events ADD COLUMN context JSON;
UPDATE audit_events SET context = json_build_object('event', event, 'outcome', outcome, 'clientId', client_id,
  'keyId', key_id, 'orgId', org_id, 'userId', user_id, 'provider', provider, 'tool', tool);
ALTER TABLE audit_events ALTER COLUMN context SET NOT NULL;
ALTER TABLE audit_events DROP COLUMN event, DROP COLUMN client_id, DROP COLUMN key_id, DROP COLUMN org_id,
  DROP COLUMN user_id, DROP COLUMN provider, DROP COLUMN tool, DROP COLUMN outcome;
`,
  },
  {
    version: 11,
    // SQLite's 11 drops the index of audit entry ids; here the primary key stays, as the one a move
    // from SQLite (store/transfer.ts) resolves conflicts on. The numbers stay those of SQLite's.
    name: 'audit trail: no index of entry ids',
    sql: 'SELECT 1',
  },
];
