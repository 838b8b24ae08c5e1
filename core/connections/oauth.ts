import { createHash, randomBytes } from 'node:crypto';
import { AuthorizationCode, type AccessToken } from 'simple-oauth2';
import type { FastifyBaseLogger } from 'fastify';
import type { ProviderEntry } from '../catalog/types.js';
import type { Config } from '../config.js';
import type { Keyring } from '../keyring.js';
import type { PluginRegistry } from '../plugins/registry.js';
import type { Branding, ConnectionRecord, Store } from '../store/types.js';
import type { ProviderAccess, ProviderClient } from '../upstream/provider-client.js';
import { oauthEndpoints, type OAuthApps, type ResolvedApp } from './oauth-apps.js';
import type { ConnectionService } from './service.js';
import { checkFields } from './validate.js';
import { type Scope, scopeKey } from '../domain.js';

/** A refresh failed for good (invalid_grant, revoked, app gone): the user must approve again. */
export class ReapprovalNeededError extends Error {
  override name = 'ReapprovalNeededError';
}

/** A refresh failed for now (network, 5xx, timeout) after retries: the caller may try again later. */
export class TemporaryRefreshError extends Error {
  override name = 'TemporaryRefreshError';
}

/** What the callback page shows. */
export type CallbackOutcome =
  | { ok: true; provider: ProviderEntry; account: string | null; branding: Branding | null }
  | { ok: false; status: number; title: string; message: string; branding: Branding | null };

/** What the consent start page shows before sending the user to the provider. */
export interface StartInfo {
  provider: ProviderEntry;
  /** Where the start page's form leads (the provider's authorization server). */
  authorizationOrigin: string;
  scope: Scope;
  scopes: string[];
  branding: Branding | null;
}

export interface OAuthFlowsDeps {
  store: Store;
  keyring: Keyring;
  apps: OAuthApps;
  connections: ConnectionService;
  client: ProviderClient;
  plugins: PluginRegistry;
  catalog: { readonly current: { providers: ReadonlyMap<string, ProviderEntry> } };
  config: Config;
  log: FastifyBaseLogger;
  /** Delivers an operator event (TOOLGATE_EVENTS_WEBHOOK_URL); never given secrets. */
  emitEvent: (event: Record<string, unknown>) => void;
}

const STATE_PURPOSE = 'toolgate/oauth-state';
/** Refresh this long before expiry at call time; the scheduler uses a wider margin. */
const CALL_MARGIN_MS = 60_000;
/** Transient refresh failures are retried after these pauses. */
const RETRY_DELAYS_MS = [250, 1_000];
const TOKEN_TIMEOUT_MS = 15_000;
const DEFINITIVE_ERRORS = new Set([
  'invalid_grant',
  'invalid_client',
  'unauthorized_client',
  'unsupported_grant_type',
  'access_denied',
]);

/** What a consent link carries: the app that will mint the tokens, and fields the user gave. */
interface LinkPayload {
  app: string;
  fields?: Record<string, string>;
}

interface StatePayload extends LinkPayload {
  /** PKCE verifier, sealed (the state row must not hold it in clear). */
  verifier: string | null;
}

interface TokenFailure {
  definitive: boolean;
  description: string;
}

