import type { Awaitable } from '../awaitable.js';
import type { ConnectionState, KeyType, Scope, SurfaceChoice } from '../domain.js';

/**
 * The storage ports: one per aggregate, gathered in {@link Store}. store/index.ts picks the
 * implementation from TOOLGATE_DATABASE_URL; test/unit/store/ is the contract every implementation
 * passes. The contract, for every implementation:
 * - Every method is async and reports failure by rejecting, never by throwing synchronously. The
 *   three reads of every tool call (`keys.findByHash`, `connections.get`, `policies.get`) may
 *   instead answer with the value itself when they hold it in memory (core/awaitable.ts); they too
 *   fail only by rejecting.
 * - Every method that reads or writes per-scope data takes the scope; there is no "current user".
 * - A write committed by any process (another replica, the CLI) is seen by the next read of any
 *   process. An implementation may answer from memory only while it can prove nothing changed.
 *   (The read cache of a deployment of several processes, coordination/cached-store.ts, sits in
 *   front of an implementation and relaxes this for the reads it caches: see there.)
 * - Records are plain data: callers never rely on getting the same object twice. What they derive
 *   from a record (opened credentials) they key by the record's id and content, not its identity.
 */

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
  | { kind: 'oauth_app'; appId: string; provider: string; sealed: string }
  | { kind: 'identity_provider'; keyId: string; sealed: string };

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
  /**
   * Null for an app the operator or an organization set. Otherwise the row is a client of an
   * upstream MCP server's authorization server (issue 17): registered by Toolgate (DCR), named by
   * Toolgate's metadata document (CIMD), or an app above bound to that server; it holds what consent,
   * refresh and revocation need, so none of them depends on discovering the server again.
   */
  server: UpstreamOAuthServer | null;
  createdAt: string;
  supersededAt: string | null;
}

/** An upstream MCP server's authorization server as discovered, and how Toolgate is its client. */
export interface UpstreamOAuthServer {
  /** How the client id came about: an app set by the operator or an org, a metadata document, a registration. */
  method: 'app' | 'cimd' | 'dcr';
  /** The authorization server's issuer (RFC 8414); registered clients are kept per provider and issuer. */
  issuer: string;
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl: string | null;
  /** How the client authenticates at the token endpoint. */
  authMethod: 'client_secret_basic' | 'client_secret_post' | 'none';
  /** The RFC 8707 resource indicator sent in authorization and token requests: the upstream MCP server. */
  resource: string;
  /** Scopes asked for when the manifest names none (from the upstream's challenge or metadata). */
  scopes: string[];
  /** method `app`: the id of the app whose client id and secret are used. */
  app: string | null;
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

/**
 * Which tools a client, or one organization of a client, exposes (issue 15). Entries of `allow` and
 * `deny` are provider ids or tool names, `*` at the end matching any suffix (tools/policy.ts).
 */
export interface ToolPolicyRecord {
  clientId: string;
  /** null: the client's own policy; otherwise the policy of this organization of the client. */
  orgId: string | null;
  /** The tool list served when a request asks for none; `auto` defers (to the client, then the threshold). */
  surface: SurfaceChoice;
  /** null: every tool not denied. */
  allow: string[] | null;
  deny: string[];
  updatedAt: string;
}

export type NewToolPolicy = Omit<ToolPolicyRecord, 'updatedAt'>;

/** Settings of the deployment itself (bootstrap markers). */
export interface MetaStore {
  get(key: string): Promise<string | undefined>;
  /** Sets `key` only when it has no value yet; returns whether this call set it. */
  setOnce(key: string, value: string): Promise<boolean>;
}

/** Clients, their API keys (stored as keyed hashes) and the versioned hashing secrets. */
export interface KeyStore {
  listHashSecrets(): Promise<HashSecretRecord[]>;
  /** Inserts a hashing secret version; returns false when that version exists already. */
  insertHashSecret(secret: HashSecretRecord): Promise<boolean>;

