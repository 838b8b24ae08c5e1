import { request } from 'undici';
import type { KeyService } from '../auth/key-service.js';
import type { CatalogReport, CatalogSnapshot, Finding, ProviderEntry } from '../catalog/index.js';
import { providerSetting, type Config } from '../config.js';
import type { OAuthApps } from '../connections/oauth-apps.js';
import type { FrontDoor } from '../auth/front-door/index.js';
import type { Bus } from '../coordination/bus.js';
import { GatewayError } from '../errors.js';
import type { Keyring } from '../keyring.js';
import { activity, auditFilter, type Activity, type ActivityWindow, type AuditQuery } from './audit.js';
import { CONTROL, InputError, line } from './input.js';
import { IdentityProviderOperations } from './identity-providers.js';
import { PolicyOperations } from './policies.js';
import { MODERN_VERSION, SERVER_INFO } from '../mcp/protocol.js';
import type {
  ApiKeyRecord,
  AuditRecord,
  Branding,
  ClientRecord,
  ConnectionEventRecord,
  FrontDoorGrantRecord,
  OAuthAppRecord,
  ReportRecord,
  Store,
} from '../store/types.js';
import { KEY_TYPES, type KeyType } from '../domain.js';

export interface ClientSummary extends ClientRecord {
  activeKeys: number;
  revokedKeys: number;
}

/** The `mcpServers` configuration an MCP client reads (SPEC.md, Endpoints). */
export interface McpServersConfig {
  mcpServers: { toolgate: { url: string; headers: { 'X-API-Key': string } } };
}

export interface CreatedKey {
  /** The raw key: returned this once, never stored. */
  key: string;
  record: ApiKeyRecord;
  config: McpServersConfig;
}

export type KeyTestResult = { ok: true; tools: string[] } | { ok: false; code: string; message: string };

export interface ReportView extends ReportRecord {
  clientName: string;
}

export type ProviderState = 'loaded' | 'stale' | 'failed';

export interface ProviderStatus {
  id: string;
  /** Absent for a provider that never loaded. */
  entry?: ProviderEntry;
  state: ProviderState;
  /** Errors and warnings of the manifest on disk now (a stale provider's are why it is stale). */
  findings: Finding[];
}

export interface CatalogStatus {
  version: number;
  loadedAt: string;
  providers: ProviderStatus[];
}

export interface OrganizationView {
  clientName: string;
  orgId: string;
  users: number;
  /** null: configured with an OAuth app before its first request. */
  firstSeenAt: string | null;
  /** Providers for which the organization brought its own OAuth app. */
  ownApps: string[];
}

/** An OAuth app as shown to the operator: never its secret. */
export interface OAuthAppView {
  id: string;
  provider: string;
  clientName: string | null;
  orgId: string | null;
  oauthClientId: string;
  branding: Branding | null;
  createdAt: string;
  current: boolean;
}

/** Who an OAuth app belongs to: an organization of a client, or the operator (null). */
export type AppOwner = { clientId: string; clientName: string; orgId: string } | null;

/** One provider's app for one owner, as the OAuth app forms show it. */
export interface OAuthAppSlot {
  provider: ProviderEntry;
  app: OAuthAppView | undefined;
  /** The operator's default comes from TOOLGATE_PROVIDER_<ID>_CLIENT_ID/_CLIENT_SECRET when none is stored. */
  fromEnvironment: boolean;
}

/** What the operator submits for an OAuth app; the secret may be empty to keep the stored one. */
export interface OAuthAppInput {
  provider?: unknown;
  client_id?: unknown;
  client_secret?: unknown;
  display_name?: unknown;
  logo_url?: unknown;
  accent_color?: unknown;
}

export interface ConnectionsRow {
  clientName: string;
  orgId: string | null;
  provider: string;
  connected: number;
  reapprovalNeeded: number;
}

export interface ConnectionsOverview {
  rows: ConnectionsRow[];
  events: ConnectionEventRecord[];
}

const MODE_QUERY: Record<KeyType, string> = {
  solo: '',
  client: '?user_id=USER_ID',
  platform: '?org_id=ORG_ID&user_id=USER_ID',
};

