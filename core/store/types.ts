import type { KeyType } from '../auth/keys.js';

/**
 * The storage interface. Everything is async so that a PostgreSQL implementation can follow the
 * SQLite one without touching callers. Every method that reads or writes per-scope data takes the
 * scope; there is no "current user" anywhere in the store.
 */

/** Who a request acts for (SPEC.md, Identifier resolution). `null` = not set. */
export interface Scope {
  clientId: string;
  orgId: string | null;
  userId: string | null;
}

export interface ClientRecord {
  id: string;
  name: string;
  createdAt: string;
}

export interface ApiKeyRecord {
  id: string;
  clientId: string;
  clientName: string;
  type: KeyType;
  hint: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

export interface NewApiKey {
  id: string;
  clientId: string;
  type: KeyType;
  hash: string;
  hashVersion: number;
  hint: string;
}

export interface HashSecretRecord {
  version: number;
  sealed: string;
}

export interface NewReport {
  summary: string;
  details: string | null;
  provider: string | null;
  tool: string | null;
}

export interface ReportRecord extends NewReport {
  id: string;
  scope: Scope;
  createdAt: string;
  resolvedAt: string | null;
}

/** The states SPEC.md names; "no connection" is the absence of a row. */
export type ConnectionState = 'connected' | 'reapproval_needed';

/** A stored connection. `credentials` is a sealed envelope (see connections/vault.ts), never plaintext. */
export interface ConnectionRecord {
  id: string;
  provider: string;
  state: ConnectionState;
  /** Non-secret connection fields (manifest `connection_fields`). */
  fields: Record<string, string>;
  /** The connected account (login, email), when the provider names it. */
  account: string | null;
  credentials: string;
  /** Which OAuth app minted the tokens (OAuth2 providers). */
  oauthApp: string | null;
  /** Absolute expiry of the access token (OAuth2 providers), ISO time. */
  expiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export type NewConnection = Omit<ConnectionRecord, 'createdAt' | 'updatedAt'>;

/** A one-time link (secure credential entry, OAuth start): stored by the hash of its token. */
export interface LinkRecord {
  scope: Scope;
  provider: string;
  purpose: string;
  /** Purpose-specific JSON (never a secret in clear). */
  payload: string | null;
  expiresAt: string;
}

export type ConnectionEvent = 'connected' | 'disconnected' | 'refreshed' | 'reapproval_needed';

/** One sealed value in the store, with what its envelope is bound to (see `resealAll`). */
export type SealedItem =
  | { kind: 'hash_secret'; version: number; sealed: string }
  | { kind: 'connection'; scopeId: string; provider: string; connectionId: string; sealed: string }
  | { kind: 'oauth_app'; appId: string; provider: string; sealed: string };

/** How an organization's consent pages look (3-level mode, its own OAuth app). */
export interface Branding {
  displayName?: string;
  logoUrl?: string;
  accentColor?: string;
}

/**
 * An OAuth app stored by the operator: the default app of a provider (clientId and orgId null), or
 * an organization's own. Changing an app's credentials supersedes its row with a new one, so
 * connections keep refreshing with the app that minted them.
 */
export interface OAuthAppRecord {
  id: string;
  provider: string;
  clientId: string | null;
  orgId: string | null;
  oauthClientId: string;
  /** Sealed. */
  clientSecret: string;
  branding: Branding | null;
  createdAt: string;
  supersededAt: string | null;
}

/** A connection whose access token expires soon, for the refresh scheduler. */
export interface ExpiringConnection {
  scope: Scope;
  provider: string;
  expiresAt: string;
}

/** A dashboard session, stored under the hash of the id its cookie carries. */
export interface DashboardSessionRecord {
  /** The synchronizer token every form of this session posts back. */
  csrfToken: string;
  createdAt: string;
  expiresAt: string;
}

/** An organization seen under a client (3-level scopes), with how many users it has. */
export interface OrganizationRecord {
  clientId: string;
  clientName: string;
  orgId: string;
  users: number;
  firstSeenAt: string;
}

/** How many connections to a provider are in a state, for one client and organization. */
export interface ConnectionCount {
  clientId: string;
  clientName: string;
  /** null: users directly under the client (solo and 2-level). */
  orgId: string | null;
  provider: string;
  state: ConnectionState;
  count: number;
}

/** One entry of the connection history (never a credential). */
export interface ConnectionEventRecord {
  scope: Scope;
  clientName: string;
  provider: string;
  event: ConnectionEvent;
  detail: string | null;
  createdAt: string;
}

export interface Store {
  /** Applies pending migrations; returns the versions applied now. */
  migrate(): Promise<number[]>;
  /** True when the store answers a trivial query. */
  ping(): Promise<boolean>;
  close(): Promise<void>;

  getMeta(key: string): Promise<string | undefined>;
  /** Sets `key` only when it has no value yet; returns whether this call set it. */
  setMetaOnce(key: string, value: string): Promise<boolean>;

  listHashSecrets(): Promise<HashSecretRecord[]>;
  /** Inserts a hashing secret version; returns false when that version exists already. */
  insertHashSecret(secret: HashSecretRecord): Promise<boolean>;

  createClient(name: string): Promise<ClientRecord>;
  findClientByName(name: string): Promise<ClientRecord | undefined>;
  listClients(): Promise<ClientRecord[]>;