  createClient(name: string): Promise<ClientRecord>;
  findClient(name: string): Promise<ClientRecord | undefined>;
  listClients(): Promise<ClientRecord[]>;

  insert(key: NewApiKey): Promise<void>;
  /**
   * The key stored under this hash (any status), or undefined. Asked on every request: a
   * revocation committed by any process is seen by the next call.
   */
  findByHash(hashVersion: number, hash: string): Awaitable<ApiKeyRecord | undefined>;
  get(id: string): Promise<ApiKeyRecord | undefined>;
  list(): Promise<ApiKeyRecord[]>;
  /** Marks a key revoked; returns false when it does not exist or was revoked already. */
  revoke(id: string, at: string): Promise<boolean>;
  /** Ids of keys revoked at or after `since` (ISO time), for cutting off open streams. */
  revokedSince(since: string): Promise<string[]>;
  touch(id: string, at: string): Promise<void>;
}

/** Scopes, created on first use (SPEC.md: no pre-registration). */
export interface ScopeStore {
  /** The id of the scope's row, created on first use. */
  ensure(scope: Scope): Promise<string>;
  /** Every organization seen (3-level scopes), by client name then org_id. */
  listOrganizations(): Promise<OrganizationRecord[]>;
}

/** Problem reports filed through report_problem. */
export interface ReportStore {
  insert(scope: Scope, report: NewReport): Promise<ReportRecord>;
  /** Reports filed in exactly this scope, newest first. */
  listForScope(scope: Scope): Promise<ReportRecord[]>;
  /** Every report, newest first, for the operator. */
  list(filter: { status?: 'open' | 'resolved' }): Promise<ReportRecord[]>;
  resolve(id: string, at: string): Promise<boolean>;
}

/** Each scope's connections (sealed credentials) and their history. */
export interface ConnectionStore {
  list(scope: Scope): Promise<ConnectionRecord[]>;
  /**
   * The scope's connection to a provider. Asked on every tool call, so a deployment of several
   * processes answers it from a read cache (coordination/cached-store.ts), which sees another
   * process's write once the bus has carried its eviction (within milliseconds); `fresh` reads the
   * database itself, for a reader that must see every committed write (a token refresh under its
   * connection's lock decides from it whether another process refreshed already).
   */
  get(scope: Scope, provider: string, options?: { fresh?: boolean }): Awaitable<ConnectionRecord | undefined>;
  /**
   * Inserts the scope's connection to `connection.provider`, or replaces the existing one whole
   * (id, credentials and all) in one statement: a reconnect never leaves a mix of old and new.
   */
  put(scope: Scope, connection: NewConnection): Promise<void>;
  /** Deletes the row, credentials included; false when there was none. */
  delete(scope: Scope, provider: string): Promise<boolean>;
  setState(scope: Scope, provider: string, state: ConnectionState): Promise<boolean>;
  /** Connections (state connected) whose token expires before `before` (ISO time). */
  listExpiring(before: string): Promise<ExpiringConnection[]>;
  /**
   * Replaces a connection's sealed credentials and expiry only if they are still `expected`
   * (compare-and-set): false means another process refreshed first, so the caller re-reads.
   */
  swapCredentials(
    scope: Scope,
    provider: string,
    expected: string,
    next: { credentials: string; expiresAt: string | null },
  ): Promise<boolean>;
  addEvent(scope: Scope, provider: string, event: ConnectionEvent, detail?: string): Promise<void>;
  /** Connections counted per client, organization, provider and state. */
  count(): Promise<ConnectionCount[]>;
  /** The most recent connection events, newest first. */
  listEvents(limit: number): Promise<ConnectionEventRecord[]>;
}

/** One-time links (secure credential entry, OAuth start), stored by the hash of their token. */
export interface LinkStore {
  create(tokenHash: string, link: LinkRecord): Promise<void>;
  /** The link, when it exists and has not expired at `now`; it stays usable. */
  peek(tokenHash: string, now: string): Promise<LinkRecord | undefined>;
  /** Takes the link (single use): returns it and deletes it atomically; undefined if gone or expired. */
  consume(tokenHash: string, now: string): Promise<LinkRecord | undefined>;
  /** Deletes links expired at `now`; returns how many. */
  purgeExpired(now: string): Promise<number>;
}

/** OAuth apps of providers and organizations. */
export interface OAuthAppStore {
  /** Inserts an OAuth app; the current app of the same owner (if any) is superseded at the same time. */
  put(app: Omit<OAuthAppRecord, 'createdAt' | 'supersededAt'>): Promise<void>;
  /** Updates the branding of an app in place (branding never changes which app minted a token). */
  setBranding(id: string, branding: Branding | null): Promise<boolean>;
  /**
   * The owner's current (not superseded) app of a provider: the app the operator or org set, or with
   * `issuer`, the client of that upstream authorization server (UpstreamOAuthServer).
   */
  current(
    provider: string,
    owner: { clientId: string; orgId: string } | null,
    issuer?: string,
  ): Promise<OAuthAppRecord | undefined>;
  get(id: string): Promise<OAuthAppRecord | undefined>;
  /** Marks an app superseded (an authorization server forgot the client it registered); false if it was not current. */
  supersede(id: string): Promise<boolean>;
  /** Every app the operator and organizations set (not upstream clients), superseded ones included. */
  list(): Promise<OAuthAppRecord[]>;
}

/** Tool policies of clients and organizations (issue 15). */
export interface PolicyStore {
  /**
   * The policy of a client (`orgId` null) or of one of its organizations. Asked on every request, so
   * a deployment of several processes answers it from its read cache (coordination/cached-store.ts).
   */
  get(clientId: string, orgId: string | null): Awaitable<ToolPolicyRecord | undefined>;
  /** Inserts the policy, or replaces the one of the same client and organization whole. */
  set(policy: NewToolPolicy): Promise<void>;
  /** Deletes the policy; false when there was none. */
  delete(clientId: string, orgId: string | null): Promise<boolean>;
  /** Every policy, by client id then organization (the client's own first). */
  list(): Promise<ToolPolicyRecord[]>;
}

/** The operator dashboard: the admin password, sign-in sessions and failed sign-ins. */
export interface DashboardStore {
  /** The admin's password hash (see admin/password.ts), if one was set. */
  getPasswordHash(): Promise<string | undefined>;
  /**
   * Stores the admin's password hash; with `onlyIfUnset`, only when there is none yet (returns
   * whether this call stored it). Replacing a hash signs every dashboard session out and clears
   * the sign-in failures, in the same transaction.
   */
  setPasswordHash(hash: string, options: { onlyIfUnset: boolean }): Promise<boolean>;
  createSession(idHash: string, session: DashboardSessionRecord): Promise<void>;
  /** The session, when it exists and has not expired at `now`. */
  getSession(idHash: string, now: string): Promise<DashboardSessionRecord | undefined>;
  deleteSession(idHash: string): Promise<void>;
  /** Deletes sessions expired at `now` and sign-in failures recorded before `failuresBefore`. */
  purge(now: string, failuresBefore: string): Promise<void>;
  addSignInFailure(source: string, at: string): Promise<void>;
  /** Failed sign-ins at or after `since`, oldest first. */
  listSignInFailures(since: string): Promise<{ source: string; at: string }[]>;
  clearSignInFailures(source: string): Promise<void>;
}

/**
 * A record of the OAuth front door's authorization server (auth/front-door/): one of oidc-provider's
 * models (a grant, an authorization code, an access or refresh token, an interaction, a registered
 * client...). Stored under the hash of its id, never the id itself: an id may be a bearer token.
 */
export interface AuthServerRecord {
  /** Which model: Grant, AccessToken, RefreshToken, Session, Interaction, Client... */
  model: string;
  /** The model's payload as JSON, without its id. */
  payload: string;
  grantId: string | null;
  /** The hash of the interaction or session uid, for the models found by it. */
  uidHash: string | null;
  expiresAt: string;
  consumedAt: string | null;
}

/** Who signed in through the front door, for which agent application, acting as which key and scope. */
export interface FrontDoorGrantRecord {
  grantId: string;
  keyId: string;
  scope: Scope;
  /** The agent application's OAuth client_id (a URL for a Client ID Metadata Document). */
  appId: string;
  appName: string | null;
  /** The application's home page or, failing that, the host it redirects to. */
  appUri: string | null;
  /** How the person signed in: an API key pasted on the sign-in page, or the client's identity provider. */
  via: 'key' | 'idp';
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** The OAuth front door (issue 14): the authorization server's records and the grants it made. */
export interface FrontDoorStore {
  /** Inserts or replaces a record, keyed by the hash of its model and id. */
  put(idHash: string, record: Omit<AuthServerRecord, 'consumedAt'>): Promise<void>;
  /** The record, unless it expired at `now`. */
  get(idHash: string, now: string): Promise<AuthServerRecord | undefined>;
  /** The record of `model` with that uid hash, unless it expired at `now`. */
  getByUid(model: string, uidHash: string, now: string): Promise<AuthServerRecord | undefined>;
  /**
   * Marks the record consumed at `at`; true only for the one call that did (of two concurrent
   * consumptions, exactly one wins: refresh-token reuse detection rests on it).
   */
  consume(idHash: string, at: string): Promise<boolean>;
  destroy(idHash: string): Promise<void>;
  /** Deletes every record of a grant (its tokens and codes); returns how many. */
  destroyGrant(grantId: string): Promise<number>;
  /** Deletes records expired at `now`; returns how many. */
  purgeExpired(now: string): Promise<number>;

