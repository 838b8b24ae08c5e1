/**
 * MCP authorization discovery (issue 17): from an upstream MCP server's URL to its authorization
 * server's endpoints, as the MCP authorization specification lays it out. An unauthenticated
 * request answers 401 with `WWW-Authenticate: Bearer resource_metadata=...` (else the RFC 9728
 * well-known URLs are tried), the protected-resource metadata names `authorization_servers`, and
 * the first one's RFC 8414 metadata (else OpenID Connect discovery) names the endpoints. Every URL
 * is fetched through the SSRF-safe outbound client with small size and time limits, and an
 * authorization server without PKCE S256 is refused.
 */
import { OutboundError, type OutboundClient } from '../../upstream/outbound.js';

/** How long a provider's discovery is reused before it is done again. */
const DISCOVERY_TTL_MS = 10 * 60_000;
const METADATA_TIMEOUT_MS = 10_000;
const METADATA_MAX_BYTES = 256 * 1024;

/** What discovery found: the authorization server, and what to ask it for. */
export interface DiscoveredServer {
  issuer: string;
  authorizationUrl: string;
  tokenUrl: string;
  registrationUrl: string | null;
  revocationUrl: string | null;
  /** `token_endpoint_auth_methods_supported` (RFC 8414's default when absent). */
  tokenAuthMethods: string[];
  /** The server fetches Client ID Metadata Documents (`client_id_metadata_document_supported`). */
  metadataDocuments: boolean;
  /** The RFC 8707 resource indicator: the protected resource's identifier. */
  resource: string;
  /** Scopes to ask for: the 401 challenge's `scope`, else the resource's `scopes_supported`. */
  scopes: string[];
}

/** Discovery failed; the message says what was wrong and where, never a token. */
export class DiscoveryError extends Error {
  override name = 'DiscoveryError';
}

type Json = Record<string, unknown>;

/** Discovers and caches, per provider and URL, for DISCOVERY_TTL_MS; a failure is not cached. */
export class McpDiscovery {
  private readonly cache = new Map<string, { until: number; found: Promise<DiscoveredServer> }>();

  constructor(
    private readonly outbound: OutboundClient,
    /** Accept http:// endpoints (TOOLGATE_ALLOW_PRIVATE_NETWORK: tests and trusted networks). */
    private readonly allowHttp: boolean,
  ) {}

  discover(provider: string, resourceUrl: string): Promise<DiscoveredServer> {
    const key = `${provider}\u0000${resourceUrl}`;
    const cached = this.cache.get(key);
    if (cached && cached.until > Date.now()) return cached.found;
    const found = this.run(resourceUrl);
    this.cache.set(key, { until: Date.now() + DISCOVERY_TTL_MS, found });
    found.catch(() => {
      if (this.cache.get(key)?.found === found) this.cache.delete(key);
    });
    return found;
  }

  private async run(resourceUrl: string): Promise<DiscoveredServer> {
    const upstream = new URL(resourceUrl);
    const challenge = await this.challenge(upstream);
    const candidates = challenge.metadataUrl
      ? [challenge.metadataUrl]
      : wellKnown(upstream, 'oauth-protected-resource');
    const { url: metadataUrl, body: resource } = await this.firstJson(
      candidates,
      `the protected-resource metadata of ${upstream.host}`,
    );
    const identifier = stringOf(resource.resource);
    if (identifier === undefined || !covers(identifier, upstream))
      throw new DiscoveryError(
        `the protected-resource metadata at ${metadataUrl} names the resource ${identifier ?? '(none)'}, not ${upstream.href}; it cannot be trusted for this server`,
      );
    const servers = Array.isArray(resource.authorization_servers)
      ? resource.authorization_servers.filter((s): s is string => typeof s === 'string')
      : [];
    const issuer = servers[0];
    if (issuer === undefined)
      throw new DiscoveryError(
        `the protected-resource metadata at ${metadataUrl} names no authorization_servers`,
      );
    const server = await this.authorizationServer(issuer);
    const supported = Array.isArray(resource.scopes_supported)
      ? resource.scopes_supported.filter((s): s is string => typeof s === 'string')
      : [];
    return {
      ...server,
      resource: identifier,
      scopes: challenge.scopes ?? supported,
    };
  }

