import type { ProviderEntry } from '../catalog/types.js';
import { providerSetting, type Config } from '../config.js';
import type { Keyring } from '../keyring.js';
import type { AuditLog } from '../store/audit-log.js';
import { newId } from '../store/ids.js';
import type { Branding, OAuthAppRecord, Store } from '../store/types.js';
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
}

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
      `${provider.id} discovers its OAuth endpoints from its MCP server (discovery: mcp); set TOOLGATE_PROVIDER_<ID>_AUTHORIZATION_URL and _TOKEN_URL until discovery is supported`,
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
    });
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

  private resolve(record: OAuthAppRecord): ResolvedApp {
    return {
      id: record.id,
      clientId: record.oauthClientId,
      clientSecret: this.keyring
        .open(record.clientSecret, ...appSecretBinding(record.id, record.provider))
        .toString('utf8'),
      branding: record.branding,
      orgId: record.orgId,
    };
  }

  private fromEnvironment(provider: string): ResolvedApp | undefined {
    const clientId = providerSetting(this.config, provider, 'CLIENT_ID');
    const clientSecret = providerSetting(this.config, provider, 'CLIENT_SECRET');
    if (clientId === undefined || clientSecret === undefined) return undefined;
    return { id: `env:${provider}`, clientId, clientSecret, branding: null, orgId: null };
  }
}