  addGrant(grant: Omit<FrontDoorGrantRecord, 'lastUsedAt' | 'revokedAt'>): Promise<void>;
  getGrant(grantId: string): Promise<FrontDoorGrantRecord | undefined>;
  /** Grants of one key, newest first, revoked ones included. */
  grantsOfKey(keyId: string): Promise<FrontDoorGrantRecord[]>;
  touchGrant(grantId: string, at: string): Promise<void>;
  /** Marks the grant revoked; false when it does not exist or was revoked already. */
  revokeGrant(grantId: string, at: string): Promise<boolean>;
}

/**
 * A client's OpenID Connect identity provider (issue 14): people sign in at the front door through
 * it, and act as its key with the scope its claims give. One per key; `name` (unique) is what they
 * type on the sign-in page.
 */
export interface IdentityProviderRecord {
  keyId: string;
  /** The key's client. */
  clientId: string;
  name: string;
  displayName: string;
  /** The issuer URL, as discovery (`/.well-known/openid-configuration`) starts from it. */
  issuer: string;
  oauthClientId: string;
  /** Sealed. */
  clientSecret: string;
  /** The ID token claim that gives user_id. */
  userClaim: string;
  /** The ID token claim that gives org_id (platform keys), or null. */
  orgClaim: string | null;
  createdAt: string;
  updatedAt: string;
}

export type NewIdentityProvider = Omit<IdentityProviderRecord, 'clientId' | 'createdAt' | 'updatedAt'>;

/** Identity providers of clients' keys. */
export interface IdentityProviderStore {
  /**
   * Inserts the key's identity provider, or replaces it whole. Rejects when another key's holds
   * the name (callers check first; this is the backstop).
   */
  put(idp: NewIdentityProvider): Promise<void>;
  getByName(name: string): Promise<IdentityProviderRecord | undefined>;
  getByKey(keyId: string): Promise<IdentityProviderRecord | undefined>;
  /** Every identity provider, by name. */
  list(): Promise<IdentityProviderRecord[]>;
  /** Deletes the key's identity provider; false when it had none. */
  delete(keyId: string): Promise<boolean>;
}

/**
 * What the audit trail records (issue 18): every tool call, and every connection and key event.
 * The connection events are those of the connection history ({@link ConnectionEvent}).
 */
export type AuditEvent = 'tool_call' | ConnectionEvent | 'key_created' | 'key_revoked' | 'oauth_app_changed';
export const AUDIT_EVENTS: readonly AuditEvent[] = [
  'tool_call',
  'connected',
  'refreshed',
  'reapproval_needed',
  'disconnected',
  'key_created',
  'key_revoked',
  'oauth_app_changed',
];

/**
 * How a tool call ended: `ok`; `error`, a result the agent got with isError (the provider refused,
 * no connection...); `refused`, a protocol error (unknown tool, invalid arguments); `failed`, a fault
 * of the gateway. Other events are `ok`.
 */
export type AuditOutcome = 'ok' | 'error' | 'refused' | 'failed';
export const AUDIT_OUTCOMES: readonly AuditOutcome[] = ['ok', 'error', 'refused', 'failed'];

/**
 * One entry of the audit trail: who (client, key, scope), what (provider, tool), how it ended and
 * how long it took. Never arguments, results or secrets: `message` is the error text the agent was
 * given (which the result shaping has cleared of credentials), and only for outcomes other than ok.
 */
export interface AuditEntry {
  id: string;
  at: string;
  event: AuditEvent;
  clientId: string | null;
  keyId: string | null;
  orgId: string | null;
  userId: string | null;
  provider: string | null;
  tool: string | null;
  outcome: AuditOutcome;
  /** Tool calls: from receiving the call to having its result, in microseconds. */
  latencyUs: number | null;
  /** The provider's HTTP status, when the call reached it. */
  upstreamStatus: number | null;
  message: string | null;
}

/** An audit entry as read back: with its client's name. */
export interface AuditRecord extends AuditEntry {
  clientName: string | null;
}

/** Which audit entries to read: every field narrows (all of them: AND); newest first, at most `limit`. */
export interface AuditFilter {
  /** ISO times: at or after `since`, before `until`. */
  since?: string;
  until?: string;
  /** The client's name. */
  client?: string;
  org?: string;
  user?: string;
  provider?: string;
  outcome?: AuditOutcome;
  event?: AuditEvent;
  limit: number;
}

/** The audit trail: written in batches (store/audit-log.ts), read by the operator. */
export interface AuditStore {
  /** Inserts the entries in one statement. */
  append(entries: readonly AuditEntry[]): Promise<void>;
  /** Entries matching the filter, newest first. */
  list(filter: AuditFilter): Promise<AuditRecord[]>;
  /** Deletes entries recorded before `before` (ISO time); returns how many. */
  purge(before: string): Promise<number>;
}

/** The whole durable state of a deployment: its lifecycle, and one port per aggregate. */
export interface Store {
  /** Applies pending migrations; returns the versions applied now. */
  migrate(): Promise<number[]>;
  /** True when the store answers a trivial query; false (never a rejection) when it does not. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
  /**
   * Replaces every sealed value with `reseal(item)` in ONE transaction (master-key rotation): either
   * all are re-encrypted or none is. Returns how many were.
   */
  resealAll(reseal: (item: SealedItem) => string): Promise<number>;

  readonly meta: MetaStore;
  readonly keys: KeyStore;
  readonly scopes: ScopeStore;
  readonly reports: ReportStore;
  readonly connections: ConnectionStore;
  readonly links: LinkStore;
  readonly oauthApps: OAuthAppStore;
  readonly dashboard: DashboardStore;
  readonly policies: PolicyStore;
  readonly frontDoor: FrontDoorStore;
  readonly identityProviders: IdentityProviderStore;
  readonly audit: AuditStore;
}