/** The client configuration for a key, with the URL of its mode (solo, 2-level, 3-level). */
export function mcpServersConfig(baseUrl: string, key: string, type: KeyType): McpServersConfig {
  return {
    mcpServers: { toolgate: { url: `${baseUrl}/mcp/${MODE_QUERY[type]}`, headers: { 'X-API-Key': key } } },
  };
}

const RECENT_EVENTS = 50;

/**
 * What an operator can do, behind both front doors: the admin API (`/admin/*`, JSON, used by the
 * `toolgate` command) and the dashboard's forms (`/dashboard`). One implementation, so a rule (a
 * validation, a write-only secret, revocation closing streams) holds the same through either.
 */
export interface AdminDeps {
  config: Config;
  store: Store;
  /** Creates keys, and revokes them (which cuts off their open streams in every process). */
  keys: KeyService;
  catalog: { readonly current: CatalogSnapshot };
  /** Rebuilds the catalog aside and swaps it in (the composition root logs the report). */
  reloadCatalog: () => Promise<CatalogReport>;
  oauthApps: OAuthApps;
  /** This process's own origin for a loopback request (`http://127.0.0.1:8080`); undefined until it listens. */
  localOrigin: () => string | undefined;
  /** What changes reach every process through (policy changes). */
  bus: Bus;
  /** The OAuth front door: the agent applications a key authorized, and their revocation (issue 14). */
  frontDoor: Pick<FrontDoor, 'grantsOfKey' | 'revokeGrant'>;
  /** Seals identity providers' client secrets. */
  keyring: Keyring;
}

export class AdminOperations {
  /** Tool policies of clients and organizations (issue 15). */
  readonly policies: PolicyOperations;
  /** Identity providers clients sign their users in through at the front door (issue 14). */
  readonly identityProviders: IdentityProviderOperations;

  constructor(private readonly deps: AdminDeps) {
    this.policies = new PolicyOperations(deps);
    this.identityProviders = new IdentityProviderOperations(deps);
  }

  async clients(): Promise<ClientSummary[]> {
    const keys = await this.deps.store.keys.list();
    return (await this.deps.store.keys.listClients()).map((client) => {
      const own = keys.filter((k) => k.clientId === client.id);
      const activeKeys = own.filter((k) => k.revokedAt === null).length;
      return { ...client, activeKeys, revokedKeys: own.length - activeKeys };
    });
  }

  async createClient(name: unknown): Promise<ClientRecord> {
    const text = line(name, 'name', 'a client name', 100);
    if (await this.deps.store.keys.findClient(text))
      throw new InputError('name', `A client named "${text}" exists already: create its keys below.`);
    return this.deps.store.keys.createClient(text);
  }

  /** Creates a key for the named client (created on first use, like `toolgate keys create`). */
  async createKey(client: unknown, type: unknown): Promise<CreatedKey> {
    const name = line(client, 'client', 'the client the key is for', 100);
    if (typeof type !== 'string' || !KEY_TYPES.includes(type as KeyType))
      throw new InputError('type', 'Choose the key type: solo, client or platform.');
    const { key, record } = await this.deps.keys.create(name, type as KeyType);
    return { key, record, config: mcpServersConfig(this.deps.config.baseUrl, key, record.type) };
  }

  keys(): Promise<ApiKeyRecord[]> {
    return this.deps.store.keys.list();
  }

  async key(id: string): Promise<ApiKeyRecord> {
    const record = await this.deps.store.keys.get(id);
    if (!record) throw new GatewayError('TG_ERR_RECORD_NOT_FOUND', `No key ${id}: see the list of keys.`);
    return record;
  }

  /** The agent applications signed in through the front door with this key, newest first. */
  async grantsOfKey(id: string): Promise<FrontDoorGrantRecord[]> {
    await this.key(id);
    return this.deps.frontDoor.grantsOfKey(id);
  }

  /**
   * Revokes an agent application's access (a front-door grant of this key): its tokens stop working
   * at once in every process and streams opened with them close. False when it was revoked already.
   */
  async revokeGrant(keyId: string, grantId: string): Promise<boolean> {
    const grants = await this.grantsOfKey(keyId);
    if (!grants.some((g) => g.grantId === grantId))
      throw new GatewayError(
        'TG_ERR_RECORD_NOT_FOUND',
        `Key ${keyId} has no authorized application ${grantId}.`,
      );
    return this.deps.frontDoor.revokeGrant(grantId);
  }