  /** The upstream's answer to an unauthenticated MCP request: where its metadata is, which scopes it wants. */
  private async challenge(upstream: URL): Promise<{ metadataUrl?: string; scopes?: string[] }> {
    const response = await this.send(upstream.href, `${upstream.host}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'toolgate', version: '1' },
        },
      }),
    });
    if (response.status !== 401) return {};
    const header = response.headers['www-authenticate'];
    const params = bearerParams([header ?? []].flat().join(', '));
    const scopes = params.scope?.split(' ').filter(Boolean);
    return {
      ...(params.resource_metadata !== undefined ? { metadataUrl: params.resource_metadata } : {}),
      ...(scopes && scopes.length > 0 ? { scopes } : {}),
    };
  }

  private async authorizationServer(issuer: string): Promise<Omit<DiscoveredServer, 'resource' | 'scopes'>> {
    let base: URL;
    try {
      base = new URL(issuer);
    } catch {
      throw new DiscoveryError(`the authorization server ${issuer} is not a URL`);
    }
    const path = base.pathname.replace(/\/+$/, '');
    const candidates = [
      `${base.origin}/.well-known/oauth-authorization-server${path}`,
      `${base.origin}/.well-known/openid-configuration${path}`,
      ...(path !== '' ? [`${base.origin}${path}/.well-known/openid-configuration`] : []),
    ];
    const { url, body } = await this.firstJson(
      candidates,
      `the metadata of the authorization server ${issuer}`,
    );
    if (stringOf(body.issuer)?.replace(/\/+$/, '') !== issuer.replace(/\/+$/, ''))
      throw new DiscoveryError(
        `the authorization server metadata at ${url} names the issuer ${stringOf(body.issuer) ?? '(none)'}, not ${issuer}`,
      );
    const methods = stringsOf(body.code_challenge_methods_supported);
    if (!methods.includes('S256'))
      throw new DiscoveryError(
        `the authorization server ${issuer} does not support PKCE with S256 (its code_challenge_methods_supported: ${methods.join(', ') || 'none'}), which MCP authorization requires; Toolgate does not connect without it`,
      );
    const endpoint = (name: string, required: boolean): string | null => {
      const value = stringOf(body[name]);
      if (value === undefined) {
        if (required) throw new DiscoveryError(`the authorization server metadata at ${url} has no ${name}`);
        return null;
      }
      let parsed: URL;
      try {
        parsed = new URL(value);
      } catch {
        throw new DiscoveryError(`the ${name} of ${issuer} is not a URL`);
      }
      if (parsed.protocol !== 'https:' && !(this.allowHttp && parsed.protocol === 'http:'))
        throw new DiscoveryError(`the ${name} of ${issuer} is not an https URL`);
      return parsed.href;
    };
    const authMethods = stringsOf(body.token_endpoint_auth_methods_supported);
    return {
      issuer,
      authorizationUrl: endpoint('authorization_endpoint', true)!,
      tokenUrl: endpoint('token_endpoint', true)!,
      registrationUrl: endpoint('registration_endpoint', false),
      revocationUrl: endpoint('revocation_endpoint', false),
      tokenAuthMethods: authMethods.length > 0 ? authMethods : ['client_secret_basic'],
      metadataDocuments: body.client_id_metadata_document_supported === true,
    };
  }

  /** The first URL that answers 200 with a JSON object (later ones are tried on a 4xx). */
  private async firstJson(urls: string[], what: string): Promise<{ url: string; body: Json }> {
    let last = '';
    for (const url of urls) {
      const response = await this.send(url, what, { method: 'GET', headers: { accept: 'application/json' } });
      if (response.status === 200) {
        if (response.truncated)
          throw new DiscoveryError(`${what} at ${url} is larger than ${METADATA_MAX_BYTES} bytes`);
        let body: unknown;
        try {
          body = JSON.parse(response.body.toString('utf8'));
        } catch {
          throw new DiscoveryError(`${what} at ${url} is not JSON`);
        }
        if (typeof body !== 'object' || body === null || Array.isArray(body))
          throw new DiscoveryError(`${what} at ${url} is not a JSON object`);
        return { url, body: body as Json };
      }
      last = `${url} answered HTTP ${response.status}`;
      if (response.status >= 500) break;
    }
    throw new DiscoveryError(`could not read ${what}: ${last}`);
  }

  private async send(
    url: string,
    what: string,
    request: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string },
  ) {
    try {
      return await this.outbound.send({
        url,
        ...request,
        timeoutMs: METADATA_TIMEOUT_MS,
        maxResponseBytes: METADATA_MAX_BYTES,
      });
    } catch (error) {
      if (error instanceof OutboundError)
        throw new DiscoveryError(`could not read ${what} (${error.message})`, { cause: error });
      throw error;
    }
  }
}

/**
 * RFC 9728 section 3.1: the well-known URL with the resource's path appended, then the origin's own
 * (servers that publish one document for the whole host).
 */
function wellKnown(resource: URL, name: string): string[] {
  const path = resource.pathname.replace(/\/+$/, '');
  return path === ''
    ? [`${resource.origin}/.well-known/${name}`]
    : [`${resource.origin}/.well-known/${name}${path}`, `${resource.origin}/.well-known/${name}`];
}

/**
 * Whether a protected-resource identifier is the upstream's URL or a URL above it on the same
 * origin (a server may name its origin as the resource of every path under it).
 */
function covers(identifier: string, upstream: URL): boolean {
  let resource: URL;
  try {
    resource = new URL(identifier);
  } catch {
    return false;
  }
  if (resource.origin !== upstream.origin) return false;
  const base = resource.pathname.replace(/\/+$/, '');
  const path = upstream.pathname.replace(/\/+$/, '');
  return path === base || path.startsWith(`${base}/`);
}

/** The auth-params of a `Bearer` challenge (RFC 9110 section 11.2), by lower-case name. */
export function bearerParams(header: string): Record<string, string> {
  const start = /(?:^|,)\s*Bearer(?:\s+|$)/i.exec(header);
  if (!start) return {};
  const params: Record<string, string> = {};
  const pattern = /\s*([A-Za-z0-9_-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,"]*))\s*(,|$)/y;
  pattern.lastIndex = start.index + start[0].length;
  for (let match = pattern.exec(header); match; match = pattern.exec(header)) {
    params[match[1]!.toLowerCase()] =
      match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : (match[3] ?? '');
    // A token without `=` after a comma starts the next challenge.
    if (!/^\s*[A-Za-z0-9_-]+\s*=/.test(header.slice(pattern.lastIndex))) break;
  }
  return params;
}

function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function stringsOf(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
