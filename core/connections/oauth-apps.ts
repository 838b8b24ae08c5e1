import type { ProviderEntry } from '../catalog/types.js';
import { providerSetting, type Config } from '../config.js';
import type { Keyring } from '../keyring.js';
import type { AuditLog } from '../store/audit-log.js';
import { newId } from '../store/ids.js';
import type { Branding, OAuthAppRecord, Store, UpstreamOAuthServer } from '../store/types.js';
import type { Scope } from '../domain.js';

const SECRET_PURPOSE = 'toolgate/oauth-app-secret';

/** Where an app secret's envelope is bound: its purpose, context and additional data. */
export function appSecretBinding(
  appId: string,
  provider: string,
): [purpose: string, context: string, aad: string] {
  return [SECRET_PURPOSE, appId, JSON.stringify(['oauth-app', appId, provider])];
}

/** An OAuth app ready to use: its id (recorded on each connection it mints) and credentials. */
export interface ResolvedApp {
  /** `env:<provider>` for the app configured in the environment, else the stored app's id. */
  id: string;
  clientId: string;
  clientSecret: string;
  branding: Branding | null;
  /** The organization that brought this app, when it is an org's own. */
  orgId: string | null;
  /** An upstream MCP server's authorization server and how this app is its client; null for a manifest's endpoints. */
  server: UpstreamOAuthServer | null;
}

/** Who an app belongs to: an organization of a client, or the operator (null). */
type Owner = { clientId: string; orgId: string } | null;

/** The OAuth endpoints of a provider: the manifest's, each overridable by configuration. */
export interface OAuthEndpoints {
  authorizationUrl: string;
  tokenUrl: string;
  revocationUrl: string | undefined;
}

export function oauthEndpoints(provider: ProviderEntry, config: Config): OAuthEndpoints {
  const auth = provider.spec.auth;
  if (auth.kind !== 'oauth2') throw new Error(`${provider.id} is not an OAuth2 provider`);
  const authorizationUrl =
    providerSetting(config, provider.id, 'AUTHORIZATION_URL') ?? auth.authorization_url;
  const tokenUrl = providerSetting(config, provider.id, 'TOKEN_URL') ?? auth.token_url;
  if (authorizationUrl === undefined || tokenUrl === undefined)
    throw new Error(
      `${provider.id} discovers its OAuth endpoints from its MCP server (discovery: mcp): they come with its app (ResolvedApp.server), not from the manifest`,
    );
  return {
    authorizationUrl,
    tokenUrl,
    revocationUrl: providerSetting(config, provider.id, 'REVOCATION_URL') ?? auth.revocation_url,
  };
}

/**
 * OAuth apps: the operator's default app per provider (stored, or TOOLGATE_PROVIDER_<ID>_CLIENT_ID /
 * _CLIENT_SECRET), and in 3-level mode an organization's own app with its branding. Secrets are
 * sealed like credentials. Setting new credentials makes a new app row and supersedes the old one,
 * which stays readable: each connection refreshes and revokes with the app that minted it.
 */
export class OAuthApps {
  constructor(
    private readonly store: Store,
    private readonly keyring: Keyring,
    private readonly config: Config,
    private readonly audit: AuditLog,
  ) {}

  /** Stores an app (the operator's default when `owner` is null). Returns its new id. */
  async set(
    provider: string,
    owner: { clientId: string; orgId: string } | null,
    credentials: { clientId: string; clientSecret: string },
    branding: Branding | null,
  ): Promise<string> {
    const id = await this.insert(provider, owner, credentials, branding, null);
    this.audit.record({
      event: 'oauth_app_changed',
      provider,
      clientId: owner?.clientId ?? null,
      orgId: owner?.orgId ?? null,
    });
    return id;
  }

