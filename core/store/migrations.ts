/**
 * The SQLite schema: numbered, forward-only migrations. Each is applied once, in order, inside a
 * transaction, and recorded in schema_migrations. Never edit a released migration: add the next
 * number, here and in postgres/migrations.ts (the same version and name, in that dialect; a test
 * holds the two lists and the resulting schemas alike).
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'clients, keys, scopes, reports',
    sql: `
CREATE TABLE meta (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE clients (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);
CREATE TABLE key_hash_secrets (
  version INTEGER PRIMARY KEY,
  sealed TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  client_id TEXT NOT NULL REFERENCES clients(id),
  type TEXT NOT NULL CHECK (type IN ('solo', 'client', 'platform')),
  hash TEXT NOT NULL,
  hash_version INTEGER NOT NULL REFERENCES key_hash_secrets(version),
  hint TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT
);
CREATE UNIQUE INDEX api_keys_hash ON api_keys(hash_version, hash);
CREATE INDEX api_keys_revoked ON api_keys(revoked_at);
CREATE TABLE scopes (
  id TEXT PRIMARY KEY,
  client_id TEXT NOT NULL REFERENCES clients(id),
  org_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  UNIQUE (client_id, org_id, user_id)
);
CREATE TABLE reports (
  id TEXT PRIMARY KEY,
  scope_id TEXT NOT NULL REFERENCES scopes(id),
  summary TEXT NOT NULL,
  details TEXT,
  provider TEXT,
  tool TEXT,
  created_at TEXT NOT NULL,
  resolved_at TEXT
);
CREATE INDEX reports_scope ON reports(scope_id, created_at);
CREATE INDEX reports_created ON reports(created_at);
`,
  },
  {
    version: 2,
    name: 'connections, one-time links, connection events',
    sql: `
CREATE TABLE connections (
  id TEXT PRIMARY KEY,
  scope_id TEXT NOT NULL REFERENCES scopes(id),
  provider TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('connected', 'reapproval_needed')),
  fields TEXT NOT NULL,
  account TEXT,
  credentials TEXT NOT NULL,
  oauth_app TEXT,
  expires_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (scope_id, provider)
);
CREATE INDEX connections_provider ON connections(provider, state);
CREATE INDEX connections_expiry ON connections(expires_at);
CREATE TABLE links (
  token_hash TEXT PRIMARY KEY,
  scope_id TEXT NOT NULL REFERENCES scopes(id),
  provider TEXT NOT NULL,
  purpose TEXT NOT NULL,
  payload TEXT,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX links_expiry ON links(expires_at);
CREATE TABLE connection_events (
  id TEXT PRIMARY KEY,
  scope_id TEXT NOT NULL REFERENCES scopes(id),
  provider TEXT NOT NULL,
  event TEXT NOT NULL,
  detail TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX connection_events_created ON connection_events(created_at);
`,
  },
  {
    version: 3,
    name: 'OAuth apps',
    sql: `
CREATE TABLE oauth_apps (
  id TEXT PRIMARY KEY,
  provider TEXT NOT NULL,
  client_id TEXT NOT NULL,
  org_id TEXT NOT NULL,
  oauth_client_id TEXT NOT NULL,
  client_secret TEXT NOT NULL,
  branding TEXT,
  created_at TEXT NOT NULL,
  superseded_at TEXT
);
CREATE INDEX oauth_apps_owner ON oauth_apps(provider, client_id, org_id, superseded_at);
`,
  },
  {
    version: 4,
    name: 'dashboard: admin credential, sessions, sign-in failures',
    sql: `
CREATE TABLE admin_credentials (
  name TEXT PRIMARY KEY,
  password_hash TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE dashboard_sessions (
  id_hash TEXT PRIMARY KEY,
  csrf_token TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions(expires_at);
CREATE TABLE signin_failures (
  id TEXT PRIMARY KEY,
  source TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX signin_failures_created ON signin_failures(created_at);
`,
  },
  {
    version: 5,
    name: 'tool policies of clients and organizations',
    sql: `
CREATE TABLE tool_policies (
  id TEXT PRIMARY KEY,
  client_id TEXT NOT NULL REFERENCES clients(id),
  org_id TEXT NOT NULL,
  surface TEXT NOT NULL CHECK (surface IN ('auto', 'compact', 'full')),
  allow_list TEXT,
  deny_list TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (client_id, org_id)
);
`,
  },
  {
    version: 6,
    name: 'OAuth front door: authorization server records and grants',
    sql: `
CREATE TABLE auth_server_records (
  model TEXT NOT NULL,
  id_hash TEXT PRIMARY KEY,
  payload TEXT NOT NULL,
  grant_id TEXT,
  uid_hash TEXT,
  expires_at TEXT NOT NULL,
  consumed_at TEXT
);
CREATE INDEX auth_server_records_grant ON auth_server_records(grant_id);
CREATE INDEX auth_server_records_uid ON auth_server_records(model, uid_hash);
CREATE INDEX auth_server_records_expires ON auth_server_records(expires_at);
CREATE TABLE front_door_grants (
  grant_id TEXT PRIMARY KEY,
  key_id TEXT NOT NULL REFERENCES api_keys(id),
  scope_id TEXT NOT NULL REFERENCES scopes(id),
  app_id TEXT NOT NULL,
  app_name TEXT,
  app_uri TEXT,
  via TEXT NOT NULL CHECK (via IN ('key', 'idp')),
  created_at TEXT NOT NULL,
  last_used_at TEXT,
  revoked_at TEXT
);
CREATE INDEX front_door_grants_key ON front_door_grants(key_id);
`,
  },
  {
    version: 7,
    name: 'identity providers clients sign their users in through at the front door',
    sql: `
CREATE TABLE identity_providers (
  key_id TEXT PRIMARY KEY REFERENCES api_keys(id),
  name TEXT NOT NULL UNIQUE,
  display_name TEXT NOT NULL,
  issuer TEXT NOT NULL,
  oauth_client_id TEXT NOT NULL,
  client_secret TEXT NOT NULL,
  user_claim TEXT NOT NULL,
  org_claim TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
`,
  },
  {
    version: 8,
    name: 'audit trail of tool calls and connection events',
    sql: `
CREATE TABLE audit_events (
  id TEXT PRIMARY KEY,
  at TEXT NOT NULL,
  event TEXT NOT NULL,
  client_id TEXT,
  key_id TEXT,
  org_id TEXT,
  user_id TEXT,
  provider TEXT,
  tool TEXT,
  outcome TEXT NOT NULL CHECK (outcome IN ('ok', 'error', 'refused', 'failed')),
  latency_us INTEGER,
  upstream_status INTEGER,
  message TEXT
);
CREATE INDEX audit_events_at ON audit_events(at);
`,
  },
  {
    version: 9,
    name: "OAuth apps: clients of upstream MCP servers' authorization servers",
    sql: `
ALTER TABLE oauth_apps ADD COLUMN issuer TEXT NOT NULL DEFAULT '';
ALTER TABLE oauth_apps ADD COLUMN server TEXT;
`,
  },
  {
    version: 10,
    name: 'audit trail: who and what of an entry in one JSON column',
    // Eight bound text values per entry cost more than the rest of its INSERT (store/audit.ts).
    sql: `
CREATE TABLE audit_entries (
  id TEXT PRIMARY KEY,
  at TEXT NOT NULL,
  context TEXT NOT NULL,
  latency_us INTEGER,
  upstream_status INTEGER,
  message TEXT
);
INSERT INTO audit_entries (id, at, context, latency_us, upstream_status, message)
SELECT id, at,
  json_object('event', event, 'outcome', outcome, 'clientId', client_id, 'keyId', key_id, 'orgId', org_id,
    'userId', user_id, 'provider', provider, 'tool', tool),
  latency_us, upstream_status, message
FROM audit_events;
DROP TABLE audit_events;
ALTER TABLE audit_entries RENAME TO audit_events;
CREATE INDEX audit_events_at ON audit_events(at);
`,
  },
  {
    version: 11,
    name: 'audit trail: no index of entry ids',
    // Nothing reads an entry by its id (ids are unique by construction, store/audit-log.ts), and
    // the id's index was a fifth of what an INSERT costs an entry (2.5k of 13.5k instructions).
    // Rows are copied in the order they were written: rowid stays their order of arrival.
    sql: `
CREATE TABLE audit_rows (
  id TEXT NOT NULL,
  at TEXT NOT NULL,
  context TEXT NOT NULL,
  latency_us INTEGER,
  upstream_status INTEGER,
  message TEXT
);
INSERT INTO audit_rows (id, at, context, latency_us, upstream_status, message)
SELECT id, at, context, latency_us, upstream_status, message FROM audit_events ORDER BY rowid;
DROP TABLE audit_events;
ALTER TABLE audit_rows RENAME TO audit_events;
CREATE INDEX audit_events_at ON audit_events(at);
`,
  },
];
