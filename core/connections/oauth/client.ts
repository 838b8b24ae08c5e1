import type { FastifyBaseLogger } from 'fastify';
import { AuthorizationCode } from 'simple-oauth2';
import type { ProviderEntry } from '../../catalog/types.js';
import type { Config } from '../../config.js';
import type { Lock } from '../../coordination/lock.js';
import type { Keyring } from '../../keyring.js';
import type { PluginRegistry } from '../../catalog/plugins/registry.js';
import type { Store } from '../../store/types.js';
import { OutboundBlockedError, type OutboundClient } from '../../upstream/outbound.js';
import type { ProviderClient } from '../../upstream/provider-client.js';
import { oauthEndpoints, type OAuthApps, type ResolvedApp } from '../oauth-apps.js';
import type { ConnectionService } from '../service.js';
import type { Telemetry } from '../../telemetry/index.js';

/**
 * Talking to a provider's authorization server (simple-oauth2): the client of an app, how a failed
 * token request is read (definitive or temporary), and what a token response holds.
 */

/** A refresh failed for good (invalid_grant, revoked, app gone): the user must approve again. */
export class ReapprovalNeededError extends Error {
  override name = 'ReapprovalNeededError';
}

/** A refresh failed for now (network, 5xx, timeout) after retries: the caller may try again later. */
export class TemporaryRefreshError extends Error {
  override name = 'TemporaryRefreshError';
}

/** What consent and the token lifecycle are built on. */
export interface OAuthDeps {
  store: Store;
  /** One refresh per connection across processes (see tokens.ts). */
  lock: Lock;
  keyring: Keyring;
  apps: OAuthApps;
  connections: ConnectionService;
  client: ProviderClient;
  /** Discovery, registration, and token requests to endpoints an upstream's metadata named. */
  outbound: OutboundClient;
  plugins: PluginRegistry;
  catalog: { readonly current: { providers: ReadonlyMap<string, ProviderEntry> } };
  config: Config;
  log: FastifyBaseLogger;
  /** Delivers an operator event (TOOLGATE_EVENTS_WEBHOOK_URL); never given secrets. */
  emitEvent: (event: Record<string, unknown>) => void;
  /** Counts token refreshes by outcome. */
  telemetry: Telemetry;
}

export const TOKEN_TIMEOUT_MS = 15_000;
const DEFINITIVE_ERRORS = new Set([
  'invalid_grant',
  'invalid_client',
  'unauthorized_client',
  'unsupported_grant_type',
  'access_denied',
]);

export interface TokenFailure {
  definitive: boolean;
  /** The OAuth error code the server answered (invalid_grant, invalid_client, ...), when it did. */
  code?: string;
  description: string;
}

/** Reads what simple-oauth2 (Boom errors from @hapi/wreck) says about a failed token request. */
export function tokenFailure(error: unknown): TokenFailure {
  // A discovered endpoint the outbound guard refuses stays refused: approving again rediscovers.
  if (error instanceof OutboundBlockedError) return { definitive: true, description: error.message };
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
    return {
      definitive,
      ...(code !== undefined ? { code } : {}),
      description: `HTTP ${status}${code ? ` ${code}` : ''}${detail}`,
    };
  }
  return { definitive: false, description: (error as Error).message };
}

/** Where providers send the user back after consent. */
export function redirectUri(config: Config): string {
  return `${config.baseUrl}/oauth/callback`;
}

export function authorizationClient(
  provider: ProviderEntry,
  app: ResolvedApp,
  deps: Pick<OAuthDeps, 'config' | 'outbound'>,
): AuthorizationCode {
  const auth = provider.spec.auth;
  if (auth.kind !== 'oauth2') throw new Error(`${provider.id} is not an OAuth2 provider`);
  const endpoints = app.server ?? oauthEndpoints(provider, deps.config);
  const token = new URL(endpoints.tokenUrl);
  const authorize = new URL(endpoints.authorizationUrl);
  return new AuthorizationCode({
    client: clientCredentials(provider, app),
    auth: {
      tokenHost: token.origin,
      tokenPath: token.pathname + token.search,
      authorizeHost: authorize.origin,
      authorizePath: authorize.pathname,
    },
    options: {
      authorizationMethod: tokenAuthMethod(provider, app) === 'client_secret_basic' ? 'header' : 'body',
      bodyFormat: !app.server && auth.token_request?.body_format === 'json' ? 'json' : 'form',
      scopeSeparator: auth.scopes?.separator ?? ' ',
    },
    http: tokenHttp(app, endpoints.tokenUrl, deps),
  });
}

/**
 * simple-oauth2's client settings. A public client (`none`: Toolgate's metadata document, or a
 * registration without a secret) sends only its client_id in the body (RFC 6749 section 3.2.1):
 * simple-oauth2 always writes the secret parameter, so it is named client_id and carries the id.
 */
export function clientCredentials(
  provider: ProviderEntry,
  app: ResolvedApp,
): { id: string; secret: string; secretParamName?: string } {
  return tokenAuthMethod(provider, app) === 'none'
    ? { id: app.clientId, secret: app.clientId, secretParamName: 'client_id' }
    : { id: app.clientId, secret: app.clientSecret };
}

/** How an app authenticates at the token and revocation endpoints. */
export function tokenAuthMethod(
  provider: ProviderEntry,
  app: ResolvedApp,
): 'client_secret_basic' | 'client_secret_post' | 'none' {
  if (app.server) return app.server.authMethod;
  const auth = provider.spec.auth;
  return auth.kind === 'oauth2' && auth.token_request?.auth_method === 'client_secret_post'
    ? 'client_secret_post'
    : 'client_secret_basic';
}

/**
 * simple-oauth2's HTTP options for a request to `url`. An endpoint an upstream's metadata named
 * (not the operator's manifest) is reached only through the outbound guard's agent, as every
 * discovered URL is (issue 17); the library follows no redirects.
 */
export function tokenHttp(
  app: ResolvedApp,
  url: string,
  deps: Pick<OAuthDeps, 'outbound'>,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const agent = app.server ? deps.outbound.nodeAgent(url) : undefined;
  return { timeout: TOKEN_TIMEOUT_MS, ...extra, ...(agent ? { agent } : {}) };
}

/** Parameters every authorization and token request of an app carries: RFC 8707's resource for an upstream MCP server. */
export function resourceParams(app: ResolvedApp): Record<string, string> {
  return app.server ? { resource: app.server.resource } : {};
}

/** The credentials a token response carries; a response without a new refresh token keeps the old one. */
export function tokenCredentials(
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

/** The absolute expiry of a token response's access token, when it says. */
export function expiryOf(values: Record<string, unknown>): string | null {
  const seconds = Number(values.expires_in);
  return Number.isFinite(seconds) && seconds > 0 ? new Date(Date.now() + seconds * 1000).toISOString() : null;
}
