/**
 * How Toolgate becomes a client of an upstream MCP server's authorization server (issue 17), once
 * discovery has found it. In this order:
 * 1. the app the operator or an organization set for the provider (`toolgate oauth-app set`,
 *    TOOLGATE_PROVIDER_<ID>_CLIENT_ID): an explicit choice wins, as the MCP authorization
 *    specification orders it (pre-registered client information first);
 * 2. Toolgate's Client ID Metadata Document, when the server fetches them and the base URL is https
 *    (the document must be reachable there);
 * 3. Dynamic Client Registration (RFC 7591), the registered client kept per provider and issuer and
 *    reused, and registered again once the server no longer knows it.
 * The chosen client is stored with the server's endpoints (an UpstreamOAuthServer row), so consent,
 * refresh and revocation use what was discovered when the connection was made.
 */
import type { ProviderEntry } from '../../catalog/types.js';
import type { Config } from '../../config.js';
import type { Scope } from '../../domain.js';
import type { UpstreamOAuthServer } from '../../store/types.js';
import { OutboundError, type OutboundClient } from '../../upstream/outbound.js';
import type { ProviderClient } from '../../upstream/provider-client.js';
import type { OAuthApps, ResolvedApp } from '../oauth-apps.js';
import { redirectUri } from './client.js';
import { DiscoveryError, type DiscoveredServer, type McpDiscovery } from './discovery.js';
import type { FastifyBaseLogger } from 'fastify';

/** Where Toolgate serves its own client metadata document, under its base URL. */
export const CLIENT_DOCUMENT_PATH = '/oauth/upstream-client.json';

const REGISTRATION_TIMEOUT_MS = 15_000;
const REGISTRATION_MAX_BYTES = 64 * 1024;