/** Reads what simple-oauth2 (Boom errors from @hapi/wreck) says about a failed token request. */
function tokenFailure(error: unknown): TokenFailure {
  const boom = error as { isBoom?: boolean; output?: { statusCode?: number }; data?: { payload?: unknown } };
  if (boom.isBoom && boom.output?.statusCode !== undefined) {
    const status = boom.output.statusCode;
    const payload = boom.data?.payload;
    const body =
      typeof payload === 'object' && payload !== null && !Buffer.isBuffer(payload)
        ? (payload as Record<string, unknown>)
        : {};
    const code = typeof body.error === 'string' ? body.error : undefined;
    const detail = typeof body.error_description === 'string' ? `: ${body.error_description}` : '';
    const definitive =
      (code !== undefined && DEFINITIVE_ERRORS.has(code)) || status === 400 || status === 401;
    return { definitive, description: `HTTP ${status}${code ? ` ${code}` : ''}${detail}` };
  }
  return { definitive: false, description: (error as Error).message };
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * OAuth2 connections end to end: the consent link, the callback (code exchange with simple-oauth2,
 * scope check, account name, sealed storage), token refresh (single-flight per connection,
 * rotation honoured with a compare-and-set, transient failures retried, definitive ones moving the
 * connection to re-approval needed), and revocation on disconnect.
 */
export class OAuthFlows {
  private readonly inflight = new Map<string, Promise<ProviderAccess>>();

  constructor(private readonly deps: OAuthFlowsDeps) {}

  private get redirectUri(): string {
    return `${this.deps.config.baseUrl}/oauth/callback`;
  }

  private client(provider: ProviderEntry, app: ResolvedApp): AuthorizationCode {
    const auth = provider.spec.auth;
    if (auth.kind !== 'oauth2') throw new Error(`${provider.id} is not an OAuth2 provider`);
    const endpoints = oauthEndpoints(provider, this.deps.config);
    const token = new URL(endpoints.tokenUrl);
    const authorize = new URL(endpoints.authorizationUrl);
    return new AuthorizationCode({
      client: { id: app.clientId, secret: app.clientSecret },
      auth: {
        tokenHost: token.origin,
        tokenPath: token.pathname + token.search,
        authorizeHost: authorize.origin,
        authorizePath: authorize.pathname,
      },
      options: {
        authorizationMethod: auth.token_request?.auth_method === 'client_secret_post' ? 'body' : 'header',
        bodyFormat: auth.token_request?.body_format === 'json' ? 'json' : 'form',
        scopeSeparator: auth.scopes?.separator ?? ' ',
      },
      http: { timeout: TOKEN_TIMEOUT_MS },
    });
  }

  /** The scopes a connection asks for (the manifest's defaults). */
  scopesOf(provider: ProviderEntry): string[] {
    const auth = provider.spec.auth;
    return auth.kind === 'oauth2' ? (auth.scopes?.default ?? []) : [];
  }

  /** A one-time consent link for this scope, bound to the app that will mint its tokens. */
  async startLink(
    scope: Scope,
    provider: ProviderEntry,
    fields: Record<string, string> = {},
  ): Promise<{ url: string } | { error: string }> {
    const app = await this.deps.apps.forScope(provider, scope);
    if (!app) {
      return {
        error: `${provider.displayName} is not set up on this gateway yet: the operator must configure its OAuth app (TOOLGATE_PROVIDER_${provider.id.replace(/-/g, '_').toUpperCase()}_CLIENT_ID and _CLIENT_SECRET, or \`toolgate oauth-app set ${provider.id}\`).`,
      };
    }
    const { token } = await this.deps.connections.createLink(
      scope,
      provider.id,
      'oauth',
      JSON.stringify({ app: app.id, fields } satisfies LinkPayload),
    );
    return { url: `${this.deps.config.baseUrl}/oauth/start/${token}` };
  }

  /** What the start page shows for a link, without using it up. */
  async startInfo(token: string): Promise<StartInfo | undefined> {
    const link = await this.deps.connections.peekLink(token);
    const provider =
      link?.purpose === 'oauth' ? this.deps.catalog.current.providers.get(link.provider) : undefined;
    if (!link || !provider) return undefined;
    const app = await this.deps.apps.byId(
      (JSON.parse(link.payload ?? '{}') as { app: string }).app,
      provider.id,
    );
    return {
      provider,
      authorizationOrigin: new URL(oauthEndpoints(provider, this.deps.config).authorizationUrl).origin,
      scope: link.scope,
      scopes: this.scopesOf(provider),
      branding: app?.branding ?? null,
    };
  }

  /** Uses the link: records a fresh `state` (and PKCE verifier) and returns the provider's consent URL. */
  async begin(token: string): Promise<string | undefined> {
    const link = await this.deps.connections.consumeLink(token);
    const provider =
      link?.purpose === 'oauth' ? this.deps.catalog.current.providers.get(link.provider) : undefined;
    if (!link || !provider || provider.spec.auth.kind !== 'oauth2') return undefined;
    const auth = provider.spec.auth;
    const given = JSON.parse(link.payload ?? '{}') as LinkPayload;
    const app = await this.deps.apps.byId(given.app, provider.id);
    if (!app) return undefined;
    const verifier = auth.pkce === true ? randomBytes(32).toString('base64url') : null;
    const payload: StatePayload = {
      app: app.id,
      ...(given.fields ? { fields: given.fields } : {}),
      verifier: verifier && this.deps.keyring.seal(Buffer.from(verifier), STATE_PURPOSE, provider.id, app.id),
    };
    const { token: state } = await this.deps.connections.createLink(
      link.scope,
      provider.id,
      'oauth_state',
      JSON.stringify(payload),
    );
    const params: Record<string, string> = {
      redirect_uri: this.redirectUri,
      state,
      ...(auth.authorization_params ?? {}),
    };
    if (verifier) {
      params.code_challenge = createHash('sha256').update(verifier).digest('base64url');
      params.code_challenge_method = 'S256';
    }
    const scopes = this.scopesOf(provider);
    return this.client(provider, app).authorizeURL({
      ...params,
      ...(scopes.length > 0 ? { scope: scopes } : {}),
    });
  }

  /**
   * The redirect back from the provider. Every way it can go wrong ends on a clear page and stores
   * nothing; on success the connection is stored (keeping the fields of an earlier connection).
   */
  async callback(query: Record<string, unknown>): Promise<CallbackOutcome> {
    const state = typeof query.state === 'string' ? query.state : '';
    const link = state === '' ? undefined : await this.deps.connections.consumeLink(state);
    const provider =
      link?.purpose === 'oauth_state' ? this.deps.catalog.current.providers.get(link.provider) : undefined;
    if (!link || !provider) {
      return {
        ok: false,
        status: 400,
        title: 'This sign-in cannot be completed',
        message:
          'The answer from the provider does not match a sign-in in progress: it was already used, it expired, or it was not started here. Nothing was stored. Ask your agent for a new link and start again.',
        branding: null,
      };
    }
    const payload = JSON.parse(link.payload ?? '{}') as StatePayload;
    const app = await this.deps.apps.byId(payload.app, provider.id);
    const branding = app?.branding ?? null;
    const fail = (status: number, title: string, message: string): CallbackOutcome => ({
      ok: false,
      status,
      title,
      message,
      branding,
    });
    if (typeof query.error === 'string') {
      return query.error === 'access_denied'
        ? fail(
            403,
            'Access was not granted',
            `You declined to give access to ${provider.displayName}. Nothing was stored. To connect it after all, ask your agent for a new link.`,
          )
        : fail(
            400,
            `${provider.displayName} did not grant access`,
            `${provider.displayName} answered: ${query.error}${typeof query.error_description === 'string' ? ` (${query.error_description})` : ''}. Nothing was stored.`,
          );
    }
    if (typeof query.code !== 'string' || query.code === '' || !app) {
      return fail(
        400,
        'This sign-in cannot be completed',
        `The answer from ${provider.displayName} carried no authorization code. Nothing was stored.`,
      );
    }
    const params: Record<string, unknown> = { code: query.code, redirect_uri: this.redirectUri };
    if (payload.verifier) {
      params.code_verifier = this.deps.keyring
        .open(payload.verifier, STATE_PURPOSE, provider.id, app.id)
        .toString('utf8');
    }
    const auth = provider.spec.auth;
    if (auth.kind === 'oauth2') Object.assign(params, auth.token_params ?? {});
    let token: AccessToken;
    try {
      token = await this.client(provider, app).getToken(params as never);
    } catch (error) {
      const failure = tokenFailure(error);
      this.deps.log.warn(
        { code: 'TG_OAUTH_EXCHANGE_FAILED', provider: provider.id, reason: failure.description },
        'code exchange failed',
      );
      return fail(
        502,
        `${provider.displayName} did not complete the sign-in`,
        `Exchanging the authorization code failed (${failure.description}). Nothing was stored. Ask your agent for a new link and try again.`,
      );
    }
    const values = token.token as Record<string, unknown>;
    const missing = this.missingScopes(provider, values.scope);
    if (missing.length > 0) {
      return fail(
        403,
        'Some permissions were not granted',
        `${provider.displayName} granted fewer permissions than the tools need; missing: ${missing.join(', ')}. Nothing was stored. Ask your agent for a new link and approve every requested permission.`,
      );
    }
    const credentials = this.tokenCredentials(values, undefined);
    if (!credentials)
      return fail(
        502,
        `${provider.displayName} did not complete the sign-in`,
        'The token response carried no access token. Nothing was stored.',
      );
    // Fields: a reconnect keeps the connection's settings; new ones come from the link and from
    // what the provider tells (a plugin's discoverFields), and must pass the manifest's checks.
    const existing = await this.deps.store.connections.get(link.scope, provider.id);
    const plugin = provider.plugin !== undefined ? this.deps.plugins.get(provider.plugin) : undefined;
    let fields: Record<string, string> = { ...(existing?.fields ?? {}), ...(payload.fields ?? {}) };
    if (plugin?.discoverFields) {
      try {
        fields = {
          ...fields,
          ...(await plugin.discoverFields(
            this.deps.client.pluginContext(provider, plugin, { credentials, fields }),
          )),
        };
      } catch (error) {
        return fail(
          502,
          `${provider.displayName} did not complete the sign-in`,
          `${(error as Error).message} Nothing was stored.`,
        );
      }
    }
    const checked = checkFields(provider, fields);
    if (!checked.ok)
      return fail(
        400,
        `${provider.displayName} needs more settings`,
        `${checked.message} Nothing was stored.`,
      );
    const access: ProviderAccess = { credentials, fields: checked.value };
    const account = await this.deps.connections.accountOf(provider, access);
    await this.deps.connections.store(link.scope, provider.id, access, account, {
      oauthApp: app.id,
      expiresAt: this.expiryOf(values),
    });
    return { ok: true, provider, account, branding };
  }

  /** The scopes the manifest requires that the token response says were not granted. */
  private missingScopes(provider: ProviderEntry, granted: unknown): string[] {
    if (typeof granted !== 'string') return [];
    const auth = provider.spec.auth;
    const separator = auth.kind === 'oauth2' ? (auth.scopes?.separator ?? ' ') : ' ';
    const have = new Set(
      granted
        .split(/[\s,]+/)
        .concat(granted.split(separator))
        .filter(Boolean),
    );
    return this.scopesOf(provider).filter((scope) => !have.has(scope));
  }

  private tokenCredentials(
    values: Record<string, unknown>,
    previousRefresh: string | undefined,
  ): Record<string, string> | undefined {
    if (typeof values.access_token !== 'string' || values.access_token === '') return undefined;
    const refresh =
      typeof values.refresh_token === 'string' && values.refresh_token !== ''
        ? values.refresh_token
        : previousRefresh;
    return refresh === undefined
      ? { access_token: values.access_token }
      : { access_token: values.access_token, refresh_token: refresh };
  }

  private expiryOf(values: Record<string, unknown>): string | null {
    const seconds = Number(values.expires_in);
    return Number.isFinite(seconds) && seconds > 0
      ? new Date(Date.now() + seconds * 1000).toISOString()
      : null;
  }

  /**
   * The credentials to call with: refreshed first when the token expires within a minute. The
   * returned access can renew itself once, for a provider's 401 on a token that looked valid.
   */
  async fresh(
    scope: Scope,
    provider: ProviderEntry,
    record: ConnectionRecord,
    access: ProviderAccess,
  ): Promise<ProviderAccess> {
    const expiring = record.expiresAt !== null && Date.parse(record.expiresAt) - Date.now() < CALL_MARGIN_MS;
    const current = expiring ? await this.refresh(scope, provider, record.credentials) : access;
    // A 401 on a token that looked valid: refresh once, unless someone else did since this call began.
    return { ...current, renew: () => this.refresh(scope, provider, record.credentials) };
  }

  /**
   * Refreshes a connection's token. Single-flight: concurrent callers for one connection share one
   * token request. `seen` is the sealed credential the caller holds: if the stored one differs,
   * another call (or process) refreshed already and its result is used.
   */
  refresh(scope: Scope, provider: ProviderEntry, seen: string | undefined): Promise<ProviderAccess> {
    const key = `${scopeKey(scope)}\u0000${provider.id}`;
    let running = this.inflight.get(key);
    if (!running) {
      running = this.refreshNow(scope, provider, seen).finally(() => this.inflight.delete(key));
      this.inflight.set(key, running);
    }
    return running;
  }

  private async refreshNow(
    scope: Scope,
    provider: ProviderEntry,
    seen: string | undefined,
  ): Promise<ProviderAccess> {
    const found = await this.deps.connections.access(scope, provider.id);
    if (!found) throw new ReapprovalNeededError(`${provider.displayName} is not connected.`);
    const { record, access } = found;
    if (record.state === 'reapproval_needed')
      throw new ReapprovalNeededError(`The ${provider.displayName} connection must be re-approved.`);
    if (seen !== undefined && record.credentials !== seen && !this.expiresSoon(record)) return access;
    const refreshToken = access.credentials.refresh_token;
    const app =
      record.oauthApp !== null ? await this.deps.apps.byId(record.oauthApp, provider.id) : undefined;
    if (!refreshToken || !app) {
      await this.markReapproval(
        scope,
        provider,
        refreshToken ? 'the OAuth app that minted the token is gone' : 'no refresh token',
      );
      throw new ReapprovalNeededError(`The ${provider.displayName} connection must be re-approved.`);
    }
    let values: Record<string, unknown>;
    try {
      values = await this.refreshWithRetry(provider, app, refreshToken);
    } catch (error) {
      const failure = tokenFailure(error);
      if (!failure.definitive) {
        this.deps.log.warn(
          { code: 'TG_OAUTH_REFRESH_TEMPORARY', provider: provider.id, reason: failure.description },
          'token refresh failed for now',
        );
        throw new TemporaryRefreshError(failure.description);
      }
      // Another process may have refreshed (and rotated) the token meanwhile: read before concluding.
      const again = await this.deps.connections.access(scope, provider.id);
      if (again && again.record.credentials !== record.credentials && again.record.state === 'connected')
        return again.access;
      await this.markReapproval(scope, provider, failure.description);
      throw new ReapprovalNeededError(`The ${provider.displayName} connection must be re-approved.`);
    }
    const credentials = this.tokenCredentials(values, refreshToken);
    if (!credentials) throw new TemporaryRefreshError('the token response carried no access token');
    const next: ProviderAccess = { credentials, fields: record.fields };
    // Compare-and-set: the rotated refresh token is stored before anyone can use the old one again.
    const stored = await this.deps.connections.swapCredentials(
      scope,
      provider.id,
      record,
      credentials,
      this.expiryOf(values),
    );
    if (!stored) {
      const winner = await this.deps.connections.access(scope, provider.id);
      if (winner) return winner.access;
    }
    return next;
  }

  private expiresSoon(record: ConnectionRecord): boolean {
    return record.expiresAt !== null && Date.parse(record.expiresAt) - Date.now() < CALL_MARGIN_MS;
  }

  private async refreshWithRetry(
    provider: ProviderEntry,
    app: ResolvedApp,
    refreshToken: string,
  ): Promise<Record<string, unknown>> {
    const client = this.client(provider, app);
    const auth = provider.spec.auth;
    const extra = auth.kind === 'oauth2' ? (auth.token_params ?? {}) : {};
    for (let attempt = 0; ; attempt++) {
      try {
        const refreshed = await client.createToken({ refresh_token: refreshToken }).refresh(extra);
        return refreshed.token;
      } catch (error) {
        const delay = RETRY_DELAYS_MS[attempt];
        if (tokenFailure(error).definitive || delay === undefined) throw error;
        await wait(delay);
      }
    }
  }

  /** Moves a connection to re-approval needed, and tells the operator (log, events webhook). */
  private async markReapproval(scope: Scope, provider: ProviderEntry, reason: string): Promise<void> {
    if (!(await this.deps.store.connections.setState(scope, provider.id, 'reapproval_needed'))) return;
    await this.deps.store.connections.addEvent(scope, provider.id, 'reapproval_needed', reason);
    this.deps.log.warn(
      {
        code: 'TG_CONNECTION_REAPPROVAL_NEEDED',
        provider: provider.id,
        client: scope.clientId,
        org_id: scope.orgId,
        user_id: scope.userId,
        reason,
      },
      'connection needs re-approval',
    );
    this.deps.emitEvent({
      type: 'connection.reapproval_needed',
      provider: provider.id,
      client_id: scope.clientId,
      org_id: scope.orgId,
      user_id: scope.userId,
      reason,
      at: new Date().toISOString(),
    });
  }

  /** Revokes a connection's token at the provider, when it has a revocation URL (best effort). */
  async revoke(provider: ProviderEntry, record: ConnectionRecord, access: ProviderAccess): Promise<void> {
    const endpoints = oauthEndpoints(provider, this.deps.config);
    if (!endpoints.revocationUrl || record.oauthApp === null) return;
    const app = await this.deps.apps.byId(record.oauthApp, provider.id);
    if (!app) return;
    const revocation = new URL(endpoints.revocationUrl);
    const token = access.credentials.refresh_token ?? access.credentials.access_token;
    if (!token) return;
    const hint = access.credentials.refresh_token ? 'refresh_token' : 'access_token';
    try {
      const client = new AuthorizationCode({
        client: { id: app.clientId, secret: app.clientSecret },
        auth: { tokenHost: revocation.origin, revokePath: revocation.pathname + revocation.search },
        options: {
          authorizationMethod:
            provider.spec.auth.kind === 'oauth2' &&
            provider.spec.auth.token_request?.auth_method === 'client_secret_post'
              ? 'body'
              : 'header',
        },
        http: { timeout: TOKEN_TIMEOUT_MS, json: 'force' },
      });
      await client.createToken({ [hint]: token }).revoke(hint);
    } catch (error) {
      this.deps.log.warn(
        { code: 'TG_OAUTH_REVOKE_FAILED', provider: provider.id, reason: tokenFailure(error).description },
        'token revocation failed',
      );
    }
  }
}
