import { createHmac, createPrivateKey, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import Provider, {
  errors,
  interactionPolicy,
  type Configuration,
  type KoaContextWithOIDC,
} from 'oidc-provider';
import type { Config } from '../../config.js';
import type { Bus } from '../../coordination/bus.js';
import { type Scope, type ScopeMode } from '../../domain.js';
import { GatewayError } from '../../errors.js';
import type { Keyring } from '../../keyring.js';
import type { ApiKeyRecord, FrontDoorGrantRecord, Store } from '../../store/types.js';
import type { OutboundClient } from '../../upstream/outbound.js';
import { StoreAdapter } from './adapter.js';
import { ClientMetadataDocuments } from './cimd.js';

/** Front-door access tokens start with this, refresh tokens with the next: never mistaken for API keys. */
export const ACCESS_TOKEN_PREFIX = 'tgat_';
export const REFRESH_TOKEN_PREFIX = 'tgrt_';
/** Short-lived access tokens; the client refreshes (rotating refresh tokens) to go on. */
export const ACCESS_TOKEN_TTL_S = 3_600;
const REFRESH_TOKEN_TTL_S = 30 * 24 * 3_600;
const GRANT_TTL_S = 365 * 24 * 3_600;
/** How long a person has to sign in and approve. */
const INTERACTION_TTL_S = 30 * 60;
/** last_used_at of a grant is a hint for the operator: written at most this often per process. */
const TOUCH_INTERVAL_MS = 60_000;
/** What a person is told of an authorization naming a client_id this gateway does not know. */
const UNKNOWN_CLIENT =
  'The application asking for access is not registered with this gateway (its registration may have expired after 30 days unused). Its MCP client registers again when it starts a new sign-in; if this persists, remove the server from the client and add it again.';
/** The one resource-server scope: use of the MCP endpoint as the signed-in key and scope. */
export const MCP_SCOPE = 'mcp';

/** Who a grant acts for: the key signed in with (or the key the identity provider belongs to) and the scope. */
export interface FrontDoorAccount {
  keyId: string;
  orgId: string | null;
  userId: string | null;
  via: 'key' | 'idp';
}

/** The account as oidc-provider's `accountId` (the token's subject): readable back by {@link decodeAccount}. */
export function encodeAccount(account: FrontDoorAccount): string {
  return Buffer.from(JSON.stringify([account.keyId, account.orgId, account.userId, account.via])).toString(
    'base64url',
  );
}

export function decodeAccount(accountId: string): FrontDoorAccount | undefined {
  try {
    const [keyId, orgId, userId, via] = JSON.parse(Buffer.from(accountId, 'base64url').toString('utf8')) as [
      unknown,
      unknown,
      unknown,
      unknown,
    ];
    const nullableString = (v: unknown): v is string | null => v === null || typeof v === 'string';
    if (typeof keyId !== 'string' || !nullableString(orgId) || !nullableString(userId)) return undefined;
    if (via !== 'key' && via !== 'idp') return undefined;
    return { keyId, orgId, userId, via };
  } catch {
    return undefined;
  }
}

/** The scope mode of an account's identifiers, as resolveScope would name it. */
export function modeOf(account: { orgId: string | null; userId: string | null }): ScopeMode {
  return account.userId === null ? 'solo' : account.orgId === null ? '2-level' : '3-level';
}

/** An Ed25519 signing key derived from the master key: the same in every process, nothing to store. */
function signingKey(keyring: Keyring): Record<string, unknown> {
  const seed = keyring.derive('toolgate/front-door/signing-key');
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const jwk = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' }).export({ format: 'jwk' });
  return { ...jwk, kid: `ed25519-${keyring.fingerprint}`, use: 'sig', alg: 'EdDSA' };
}

export interface FrontDoorDeps {
  config: Config;
  store: Store;
  keyring: Keyring;
  outbound: OutboundClient;
  bus: Bus;
  /** The page a browser is shown when a step fails (unknown client, bad redirect, expired sign-in). */
  errorPage: (error: { error?: string | undefined; error_description?: string | undefined }) => string;
}

/** What the sign-in and consent pages show of the agent application asking for access. */
export interface AgentApp {
  id: string;
  name: string | null;
  uri: string | null;
  logo: string | null;
  /** The host the application's redirect goes to: what a person can check. */
  redirectHost: string;
  /**
   * The host serving the application's Client ID Metadata Document (null for a registered client):
   * the one part of its description it cannot merely claim, since the document was fetched there.
   */
  documentHost: string | null;
}

/**
 * The OAuth front door (issue 14): an OAuth 2.1 authorization server at the gateway's base URL, for
 * MCP clients that cannot send an API key header. It is oidc-provider (a certified, well-kept
 * implementation) configured to the MCP authorization spec: authorization code with PKCE S256
 * only, exact redirect URIs, `iss` in the redirect, tokens bound to the `/mcp` resource (RFC 8707),
 * opaque short-lived access tokens, rotating refresh tokens with reuse detection, revocation,
 * Client ID Metadata Documents and Dynamic Client Registration. Its records live in the store
 * (hashed), so every process of a deployment serves every step. Who signs in is decided by the
 * pages in http/front-door.ts: a person pastes an API key (or comes back from the client's identity
 * provider), and the grant then acts exactly as that key with that scope.
 */
export class FrontDoor {
  readonly provider: Provider;
  /** The gateway's base URL, the issuer of every token. */
  readonly issuer: string;
  /** The protected resource: the MCP endpoint, as RFC 8707 resource indicators name it. */
  readonly resource: string;
  readonly handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>;
  private readonly touched = new Map<string, number>();
  private readonly registered = new WeakMap<object, string>();

  constructor(private readonly deps: FrontDoorDeps) {
    const { config, store, keyring, bus } = deps;
    this.issuer = config.baseUrl.replace(/\/+$/, '');
    this.resource = `${this.issuer}/mcp`;
    const documents = new ClientMetadataDocuments(deps.outbound);
    const hooks = {
      externalClient: (id: string) => documents.find(id),
      grantRevoked: async (grantId: string) => {
        await store.frontDoor.revokeGrant(grantId, new Date().toISOString());
        await bus.publish({ type: 'grant.revoked', grantId });
      },
    };
    const { Check, base } = interactionPolicy;
    const policy = base();
    // Every authorization is signed in and approved anew: a browser session never carries a key's
    // sign-in over to another request, whoever asks.
    policy
      .get('login')!
      .checks.add(
        new Check('toolgate_sign_in', 'each authorization signs in', (ctx) =>
          ctx.oidc.result?.login || ctx.oidc.result?.consent ? Check.NO_NEED_TO_PROMPT : Check.REQUEST_PROMPT,
        ),
      );
    policy
      .get('consent')!
      .checks.add(
        new Check('toolgate_consent', 'each authorization is approved', (ctx) =>
          ctx.oidc.result?.consent?.grantId ? Check.NO_NEED_TO_PROMPT : Check.REQUEST_PROMPT,
        ),
      );
    const resourceInfo = (indicator: string) => {
      if (indicator.replace(/\/+$/, '') !== this.resource)
        throw new errors.InvalidTarget(`this server protects ${this.resource} only`);
      return {
        scope: MCP_SCOPE,
        audience: this.resource,
        accessTokenFormat: 'opaque' as const,
        accessTokenTTL: ACCESS_TOKEN_TTL_S,
      };
    };
    const configuration: Configuration = {
      adapter: (name: string) => new StoreAdapter(name, store.frontDoor, hooks),
      clients: [],
      clientDefaults: {
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        id_token_signed_response_alg: 'EdDSA',
      },
      clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
      enabledJWA: { idTokenSigningAlgValues: ['EdDSA'] },
      jwks: { keys: [signingKey(keyring)] },
      cookies: { keys: [keyring.derive('toolgate/front-door/cookies').toString('base64url')] },
      // `mcp` is also the resource's scope: listed so clients may register and ask for it.
      scopes: ['openid', 'offline_access', MCP_SCOPE],
      claims: { openid: ['sub'] },
      responseTypes: ['code'],
      pkce: { required: () => true, methods: ['S256'] },
      clockTolerance: 0,
      issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      rotateRefreshToken: true,
      expiresWithSession: () => false,
      // Browser-based clients call the token endpoint from their own origin: the one they redirect to.
      clientBasedCORS: (_ctx, origin, client) =>
        client.redirectUris?.some((uri) => new URL(uri).origin === origin) ?? false,
      // The account lives as long as its key: a code or refresh token of a revoked key is invalid_grant,
      // not new tokens the MCP endpoint would refuse anyway.
      findAccount: async (_ctx, sub) => {
        const account = decodeAccount(sub);
        const key = account && (await store.keys.get(account.keyId));
        return key && key.revokedAt === null ? { accountId: sub, claims: () => ({ sub }) } : undefined;
      },
      interactions: { url: (_ctx, interaction) => `/signin/${interaction.uid}`, policy },
      routes: {
        authorization: '/authorize',
        token: '/token',
        registration: '/register',
        revocation: '/revoke',
        jwks: '/jwks',
      },
      ttl: {
        AccessToken: ACCESS_TOKEN_TTL_S,
        AuthorizationCode: 60,
        IdToken: 3_600,
        RefreshToken: REFRESH_TOKEN_TTL_S,
        Interaction: INTERACTION_TTL_S,
        Session: INTERACTION_TTL_S,
        Grant: GRANT_TTL_S,
      },
      features: {
        devInteractions: { enabled: false },
        userinfo: { enabled: false },
        rpInitiatedLogout: { enabled: false },
        revocation: { enabled: true },
        registration: {
          enabled: true,
          // A confidential client's secret is derived from its id, never stored: the database holds
          // nothing a client could authenticate with.
          idFactory: (ctx: KoaContextWithOIDC) => {
            const id = `tgc_${randomBytes(16).toString('base64url')}`;
            this.registered.set(ctx, id);
            return id;
          },
          secretFactory: (ctx: KoaContextWithOIDC) => this.clientSecret(this.registered.get(ctx)!),
        },
        resourceIndicators: {
          enabled: true,
          defaultResource: () => this.resource,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, indicator) => resourceInfo(indicator),
        },
      },
      discovery: { client_id_metadata_document_supported: true },
      renderError: (ctx, out, error) => {
        ctx.type = 'html';
        // oidc-provider says only "client is invalid" of a client_id it does not know.
        const unknownClient =
          error instanceof errors.InvalidClient && error.error_detail === 'client not found';
        ctx.body = deps.errorPage(unknownClient ? { ...out, error_description: UNKNOWN_CLIENT } : out);
      },
    };
    this.provider = new Provider(this.issuer, configuration);
    // URLs in metadata and redirects are built from the request: make them the configured base URL's,
    // whatever Host the request came with (a proxy in front, a loopback address).
    this.provider.proxy = true;
    prefixTokens(this.provider);
    // A browser session ends with the authorization it served: the next one signs in anew (perhaps
    // with another key, so another scope) instead of being asked to sign the earlier account out.
    // Marked at once, as the session middleware saves after the response unless it is destroyed;
    // its record goes under both ids, as a resumed authorization has just rotated it.
    this.provider.on('authorization.success', (ctx: KoaContextWithOIDC) => {
      const session = ctx.oidc.session;
      if (!session) return;
      Reflect.set(session, 'destroyed', true);
      const oldId: unknown = Reflect.get(session, 'oldId');
      void Promise.all([
        session.destroy(),
        typeof oldId === 'string' ? this.provider.Session.adapter.destroy(oldId) : undefined,
      ]).catch(() => undefined);
    });
    const callback = this.provider.callback();
    const base_ = new URL(this.issuer);
    this.handle = async (req, res) => {
      forwardedAsIssuer(req, base_);
      await callback(req, res);
    };
  }

  private clientSecret(clientId: string): string {
    return createHmac('sha256', this.deps.keyring.derive('toolgate/front-door/client-secret'))
      .update(clientId)
      .digest('base64url');
  }

  /** RFC 9728 protected-resource metadata of `/mcp`. */
  protectedResourceMetadata(): Record<string, unknown> {
    return {
      resource: this.resource,
      authorization_servers: [this.issuer],
      bearer_methods_supported: ['header'],
      scopes_supported: [MCP_SCOPE],
      resource_name: 'Toolgate',
      resource_documentation: `${this.issuer}/signin`,
    };
  }

  /** Where a 401 sends a client to discover how to sign in. */
  get resourceMetadataUrl(): string {
    return `${this.issuer}/.well-known/oauth-protected-resource`;
  }

  /** Details of an interaction (sign-in or consent) for the page; undefined when it expired or is another's. */
  async interaction(
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<{
    uid: string;
    prompt: 'login' | 'consent';
    app: AgentApp;
    account: FrontDoorAccount | undefined;
    redirectOrigin: string;
  }> {
    forwardedAsIssuer(req, new URL(this.issuer));
    const details = await this.provider.interactionDetails(req, res);
    const app = await this.agentApp(String(details.params.client_id), String(details.params.redirect_uri));
    return {
      uid: details.uid,
      prompt: details.prompt.name === 'consent' ? 'consent' : 'login',
      app,
      account: details.session?.accountId ? decodeAccount(details.session.accountId) : undefined,
      redirectOrigin: new URL(String(details.params.redirect_uri)).origin,
    };
  }

  /** The person signed in (a key, or the identity provider): on to consent. */
  async signedIn(req: IncomingMessage, res: ServerResponse, account: FrontDoorAccount): Promise<void> {
    forwardedAsIssuer(req, new URL(this.issuer));
    await this.provider.interactionFinished(
      req,
      res,
      { login: { accountId: encodeAccount(account) } },
      { mergeWithLastSubmission: false },
    );
  }

  /** The person approved: the grant is made, recorded for the dashboard, and the client gets its code. */
  async approve(req: IncomingMessage, res: ServerResponse, key: ApiKeyRecord): Promise<void> {
    forwardedAsIssuer(req, new URL(this.issuer));
    const details = await this.provider.interactionDetails(req, res);
    const accountId = details.session?.accountId;
    const account = accountId ? decodeAccount(accountId) : undefined;
    if (!accountId || !account) throw new errors.AccessDenied('sign in first');
    const clientId = String(details.params.client_id);
    const grant = new this.provider.Grant({ accountId, clientId });
    const scopeParam = details.params.scope;
    const requested = typeof scopeParam === 'string' ? scopeParam.split(' ') : [];
    const oidcScopes = requested.filter((s) => ['openid', 'offline_access', MCP_SCOPE].includes(s));
    if (oidcScopes.length > 0) grant.addOIDCScope(oidcScopes.join(' '));
    grant.addResourceScope(this.resource, MCP_SCOPE);
    const grantId = await grant.save();
    const app = await this.agentApp(clientId, String(details.params.redirect_uri));
    await this.deps.store.frontDoor.addGrant({
      grantId,
      keyId: key.id,
      scope: { clientId: key.clientId, orgId: account.orgId, userId: account.userId },
      appId: clientId,
      appName: app.name,
      appUri: app.uri ?? app.redirectHost,
      via: account.via,
      createdAt: new Date().toISOString(),
    });
    await this.provider.interactionFinished(
      req,
      res,
      { consent: { grantId } },
      { mergeWithLastSubmission: true },
    );
  }

  private async agentApp(clientId: string, redirectUri: string): Promise<AgentApp> {
    const client = await this.provider.Client.find(clientId);
    if (!client) throw new errors.InvalidClient('the client is no longer known');
    const metadata: Record<string, unknown> = client.metadata();
    const text = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
    return {
      id: clientId,
      name: text(metadata.client_name),
      uri: text(metadata.client_uri),
      logo: text(metadata.logo_uri),
      redirectHost: new URL(redirectUri).host,
      documentHost: clientId.startsWith('https://') ? new URL(clientId).host : null,
    };
  }

  /** The person declined (or the sign-in cannot go on): the client is told access_denied. */
  async deny(req: IncomingMessage, res: ServerResponse, description: string): Promise<void> {
    forwardedAsIssuer(req, new URL(this.issuer));
    await this.provider.interactionFinished(
      req,
      res,
      { error: 'access_denied', error_description: description },
      { mergeWithLastSubmission: false },
    );
  }

  /**
   * The key and scope a front-door access token acts for, or TG_ERR_TOKEN_INVALID: unknown,
   * expired, revoked (its grant, or its key), or issued for another resource.
   */
  async verify(
    token: string,
    keys: { get(id: string): Promise<ApiKeyRecord | undefined> },
  ): Promise<{
    key: ApiKeyRecord;
    scope: Scope;
    mode: ScopeMode;
    grantId: string;
  }> {
    const found = await this.provider.AccessToken.find(token);
    const aud = found?.aud;
    const audiences = Array.isArray(aud) ? aud : [aud];
    const account = found ? decodeAccount(found.accountId) : undefined;
    if (!found || !account || !audiences.includes(this.resource))
      throw new GatewayError('TG_ERR_TOKEN_INVALID');
    const key = await keys.get(account.keyId);
    if (!key || key.revokedAt !== null) throw new GatewayError('TG_ERR_TOKEN_INVALID');
    this.touch(found.grantId);
    return {
      key,
      scope: { clientId: key.clientId, orgId: account.orgId, userId: account.userId },
      mode: modeOf(account),
      grantId: found.grantId,
    };
  }

  private touch(grantId: string): void {
    const now = Date.now();
    if (now - (this.touched.get(grantId) ?? 0) < TOUCH_INTERVAL_MS) return;
    if (this.touched.size > 10_000) this.touched.clear();
    this.touched.set(grantId, now);
    this.deps.store.frontDoor
      .touchGrant(grantId, new Date(now).toISOString())
      .catch(() => this.touched.delete(grantId));
  }

  /** The agent applications a key has authorized, newest first. */
  grantsOfKey(keyId: string): Promise<FrontDoorGrantRecord[]> {
    return this.deps.store.frontDoor.grantsOfKey(keyId);
  }

  /**
   * Revokes a grant (the dashboard's button): its tokens stop working at once, in every process,
   * and open streams opened with them close. False when it was revoked already or never existed.
   */
  async revokeGrant(grantId: string): Promise<boolean> {
    const revoked = await this.deps.store.frontDoor.revokeGrant(grantId, new Date().toISOString());
    await this.deps.store.frontDoor.destroyGrant(grantId);
    await this.deps.bus.publish({ type: 'grant.revoked', grantId });
    return revoked;
  }
}

/** Makes oidc-provider read the request as addressed to the issuer (proxy mode, forwarded headers). */
function forwardedAsIssuer(req: IncomingMessage, issuer: URL): void {
  req.headers['x-forwarded-host'] = issuer.host;
  req.headers['x-forwarded-proto'] = issuer.protocol.slice(0, -1);
}

/** Access and refresh tokens carry a recognisable prefix (secret scanners; never taken for an API key). */
function prefixTokens(provider: Provider): void {
  for (const [model, prefix] of [
    [provider.AccessToken, ACCESS_TOKEN_PREFIX],
    [provider.RefreshToken, REFRESH_TOKEN_PREFIX],
  ] as const) {
    const prototype = model.prototype as object;
    const generate = Reflect.get(prototype, 'generateTokenId') as (this: unknown) => string;
    Reflect.set(prototype, 'generateTokenId', function (this: unknown) {
      return prefix + generate.call(this);
    });
  }
}
