import type { ConnectionState, KeyType, Scope, SurfaceChoice } from '../domain.js';
import { newId } from './ids.js';
import type {
  ApiKeyRecord,
  Branding,
  ConnectionRecord,
  LinkRecord,
  NewReport,
  OAuthAppRecord,
  NewToolPolicy,
  ReportRecord,
  ToolPolicyRecord,
  UpstreamOAuthServer,
} from './types.js';

/*
 * Rows as every SQL store reads them, and the records they become. The SQLite and PostgreSQL schemas
 * (migrations.ts, postgres/migrations.ts) have the same tables and column names, so the column lists
 * of the record-reading SELECTs, the row -> record mappers (and a write's columns and values where
 * both stores write alike) live here once and cannot drift apart.
 * Only SQL without parameters (placeholders differ: `?` in SQLite, `$1` in PostgreSQL), and no
 * driver import: postgres/ must not load better-sqlite3, nor sqlite/ pg.
 */

/** The scope columns of a row (scopes table): '' stands for "not set". */
export interface ScopeRow {
  client_id: string;
  org_id: string;
  user_id: string;
}

/** Scope columns never hold NULL (so the UNIQUE constraint holds): '' stands for "not set". */
export function scopeColumns(scope: Scope): [string, string, string] {
  return [scope.clientId, scope.orgId ?? '', scope.userId ?? ''];
}

export function scopeOf(row: ScopeRow): Scope {
  return { clientId: row.client_id, orgId: row.org_id || null, userId: row.user_id || null };
}

/** Clients as `ClientRecord`s (the alias is quoted: PostgreSQL folds a bare one to lower case). */
export const CLIENT_SELECT = 'SELECT id, name, created_at AS "createdAt" FROM clients';

export interface KeyRow {
  id: string;
  client_id: string;
  client_name: string;
  type: KeyType;
  hint: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export const KEY_SELECT = `SELECT k.id, k.client_id, c.name AS client_name, k.type, k.hint, k.created_at, k.last_used_at, k.revoked_at
  FROM api_keys k JOIN clients c ON c.id = k.client_id`;

export function keyRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    clientId: row.client_id,
    clientName: row.client_name,
    type: row.type,
    hint: row.hint,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    revokedAt: row.revoked_at,
  };
}

export interface ReportRow extends ScopeRow {
  id: string;
  summary: string;
  details: string | null;
  provider: string | null;
  tool: string | null;
  created_at: string;
  resolved_at: string | null;
}

/** NUL, and a surrogate without its other half. */
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * A text as both stores can keep and read it: NUL and lone surrogates become U+FFFD. PostgreSQL's
 * text refuses NUL (the whole INSERT fails), and its `->>` refuses the `\u0000` and lone surrogate
 * escapes JSON would carry them as; a caller can put either in what it sends (a tool name, a report).
 */
export function storable(value: string): string {
  return value.replace(UNSTORABLE, '\ufffd');
}

/** A new report as both stores keep it: its texts, an agent's words, storable. */
export function newReportRecord(scope: Scope, report: NewReport): ReportRecord {
  const text = (value: string | null): string | null => (value === null ? null : storable(value));
  return {
    id: newId('rep'),
    scope,
    summary: storable(report.summary),
    details: text(report.details),
    provider: text(report.provider),
    tool: text(report.tool),
    createdAt: new Date().toISOString(),
    resolvedAt: null,
  };
}

export const REPORT_SELECT = `SELECT r.id, s.client_id, s.org_id, s.user_id, r.summary, r.details, r.provider, r.tool, r.created_at, r.resolved_at
  FROM reports r JOIN scopes s ON s.id = r.scope_id`;

export function reportRecord(row: ReportRow): ReportRecord {
  return {
    id: row.id,
    scope: scopeOf(row),
    summary: row.summary,
    details: row.details,
    provider: row.provider,
    tool: row.tool,
    createdAt: row.created_at,
    resolvedAt: row.resolved_at,
  };
}

export interface ConnectionRow {
  id: string;
  provider: string;
  state: ConnectionState;
  fields: string;
  account: string | null;
  credentials: string;
  oauth_app: string | null;
  expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export const CONNECTION_SELECT = `SELECT c.id, c.provider, c.state, c.fields, c.account, c.credentials, c.oauth_app, c.expires_at, c.created_at, c.updated_at
  FROM connections c JOIN scopes s ON s.id = c.scope_id`;

export function connectionRecord(row: ConnectionRow): ConnectionRecord {
  return {
    id: row.id,
    provider: row.provider,
    state: row.state,
    fields: JSON.parse(row.fields) as Record<string, string>,
    account: row.account,
    credentials: row.credentials,
    oauthApp: row.oauth_app,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface LinkRow extends ScopeRow {
  provider: string;
  purpose: string;
  payload: string | null;
  expires_at: string;
}

/** The columns of a {@link LinkRow}, of `links l` joined with `scopes s`. */
export const LINK_COLUMNS =
  's.client_id, s.org_id, s.user_id, l.provider, l.purpose, l.payload, l.expires_at';

export function linkRecord(row: LinkRow): LinkRecord {
  return {
    scope: scopeOf(row),
    provider: row.provider,
    purpose: row.purpose,
    payload: row.payload,
    expiresAt: row.expires_at,
  };
}

export interface OAuthAppRow {
  id: string;
  provider: string;
  client_id: string;
  org_id: string;
  oauth_client_id: string;
  client_secret: string;
  branding: string | null;
  issuer: string;
  server: string | null;
  created_at: string;
  superseded_at: string | null;
}

export function oauthAppRecord(row: OAuthAppRow): OAuthAppRecord {
  return {
    id: row.id,
    provider: row.provider,
    clientId: row.client_id || null,
    orgId: row.org_id || null,
    oauthClientId: row.oauth_client_id,
    clientSecret: row.client_secret,
    branding: row.branding === null ? null : (JSON.parse(row.branding) as Branding),
    server: row.server === null ? null : (JSON.parse(row.server) as UpstreamOAuthServer),
    createdAt: row.created_at,
    supersededAt: row.superseded_at,
  };
}

export interface ToolPolicyRow {
  client_id: string;
  org_id: string;
  surface: SurfaceChoice;
  allow_list: string | null;
  deny_list: string;
  updated_at: string;
}

export function toolPolicyRecord(row: ToolPolicyRow): ToolPolicyRecord {
  return {
    clientId: row.client_id,
    orgId: row.org_id || null,
    surface: row.surface,
    allow: row.allow_list === null ? null : (JSON.parse(row.allow_list) as string[]),
    deny: JSON.parse(row.deny_list) as string[],
    updatedAt: row.updated_at,
  };
}

/** The columns {@link toolPolicyValues} fills, in its order. */
export const TOOL_POLICY_COLUMNS = 'id, client_id, org_id, surface, allow_list, deny_list, updated_at';

/** Ends the INSERT of a tool policy: a policy of the same client and organization is replaced whole. */
export const TOOL_POLICY_REPLACE = `ON CONFLICT (client_id, org_id) DO UPDATE SET surface = excluded.surface,
  allow_list = excluded.allow_list, deny_list = excluded.deny_list, updated_at = excluded.updated_at`;

/** A new tool policy row's values, in {@link TOOL_POLICY_COLUMNS} order ('' org_id: the client's own). */
export function toolPolicyValues(policy: NewToolPolicy): (string | null)[] {
  return [
    newId('pol'),
    policy.clientId,
    policy.orgId ?? '',
    policy.surface,
    policy.allow === null ? null : JSON.stringify(policy.allow),
    JSON.stringify(policy.deny),
    new Date().toISOString(),
  ];
}
