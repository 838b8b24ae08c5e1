import type { FastifyRequest } from 'fastify';
import { andThen, attempt, type Awaitable } from '../awaitable.js';
import { ACCESS_TOKEN_PREFIX, type FrontDoor } from '../auth/front-door/index.js';
import { keyFromHeaders, type KeyService } from '../auth/key-service.js';
import { resolveScope } from '../auth/scope.js';
import { GatewayError } from '../errors.js';
import type { ApiKeyRecord } from '../store/types.js';
import { type Caller, type Scope, type ScopeMode, scopeKey, type SurfaceChoice } from '../domain.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the /mcp/ preHandler once the key is verified and the scope resolved. */
    caller?: Caller;
  }
}

export interface AuthenticateDeps {
  keys: KeyService;
  frontDoor: FrontDoor;
  /** Key records by id, for a front-door token's key. */
  keyRecords: { get(id: string): Promise<ApiKeyRecord | undefined> };
}

/**
 * Authenticates a request and resolves its scope. Order matters: a missing or malformed key is
 * refused before any store lookup; identifiers are checked only for a valid key. A front-door access
 * token (issue 14) acts exactly as its key with the scope chosen at sign-in: URL parameters may
 * repeat that scope but never move it.
 */
export function authenticate(request: FastifyRequest, deps: AuthenticateDeps): Awaitable<Caller> {
  return attempt(() => {
    const presented = keyFromHeaders(request.headers);
    const query = request.query as Record<string, unknown>;
    const asked = { user_id: query.user_id, org_id: query.org_id };
    const surface = surfaceChoice(query.tools);
    if (presented?.startsWith(ACCESS_TOKEN_PREFIX)) return viaFrontDoor(presented, asked, surface, deps);
    // A known key's record is at hand on nearly every request: the caller is too (core/awaitable.ts).
    return andThen(deps.keys.verify(presented), (record) => {
      const { scope, mode } = resolveScope(record, asked);
      return callerOf(record, scope, mode, surface);
    });
  });
}

async function viaFrontDoor(
  token: string,
  asked: { user_id: unknown; org_id: unknown },
  surface: SurfaceChoice,
  deps: AuthenticateDeps,
): Promise<Caller> {
  const { key, scope, mode, grantId } = await deps.frontDoor.verify(token, deps.keyRecords);
  if (
    (asked.user_id !== undefined || asked.org_id !== undefined) &&
    scopeKey(resolveScope(key, asked).scope) !== scopeKey(scope)
  ) {
    throw new GatewayError('TG_ERR_TOKEN_SCOPE_MISMATCH');
  }
  return { ...callerOf(key, scope, mode, surface), grantId };
}

function callerOf(key: ApiKeyRecord, scope: Scope, mode: ScopeMode, surface: SurfaceChoice): Caller {
  return {
    keyId: key.id,
    keyType: key.type,
    clientId: key.clientId,
    clientName: key.clientName,
    scope,
    scopeKey: scopeKey(scope),
    mode,
    surface,
  };
}

/**
 * A 401 of `/mcp/` as RFC 9728 and the MCP authorization spec want it: with a challenge naming the
 * protected-resource metadata, so an OAuth client finds the front door; `invalid_token` where a
 * credential was sent. The JSON body stays the catalogue's.
 */
export function withChallenge(error: unknown, request: FastifyRequest, resourceMetadataUrl: string): unknown {
  if (!(error instanceof GatewayError) || error.status !== 401) return error;
  const sent = keyFromHeaders(request.headers) !== undefined;
  const challenge = `Bearer resource_metadata="${resourceMetadataUrl}"${sent ? ', error="invalid_token"' : ''}`;
  return new GatewayError(error.code, error.message, { ...error.headers, 'www-authenticate': challenge });
}

/** The `tools` query parameter (issue 15): absent is `auto`; anything but one known value is refused. */
function surfaceChoice(value: unknown): SurfaceChoice {
  if (value === undefined) return 'auto';
  if (value === 'compact' || value === 'full') return value;
  throw new GatewayError('TG_ERR_TOOLS_MODE_INVALID');
}

const LOOPBACK_HOSTS = ['localhost', '127.0.0.1', '[::1]'];

function hostname(hostHeader: string): string {
  const lower = hostHeader.toLowerCase();
  if (lower.startsWith('[')) return lower.slice(0, lower.indexOf(']') + 1);
  const colon = lower.lastIndexOf(':');
  return colon === -1 ? lower : lower.slice(0, colon);
}

/**
 * DNS-rebinding protection for /mcp/: the Host must be one this gateway serves (loopback names,
 * the base URL's host, TOOLGATE_ALLOWED_HOSTS), and a browser Origin, when sent, must be one of
 * the same hosts. Non-browser clients send no Origin.
 */
export function hostGuard(baseUrl: string, extra: string[]): (request: FastifyRequest) => void {
  const allowed = new Set([...LOOPBACK_HOSTS, hostname(new URL(baseUrl).host), ...extra.map(hostname)]);
  return (request) => {
    const { host, origin } = request.headers;
    if (!host || !allowed.has(hostname(host))) throw new GatewayError('TG_ERR_HOST_NOT_ALLOWED');
    if (origin !== undefined && origin !== 'null') {
      let originHost: string;
      try {
        originHost = hostname(new URL(origin).host);
      } catch {
        throw new GatewayError('TG_ERR_ORIGIN_NOT_ALLOWED');
      }
      if (!allowed.has(originHost)) throw new GatewayError('TG_ERR_ORIGIN_NOT_ALLOWED');
    } else if (origin === 'null') {
      throw new GatewayError('TG_ERR_ORIGIN_NOT_ALLOWED');
    }
  };
}
