import { createHash, randomBytes } from 'node:crypto';
import type { AccessToken } from 'simple-oauth2';
import type { ProviderEntry } from '../../catalog/types.js';
import type { Scope } from '../../domain.js';
import type { Branding } from '../../store/types.js';
import type { ProviderAccess } from '../../upstream/provider-client.js';
import { oauthEndpoints, type ResolvedApp } from '../oauth-apps.js';
import { checkFields } from '../validate.js';
import {
  authorizationClient,
  expiryOf,
  redirectUri,
  resourceParams,
  tokenCredentials,
  tokenFailure,
  type OAuthDeps,
} from './client.js';
import { discoversEndpoints, type UpstreamClients } from './registration.js';

const STATE_PURPOSE = 'toolgate/oauth-state';

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

/** What a consent link carries: the app that will mint the tokens, and fields the user gave. */
interface LinkPayload {
  app: string;
  fields?: Record<string, string>;
}

interface StatePayload extends LinkPayload {
  /** PKCE verifier, sealed (the state row must not hold it in clear). */
  verifier: string | null;
}

/**
 * Consent: the one-time link, the start page's facts, the redirect to the provider (state, PKCE),
 * and the callback (code exchange, scope check, fields, account name, sealed storage).
 */
export class OAuthConsent {
  constructor(
    private readonly deps: OAuthDeps,
    private readonly upstream: UpstreamClients,
  ) {}

  /** The scopes a connection asks for (the manifest's defaults). */
  scopesOf(provider: ProviderEntry): string[] {
    const auth = provider.spec.auth;
    return auth.kind === 'oauth2' ? (auth.scopes?.default ?? []) : [];
  }

  /** The scopes an app asks for: the manifest's, else those its upstream MCP server named. */
  private scopesFor(provider: ProviderEntry, app: ResolvedApp | undefined): string[] {
    const scopes = this.scopesOf(provider);
    return scopes.length > 0 ? scopes : (app?.server?.scopes ?? []);
  }

  /** A one-time consent link for this scope, bound to the app that will mint its tokens. */
  async startLink(
    scope: Scope,
    provider: ProviderEntry,
    fields: Record<string, string> = {},
  ): Promise<{ url: string } | { error: string }> {
    // An upstream MCP server's provider: discovery picks (or registers) the client (issue 17).
    const app = discoversEndpoints(provider)
      ? await this.upstream.forScope(provider, scope)
      : await this.deps.apps.forScope(provider, scope);
    if (app && 'error' in app) return app;
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
      authorizationOrigin: new URL(
        (app?.server ?? oauthEndpoints(provider, this.deps.config)).authorizationUrl,
      ).origin,
      scope: link.scope,
      scopes: this.scopesFor(provider, app),
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
    // MCP authorization requires PKCE (S256); discovery refused a server without it.
    const verifier = auth.pkce === true || app.server ? randomBytes(32).toString('base64url') : null;
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
      redirect_uri: redirectUri(this.deps.config),
      state,
      ...(auth.authorization_params ?? {}),
      ...resourceParams(app),
    };
    if (verifier) {
      params.code_challenge = createHash('sha256').update(verifier).digest('base64url');
      params.code_challenge_method = 'S256';
    }
    const scopes = this.scopesFor(provider, app);
    return authorizationClient(provider, app, this.deps).authorizeURL({
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
    const params: Record<string, unknown> = { code: query.code, redirect_uri: redirectUri(this.deps.config) };
    if (payload.verifier) {
      params.code_verifier = this.deps.keyring
        .open(payload.verifier, STATE_PURPOSE, provider.id, app.id)
        .toString('utf8');
    }
    const auth = provider.spec.auth;
    if (auth.kind === 'oauth2') Object.assign(params, auth.token_params ?? {}, resourceParams(app));
    let token: AccessToken;
    try {
      token = await authorizationClient(provider, app, this.deps).getToken(params as never);
    } catch (error) {
      const failure = tokenFailure(error);
      // A registered client the authorization server no longer knows: the next link registers anew.
      if (failure.code === 'invalid_client') await this.deps.apps.forget(app);
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
    const credentials = tokenCredentials(values, undefined);
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
      expiresAt: expiryOf(values),
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
}