  insertApiKey(key: NewApiKey): Promise<void>;
  /**
   * The key stored under this hash (any status), or undefined. Asked on every request: an
   * implementation may answer from memory while the row is unchanged, as long as a revocation
   * committed anywhere is seen by the next call (SqliteStore: data_version).
   */
  findApiKeyByHash(hashVersion: number, hash: string): Promise<ApiKeyRecord | undefined>;
  getApiKey(id: string): Promise<ApiKeyRecord | undefined>;
  listApiKeys(): Promise<ApiKeyRecord[]>;
  /** Marks a key revoked; returns false when it does not exist or was revoked already. */
  revokeApiKey(id: string, at: string): Promise<boolean>;
  /** Ids of keys revoked at or after `since` (ISO time), for cutting off open streams. */
  keysRevokedSince(since: string): Promise<string[]>;
  touchApiKey(id: string, at: string): Promise<void>;

  /** The id of the scope's row, created on first use (SPEC.md: no pre-registration). */
  ensureScope(scope: Scope): Promise<string>;

  insertReport(scope: Scope, report: NewReport): Promise<ReportRecord>;
  /** Reports filed in exactly this scope, newest first. */
  listReportsForScope(scope: Scope): Promise<ReportRecord[]>;
  /** Every report, newest first, for the operator. */
  listReports(filter: { status?: 'open' | 'resolved' }): Promise<ReportRecord[]>;
  resolveReport(id: string, at: string): Promise<boolean>;

  listConnections(scope: Scope): Promise<ConnectionRecord[]>;
  /**
   * The scope's connection to a provider. Asked on every tool call, with the same latitude as
   * findApiKeyByHash; a record answered from memory is frozen and the same object each time.
   */
  getConnection(scope: Scope, provider: string): Promise<ConnectionRecord | undefined>;
  /**
   * Inserts the scope's connection to `connection.provider`, or replaces the existing one whole
   * (id, credentials and all) in one statement: a reconnect never leaves a mix of old and new.
   */
  putConnection(scope: Scope, connection: NewConnection): Promise<void>;
  /** Deletes the row, credentials included; false when there was none. */
  deleteConnection(scope: Scope, provider: string): Promise<boolean>;
  setConnectionState(scope: Scope, provider: string, state: ConnectionState): Promise<boolean>;

  createLink(tokenHash: string, link: LinkRecord): Promise<void>;
  /** The link, when it exists and has not expired at `now`; it stays usable. */
  peekLink(tokenHash: string, now: string): Promise<LinkRecord | undefined>;
  /** Takes the link (single use): returns it and deletes it atomically; undefined if gone or expired. */
  consumeLink(tokenHash: string, now: string): Promise<LinkRecord | undefined>;
  /** Deletes links expired at `now`; returns how many. */
  purgeExpiredLinks(now: string): Promise<number>;

  addConnectionEvent(scope: Scope, provider: string, event: ConnectionEvent, detail?: string): Promise<void>;

  /** Connections (state connected) whose token expires before `before` (ISO time). */
  listExpiringConnections(before: string): Promise<ExpiringConnection[]>;
  /**
   * Replaces a connection's sealed credentials and expiry only if they are still `expected`
   * (compare-and-set): false means another process refreshed first, so the caller re-reads.
   */
  swapConnectionCredentials(
    scope: Scope,
    provider: string,
    expected: string,
    next: { credentials: string; expiresAt: string | null },
  ): Promise<boolean>;

  /** Inserts an OAuth app; the current app of the same owner (if any) is superseded at the same time. */
  putOAuthApp(app: Omit<OAuthAppRecord, 'createdAt' | 'supersededAt'>): Promise<void>;
  /** Updates the branding of an app in place (branding never changes which app minted a token). */
  setOAuthAppBranding(id: string, branding: Branding | null): Promise<boolean>;
  /** The owner's current (not superseded) app of a provider. */
  currentOAuthApp(
    provider: string,
    owner: { clientId: string; orgId: string } | null,
  ): Promise<OAuthAppRecord | undefined>;
  getOAuthApp(id: string): Promise<OAuthAppRecord | undefined>;
  listOAuthApps(): Promise<OAuthAppRecord[]>;

  /**
   * Replaces every sealed value with `reseal(item)` in ONE transaction (master-key rotation): either
   * all are re-encrypted or none is. Returns how many were.
   */
  resealAll(reseal: (item: SealedItem) => string): Promise<number>;

  /** The dashboard admin's password hash (see http/dashboard/password.ts), if one was set. */
  getAdminPasswordHash(): Promise<string | undefined>;
  /**
   * Stores the admin's password hash; with `onlyIfUnset`, only when there is none yet (returns
   * whether this call stored it). Replacing a hash signs every dashboard session out and clears
   * the sign-in failures, in the same transaction.
   */
  setAdminPasswordHash(hash: string, options: { onlyIfUnset: boolean }): Promise<boolean>;
  createDashboardSession(idHash: string, session: DashboardSessionRecord): Promise<void>;
  /** The session, when it exists and has not expired at `now`. */
  getDashboardSession(idHash: string, now: string): Promise<DashboardSessionRecord | undefined>;
  deleteDashboardSession(idHash: string): Promise<void>;
  /** Deletes sessions expired at `now` and sign-in failures recorded before `failuresBefore`. */
  purgeDashboard(now: string, failuresBefore: string): Promise<void>;
  addSignInFailure(source: string, at: string): Promise<void>;
  /** Failed sign-ins at or after `since`, oldest first. */
  listSignInFailures(since: string): Promise<{ source: string; at: string }[]>;
  clearSignInFailures(source: string): Promise<void>;

  /** Every organization seen (3-level scopes), by client name then org_id. */
  listOrganizations(): Promise<OrganizationRecord[]>;
  /** Connections counted per client, organization, provider and state. */
  countConnections(): Promise<ConnectionCount[]>;
  /** The most recent connection events, newest first. */
  listConnectionEvents(limit: number): Promise<ConnectionEventRecord[]>;
}