  /** Revokes a key and closes its open streams at once; revoking a revoked key changes nothing. */
  async revokeKey(id: string): Promise<ApiKeyRecord> {
    await this.key(id);
    await this.deps.keys.revoke(id);
    return this.key(id);
  }

  /**
   * Runs a tools/list with `key` against this gateway's own /mcp/ over loopback, the way a client
   * would (a stateless 2026-07-28 request): the key, the host check and the tool list are all the
   * real ones. The key is sent only there, never stored or logged.
   */
  async testKey(key: unknown): Promise<KeyTestResult> {
    const value = typeof key === 'string' ? key.trim() : '';
    if (value === '') throw new InputError('key', 'Paste the key to test.');
    const origin = this.deps.localOrigin();
    if (origin === undefined) throw new Error('The gateway is not listening on TCP');
    const meta = {
      'io.modelcontextprotocol/protocolVersion': MODERN_VERSION,
      'io.modelcontextprotocol/clientInfo': {
        name: `${SERVER_INFO.name}-dashboard`,
        version: SERVER_INFO.version,
      },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    const response = await request(`${origin}/mcp/`, {
      method: 'POST',
      headers: {
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
        'mcp-protocol-version': MODERN_VERSION,
        'mcp-method': 'tools/list',
        'x-api-key': value,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } }),
    });
    const text = await response.body.text();
    let answer: {
      result?: { tools?: { name: string }[] };
      error?: { code: string | number; message: string };
    };
    try {
      answer = JSON.parse(text) as typeof answer;
    } catch {
      return {
        ok: false,
        code: `HTTP ${response.statusCode}`,
        message: 'The gateway answered something other than JSON.',
      };
    }
    if (answer.error) return { ok: false, code: String(answer.error.code), message: answer.error.message };
    if (response.statusCode !== 200 || !answer.result?.tools)
      return { ok: false, code: `HTTP ${response.statusCode}`, message: 'The gateway gave no tool list.' };
    return { ok: true, tools: answer.result.tools.map((t) => t.name) };
  }

  /** Audit entries matching an operator's filter, newest first (100 unless it says `limit`). */
  audit(query: AuditQuery): Promise<AuditRecord[]> {
    return this.deps.store.audit.list(auditFilter(query));
  }

  /** The Activity page's figures: the tool calls of the window that match the operator's filter. */
  activity(query: AuditQuery, window: ActivityWindow): Promise<Activity> {
    return activity(this.deps.store.audit, auditFilter(query), window);
  }

  async reports(status: unknown): Promise<ReportView[]> {
    if (status !== undefined && status !== 'open' && status !== 'resolved')
      throw new InputError('status', 'status is open or resolved (or absent for every report).');
    const names = await this.clientNames();
    const reports = await this.deps.store.reports.list(status === undefined ? {} : { status });
    return reports.map((r) => ({ ...r, clientName: names.get(r.scope.clientId) ?? r.scope.clientId }));
  }

  /** Marks a report resolved; resolving a resolved report changes nothing. */
  async resolveReport(id: string): Promise<void> {
    if (await this.deps.store.reports.resolve(id, new Date().toISOString())) return;
    const known = (await this.deps.store.reports.list({ status: 'resolved' })).some((r) => r.id === id);
    if (!known)
      throw new GatewayError('TG_ERR_RECORD_NOT_FOUND', `No report ${id}: see the list of reports.`);
  }

  reloadCatalog(): Promise<CatalogReport> {
    return this.deps.reloadCatalog();
  }

  /** Every provider of the snapshot in force, and those whose manifest fails, by id. */
  catalog(): CatalogStatus {
    const snapshot = this.deps.catalog.current;
    const providers: ProviderStatus[] = [...snapshot.providers.values()].map((entry) => {
      const stale = snapshot.stale.get(entry.id);
      return stale
        ? { id: entry.id, entry, state: 'stale', findings: stale }
        : { id: entry.id, entry, state: 'loaded', findings: entry.warnings };
    });
    for (const [id, findings] of snapshot.failed) providers.push({ id, state: 'failed', findings });
    providers.sort((a, b) => (a.id < b.id ? -1 : 1));
    return { version: snapshot.version, loadedAt: snapshot.loadedAt.toISOString(), providers };
  }

  provider(id: string): ProviderStatus {
    const status = this.catalog().providers.find((p) => p.id === id);
    if (!status) throw new GatewayError('TG_ERR_RECORD_NOT_FOUND', `No provider ${id} in the catalog.`);
    return status;
  }

  /** Organizations seen in requests, and those configured with an OAuth app before their first request. */
  async organizations(): Promise<OrganizationView[]> {
    const names = await this.clientNames();
    const byOwner = new Map<string, OrganizationView>();
    for (const org of await this.deps.store.scopes.listOrganizations()) {
      const { clientName, orgId, users, firstSeenAt } = org;
      byOwner.set(`${org.clientId}\u0000${orgId}`, { clientName, orgId, users, firstSeenAt, ownApps: [] });
    }
    for (const app of await this.deps.store.oauthApps.list()) {
      if (app.supersededAt !== null || app.clientId === null || app.orgId === null) continue;
      const owner = `${app.clientId}\u0000${app.orgId}`;
      const view = byOwner.get(owner) ?? {
        clientName: names.get(app.clientId) ?? app.clientId,
        orgId: app.orgId,
        users: 0,
        firstSeenAt: null,
        ownApps: [],
      };
      view.ownApps.push(app.provider);
      byOwner.set(owner, view);
    }
    return [...byOwner.values()].sort(
      (a, b) => a.clientName.localeCompare(b.clientName) || a.orgId.localeCompare(b.orgId),
    );
  }

  /** The owner named by a client name and an org_id, both or neither (the operator's default). */
  async owner(client: unknown, orgId: unknown): Promise<AppOwner> {
    const hasClient = typeof client === 'string' && client !== '';
    const hasOrg = typeof orgId === 'string' && orgId !== '';
    if (!hasClient && !hasOrg) return null;
    const name = line(client, 'client', 'the client the organization is under', 100);
    const org = line(orgId, 'org_id', 'the org_id', 256);
    const record = await this.deps.store.keys.findClient(name);
    if (!record) throw new InputError('client', `No client is named "${name}".`);
    return { clientId: record.id, clientName: record.name, orgId: org };
  }

  /** Every OAuth app ever stored, superseded ones included, without secrets. */
  async oauthApps(): Promise<OAuthAppView[]> {
    const names = await this.clientNames();
    return (await this.deps.store.oauthApps.list()).map((app) => appView(app, names));
  }

  /**
   * The OAuth2 providers an owner can bring an app for (an organization: those whose manifest says
   * `allow_org_apps`; the operator: all), each with the owner's current app.
   */
  async appSlots(owner: AppOwner): Promise<OAuthAppSlot[]> {
    const names = await this.clientNames();
    const slots: OAuthAppSlot[] = [];
    for (const provider of this.deps.catalog.current.providers.values()) {
      const auth = provider.spec.auth;
      if (auth.kind !== 'oauth2' || (owner !== null && auth.allow_org_apps !== true)) continue;
      const app = await this.deps.store.oauthApps.current(provider.id, owner);
      slots.push({
        provider,
        app: app && appView(app, names),
        fromEnvironment:
          owner === null &&
          providerSetting(this.deps.config, provider.id, 'CLIENT_ID') !== undefined &&
          providerSetting(this.deps.config, provider.id, 'CLIENT_SECRET') !== undefined,
      });
    }
    return slots;
  }

  /**
   * Sets an owner's app of a provider. The secret is write-only: left empty, the stored app keeps
   * its secret and only the branding changes (in place: connections keep their app). A new client
   * id needs its own secret, since an id is never paired with another app's secret; new
   * credentials make a new app, and connections minted by the old one keep refreshing with it.
   */
  async setOAuthApp(
    owner: AppOwner,
    input: OAuthAppInput,
  ): Promise<{ id: string; changed: 'branding' | 'app' }> {
    const providerId = typeof input.provider === 'string' ? input.provider : '';
    const slot = (await this.appSlots(owner)).find((s) => s.provider.id === providerId);
    if (!slot) {
      throw new InputError(
        'provider',
        owner === null
          ? `${providerId} is not an OAuth2 provider of the catalog.`
          : `${providerId} is not an OAuth2 provider that lets organizations bring their own app (allow_org_apps).`,
      );
    }
    const oauthClientId = line(input.client_id, 'client_id', 'the OAuth client id', 200);
    const secret = typeof input.client_secret === 'string' ? input.client_secret.trim() : '';
    const branding = brandingOf(input);
    if (secret === '') {
      if (!slot.app)
        throw new InputError(
          'client_secret',
          'Enter the client secret the provider issued with this client id.',
        );
      if (slot.app.oauthClientId !== oauthClientId) {
        throw new InputError(
          'client_secret',
          'A new client id needs its own client secret: enter the secret issued with it (the stored one belongs to the old id).',
        );
      }
      await this.deps.store.oauthApps.setBranding(slot.app.id, branding);
      return { id: slot.app.id, changed: 'branding' };
    }
    if (secret.length > 1_000 || CONTROL.test(secret))
      throw new InputError('client_secret', 'The client secret must be one line of at most 1000 characters.');
    const id = await this.deps.oauthApps.set(
      providerId,
      owner && { clientId: owner.clientId, orgId: owner.orgId },
      { clientId: oauthClientId, clientSecret: secret },
      branding,
    );
    return { id, changed: 'app' };
  }

  /** Connections per client, organization and provider, by state, and the recent connection events. */
  async connections(): Promise<ConnectionsOverview> {
    const rows = new Map<string, ConnectionsRow>();
    for (const count of await this.deps.store.connections.count()) {
      const key = `${count.clientId}\u0000${count.orgId ?? ''}\u0000${count.provider}`;
      const row = rows.get(key) ?? {
        clientName: count.clientName,
        orgId: count.orgId,
        provider: count.provider,
        connected: 0,
        reapprovalNeeded: 0,
      };
      if (count.state === 'connected') row.connected += count.count;
      else row.reapprovalNeeded += count.count;
      rows.set(key, row);
    }
    return {
      rows: [...rows.values()],
      events: await this.deps.store.connections.listEvents(RECENT_EVENTS),
    };
  }

  private async clientNames(): Promise<Map<string, string>> {
    return new Map((await this.deps.store.keys.listClients()).map((c) => [c.id, c.name]));
  }
}