  /** The app a new connection of this scope uses: the org's own if it has one and the provider allows it. */
  async forScope(provider: ProviderEntry, scope: Scope): Promise<ResolvedApp | undefined> {
    const auth = provider.spec.auth;
    if (auth.kind !== 'oauth2') return undefined;
    if (scope.orgId !== null && auth.allow_org_apps === true) {
      const own = await this.store.oauthApps.current(provider.id, {
        clientId: scope.clientId,
        orgId: scope.orgId,
      });
      if (own) return this.resolve(own);
    }
    const stored = await this.store.oauthApps.current(provider.id, null);
    return stored ? this.resolve(stored) : this.fromEnvironment(provider.id);
  }

  /** The app that minted a connection (even if superseded since), for refresh and revocation. */
  async byId(id: string, provider: string): Promise<ResolvedApp | undefined> {
    if (id === `env:${provider}`) return this.fromEnvironment(provider);
    const record = await this.store.oauthApps.get(id);
    return record && record.provider === provider ? this.resolve(record) : undefined;
  }

  /**
   * Toolgate's client of an upstream authorization server for this owner: the current one when it
   * was made the same way for the same endpoints, else a new one (superseding it) with `credentials`,
   * or with the current one's credentials when none are given (a registration reused). Undefined
   * when there is nothing to reuse.
   */
  async upstreamClient(
    provider: string,
    owner: Owner,
    wanted: UpstreamOAuthServer,
    credentials?: { clientId: string; clientSecret: string },
  ): Promise<ResolvedApp | undefined> {
    const current = await this.store.oauthApps.current(provider, owner, wanted.issuer);
    const reusable = current?.server?.method === wanted.method ? current : undefined;
    // Reused credentials keep the way the server agreed they authenticate.
    const server =
      credentials === undefined && reusable?.server
        ? { ...wanted, authMethod: reusable.server.authMethod }
        : wanted;
    if (
      reusable &&
      JSON.stringify(reusable.server) === JSON.stringify(server) &&
      (credentials === undefined || credentials.clientId === reusable.oauthClientId)
    )
      return this.resolve(reusable);
    const given = credentials ?? (reusable && (await this.resolve(reusable)));
    if (!given) return undefined;
    return this.byId(await this.insert(provider, owner, given, null, server), provider);
  }

  /** Stops using a client its authorization server no longer knows: the next connection registers anew. */
  async forget(app: ResolvedApp): Promise<void> {
    if (app.server?.method === 'dcr') await this.store.oauthApps.supersede(app.id);
  }

  /** Stores a new app with its secret sealed to its id and provider; returns the id. */
  private async insert(
    provider: string,
    owner: Owner,
    credentials: { clientId: string; clientSecret: string },
    branding: Branding | null,
    server: UpstreamOAuthServer | null,
  ): Promise<string> {
    const id = newId('app');
    await this.store.oauthApps.put({
      id,
      provider,
      clientId: owner?.clientId ?? null,
      orgId: owner?.orgId ?? null,
      oauthClientId: credentials.clientId,
      clientSecret: this.keyring.seal(
        Buffer.from(credentials.clientSecret),
        ...appSecretBinding(id, provider),
      ),
      branding,
      server,
    });
    return id;
  }

  private async resolve(record: OAuthAppRecord): Promise<ResolvedApp | undefined> {
    // An app set by the operator or an org, bound to an upstream server: its credentials are that app's.
    if (record.server?.method === 'app' && record.server.app !== null) {
      const bound = await this.byId(record.server.app, record.provider);
      return bound && { ...bound, id: record.id, server: record.server };
    }
    return {
      id: record.id,
      clientId: record.oauthClientId,
      clientSecret: this.keyring
        .open(record.clientSecret, ...appSecretBinding(record.id, record.provider))
        .toString('utf8'),
      branding: record.branding,
      orgId: record.orgId,
      server: record.server,
    };
  }

  private fromEnvironment(provider: string): ResolvedApp | undefined {
    const clientId = providerSetting(this.config, provider, 'CLIENT_ID');
    const clientSecret = providerSetting(this.config, provider, 'CLIENT_SECRET');
    if (clientId === undefined || clientSecret === undefined) return undefined;
    return { id: `env:${provider}`, clientId, clientSecret, branding: null, orgId: null, server: null };
  }
}