/** The Client ID Metadata Document Toolgate serves: its client_id is the document's own URL. */
export function clientDocument(config: Config): Record<string, unknown> {
  return {
    client_id: `${config.baseUrl}${CLIENT_DOCUMENT_PATH}`,
    client_name: 'Toolgate',
    client_uri: config.baseUrl,
    redirect_uris: [redirectUri(config)],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
}

/** Whether a provider's OAuth endpoints come from its upstream MCP server (`auth.discovery: mcp`). */
export function discoversEndpoints(provider: ProviderEntry): boolean {
  return provider.spec.auth.kind === 'oauth2' && provider.spec.auth.discovery === 'mcp';
}

export interface UpstreamClientsDeps {
  apps: OAuthApps;
  discovery: McpDiscovery;
  outbound: OutboundClient;
  /** The upstream MCP server's URL: TOOLGATE_PROVIDER_<ID>_BASE_URL, else the manifest's `mcp.url`. */
  client: ProviderClient;
  config: Config;
  log: FastifyBaseLogger;
}

/** Picks, registers and remembers Toolgate's client of each upstream authorization server. */
export class UpstreamClients {
  /** Registrations under way, by provider and issuer: concurrent connects register once. */
  private readonly registering = new Map<string, Promise<ResolvedApp>>();

  constructor(private readonly deps: UpstreamClientsDeps) {}

  /** The client a new connection of this scope uses, or what the operator must do first. */
  async forScope(provider: ProviderEntry, scope: Scope): Promise<ResolvedApp | { error: string }> {
    const url = this.deps.client.baseUrl(provider, undefined, { credentials: {}, fields: {} });
    let found: DiscoveredServer;
    try {
      found = await this.deps.discovery.discover(provider.id, url);
    } catch (error) {
      if (!(error instanceof DiscoveryError)) throw error;
      this.deps.log.warn(
        { code: 'TG_MCP_AUTH_DISCOVERY_FAILED', provider: provider.id, reason: error.message },
        'MCP authorization discovery failed',
      );
      return {
        error: `${provider.displayName} cannot be connected right now: Toolgate could not find how its MCP server is authorized (${error.message}). Nothing was stored. Tell the operator (report_problem); if the server is fine, try again later.`,
      };
    }
    const auth = provider.spec.auth;
    const server = (
      method: UpstreamOAuthServer['method'],
      authMethod: UpstreamOAuthServer['authMethod'],
      app: string | null = null,
    ): UpstreamOAuthServer => ({
      method,
      issuer: found.issuer,
      authorizationUrl: found.authorizationUrl,
      tokenUrl: found.tokenUrl,
      revocationUrl: found.revocationUrl,
      authMethod,
      resource: found.resource,
      scopes: found.scopes,
      app,
    });
    const own = await this.deps.apps.forScope(provider, scope);
    if (own) {
      const owner = own.orgId !== null ? { clientId: scope.clientId, orgId: own.orgId } : null;
      const method =
        auth.kind === 'oauth2'
          ? (auth.token_request?.auth_method ?? 'client_secret_basic')
          : 'client_secret_basic';
      const bound = await this.deps.apps.upstreamClient(provider.id, owner, server('app', method, own.id), {
        clientId: own.clientId,
        clientSecret: '',
      });
      if (bound) return bound;
    }
    if (found.metadataDocuments && this.deps.config.baseUrl.startsWith('https://')) {
      const document = clientDocument(this.deps.config);
      const app = await this.deps.apps.upstreamClient(provider.id, null, server('cimd', 'none'), {
        clientId: String(document.client_id),
        clientSecret: '',
      });
      if (app) return app;
    }
    if (found.registrationUrl !== null) {
      const key = `${provider.id}\u0000${found.issuer}`;
      let running = this.registering.get(key);
      if (!running) {
        running = this.registered(provider, found, found.registrationUrl, server).finally(() =>
          this.registering.delete(key),
        );
        this.registering.set(key, running);
      }
      try {
        return await running;
      } catch (error) {
        if (!(error instanceof DiscoveryError)) throw error;
        this.deps.log.warn(
          { code: 'TG_MCP_AUTH_REGISTRATION_FAILED', provider: provider.id, reason: error.message },
          'dynamic client registration failed',
        );
        return {
          error: `${provider.displayName} cannot be connected right now: registering Toolgate with its authorization server failed (${error.message}). Nothing was stored. Tell the operator (report_problem); if it persists, the operator can register an OAuth app by hand (${this.setting(provider)}).`,
        };
      }
    }
    return {
      error: `${provider.displayName} is not set up on this gateway yet: its authorization server (${found.issuer}) offers no dynamic client registration${found.metadataDocuments ? ', and accepts client metadata documents only from an https Toolgate (TOOLGATE_BASE_URL)' : ''}. The operator must register an OAuth app there with the redirect URI ${redirectUri(this.deps.config)} and set it (${this.setting(provider)}).`,
    };
  }

  /** The registered client of this provider and issuer, reused, else registered now (RFC 7591). */
  private async registered(
    provider: ProviderEntry,
    found: DiscoveredServer,
    registrationUrl: string,
    server: (method: 'dcr', authMethod: UpstreamOAuthServer['authMethod']) => UpstreamOAuthServer,
  ): Promise<ResolvedApp> {
    const methods = found.tokenAuthMethods;
    const wanted = (['client_secret_basic', 'client_secret_post', 'none'] as const).find((m) =>
      methods.includes(m),
    );
    const reused = await this.deps.apps.upstreamClient(
      provider.id,
      null,
      server('dcr', wanted ?? 'client_secret_basic'),
    );
    if (reused) return reused;
    const document = clientDocument(this.deps.config);
    const body = {
      client_name: document.client_name,
      client_uri: document.client_uri,
      redirect_uris: document.redirect_uris,
      grant_types: document.grant_types,
      response_types: document.response_types,
      token_endpoint_auth_method: wanted ?? 'client_secret_basic',
    };
    let response;
    try {
      response = await this.deps.outbound.send({
        method: 'POST',
        url: registrationUrl,
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
        timeoutMs: REGISTRATION_TIMEOUT_MS,
        maxResponseBytes: REGISTRATION_MAX_BYTES,
      });
    } catch (error) {
      if (error instanceof OutboundError) throw new DiscoveryError(error.message, { cause: error });
      throw error;
    }
    let answer: Record<string, unknown> = {};
    try {
      answer = JSON.parse(response.body.toString('utf8')) as Record<string, unknown>;
    } catch {
      // Read below as an answer without client_id.
    }
    if (response.status !== 201 && response.status !== 200) {
      const said =
        typeof answer.error === 'string'
          ? `: ${answer.error}${typeof answer.error_description === 'string' ? ` (${answer.error_description})` : ''}`
          : '';
      throw new DiscoveryError(`${registrationUrl} answered HTTP ${response.status}${said}`);
    }
    if (typeof answer.client_id !== 'string' || answer.client_id === '')
      throw new DiscoveryError(`${registrationUrl} answered without a client_id`);
    const secret = typeof answer.client_secret === 'string' ? answer.client_secret : '';
    const granted = answer.token_endpoint_auth_method;
    const authMethod =
      granted === 'client_secret_basic' || granted === 'client_secret_post' || granted === 'none'
        ? granted
        : secret === ''
          ? 'none'
          : (wanted ?? 'client_secret_basic');
    this.deps.log.info(
      { code: 'TG_MCP_AUTH_REGISTERED', provider: provider.id, issuer: found.issuer },
      'registered with an upstream authorization server',
    );
    const app = await this.deps.apps.upstreamClient(provider.id, null, server('dcr', authMethod), {
      clientId: answer.client_id,
      clientSecret: secret,
    });
    if (!app) throw new DiscoveryError('the registered client could not be stored');
    return app;
  }

  /** What the operator sets for a pre-registered app of this provider. */
  private setting(provider: ProviderEntry): string {
    const name = provider.id.replace(/-/g, '_').toUpperCase();
    return `TOOLGATE_PROVIDER_${name}_CLIENT_ID and _CLIENT_SECRET, or \`toolgate oauth-app set ${provider.id}\``;
  }
}