function appView(app: OAuthAppRecord, names: ReadonlyMap<string, string>): OAuthAppView {
  return {
    id: app.id,
    provider: app.provider,
    clientName: app.clientId === null ? null : (names.get(app.clientId) ?? app.clientId),
    orgId: app.orgId,
    oauthClientId: app.oauthClientId,
    branding: app.branding,
    createdAt: app.createdAt,
    current: app.supersededAt === null,
  };
}

// The branding fields of a form or request: each optional, checked; null when all are empty.
function brandingOf(input: OAuthAppInput): Branding | null {
  const displayName = line(input.display_name, 'display_name', 'the display name', 100, true);
  const logoUrl = line(input.logo_url, 'logo_url', 'the logo URL', 2_000, true);
  const accentColor = line(input.accent_color, 'accent_color', 'the accent colour', 7, true);
  if (logoUrl !== '' && !URL.canParse(logoUrl))
    throw new InputError('logo_url', 'The logo URL is not a URL.');
  if (logoUrl !== '' && new URL(logoUrl).protocol !== 'https:')
    throw new InputError(
      'logo_url',
      'The logo URL must be https:// (consent pages load images over https only).',
    );
  if (accentColor !== '' && !/^#[0-9a-fA-F]{6}$/.test(accentColor))
    throw new InputError('accent_color', 'The accent colour is #RRGGBB, like #1a73e8.');
  const branding: Branding = {
    ...(displayName ? { displayName } : {}),
    ...(logoUrl ? { logoUrl } : {}),
    ...(accentColor ? { accentColor } : {}),
  };
  return Object.keys(branding).length > 0 ? branding : null;
}
