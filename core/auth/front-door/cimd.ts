import { errors, type AdapterPayload } from 'oidc-provider';
import { OutboundError, type OutboundClient } from '../../upstream/outbound.js';

/** A Client ID Metadata Document larger than this is refused (the draft suggests about 5 KB). */
export const CIMD_MAX_BYTES = 64 * 1024;
const CIMD_TIMEOUT_MS = 5_000;
/** Cache bounds: per Cache-Control max-age within these, 5 minutes when the document says nothing. */
const MIN_CACHE_S = 60;
const DEFAULT_CACHE_S = 300;
const MAX_CACHE_S = 24 * 3600;
const CACHE_ENTRIES = 1_000;

const GRANT_TYPES = new Set(['authorization_code', 'refresh_token']);

function refuse(url: string, why: string): never {
  throw new errors.InvalidClient(`The client's metadata document (${url}) ${why}`);
}

/** The document's lifetime in our cache, from its Cache-Control (0: not kept). */
function cacheSeconds(header: string | string[] | undefined): number {
  const value = Array.isArray(header) ? header.join(',') : (header ?? '');
  if (/\b(no-store|no-cache)\b/i.test(value)) return 0;
  const maxAge = /\bmax-age=(\d+)/i.exec(value);
  if (!maxAge) return DEFAULT_CACHE_S;
  return Math.min(MAX_CACHE_S, Math.max(MIN_CACHE_S, Number(maxAge[1])));
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v): v is string => typeof v === 'string') ? value : undefined;
}

/**
 * Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, the MCP
 * authorization spec's preferred registration): a client_id that is an https URL names a JSON
 * document describing the client. It is fetched through the SSRF-safe outbound client, bounded in
 * size and time, kept as long as its Cache-Control says (within bounds), and must name itself:
 * `client_id` equal to the URL. Such a client has no secret (token_endpoint_auth_method none, PKCE).
 */
export class ClientMetadataDocuments {
  private readonly cache = new Map<string, { payload: AdapterPayload; until: number }>();

  constructor(private readonly outbound: OutboundClient) {}

  async find(url: string): Promise<AdapterPayload> {
    const cached = this.cache.get(url);
    if (cached && cached.until > Date.now()) return cached.payload;
    this.cache.delete(url);
    const target = this.checkUrl(url);
    let response;
    try {
      response = await this.outbound.send({
        method: 'GET',
        url: target,
        headers: { accept: 'application/json' },
        timeoutMs: CIMD_TIMEOUT_MS,
      });
    } catch (error) {
      if (error instanceof OutboundError) refuse(url, `could not be fetched: ${error.message}`);
      throw error;
    }
    if (response.status !== 200) refuse(url, `answered HTTP ${response.status}, not 200`);
    if (response.truncated || response.body.length > CIMD_MAX_BYTES)
      refuse(url, `is larger than ${CIMD_MAX_BYTES / 1024} KB`);
    let document: Record<string, unknown>;
    try {
      document = JSON.parse(response.body.toString('utf8')) as Record<string, unknown>;
    } catch {
      refuse(url, 'is not JSON');
    }
    const payload = this.metadata(url, document);
    const seconds = cacheSeconds(response.headers['cache-control']);
    if (seconds > 0) {
      if (this.cache.size >= CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(url, { payload, until: Date.now() + seconds * 1_000 });
    }
    return payload;
  }

  private checkUrl(url: string): string {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      refuse(url, 'is not a valid URL');
    }
    if (parsed.protocol !== 'https:') refuse(url, 'must be an https URL');
    if (parsed.pathname === '/' || parsed.hash || parsed.username || parsed.password)
      refuse(url, 'must be an https URL with a path, and no fragment or credentials');
    return parsed.href;
  }

  private metadata(url: string, document: Record<string, unknown>): AdapterPayload {
    if (typeof document !== 'object' || document === null || Array.isArray(document))
      refuse(url, 'is not a JSON object');
    if (document.client_id !== url) refuse(url, 'names another client_id than its own URL');
    const redirects = stringList(document.redirect_uris);
    if (!redirects || redirects.length === 0) refuse(url, 'lists no redirect_uris');
    if ('client_secret' in document) refuse(url, 'carries a client_secret, which a public document must not');
    const method = document.token_endpoint_auth_method ?? 'none';
    if (method !== 'none')
      refuse(
        url,
        `asks for token_endpoint_auth_method ${JSON.stringify(method)}; only none (with PKCE) is supported`,
      );
    const grants = stringList(document.grant_types) ?? ['authorization_code'];
    const text = (key: string): Record<string, string> =>
      typeof document[key] === 'string' ? { [key]: document[key] } : {};
    return {
      client_id: url,
      redirect_uris: redirects,
      grant_types: grants.filter((g) => GRANT_TYPES.has(g)),
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      ...text('client_name'),
      ...text('client_uri'),
      ...text('logo_uri'),
    };
  }
}
