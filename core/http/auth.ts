import type { FastifyRequest } from 'fastify';
import { keyFromHeaders, type KeyService } from '../auth/key-service.js';
import { resolveScope } from '../auth/scope.js';
import { GatewayError } from '../errors.js';
import { type Caller, scopeKey, type SurfaceChoice } from '../domain.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the /mcp/ preHandler once the key is verified and the scope resolved. */
    caller?: Caller;
  }
}

/**
 * Authenticates a request and resolves its scope. Order matters: a missing or malformed key is
 * refused before any store lookup; identifiers are checked only for a valid key.
 */
export async function authenticate(request: FastifyRequest, keys: KeyService): Promise<Caller> {
  const record = await keys.verify(keyFromHeaders(request.headers));
  const query = request.query as Record<string, unknown>;
  const { scope, mode } = resolveScope(record, { user_id: query.user_id, org_id: query.org_id });
  return {
    keyId: record.id,
    keyType: record.type,
    clientId: record.clientId,
    clientName: record.clientName,
    scope,
    scopeKey: scopeKey(scope),
    mode,
    surface: surfaceChoice(query.tools),
  };
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
    const host = request.headers.host;
    if (!host || !allowed.has(hostname(host))) throw new GatewayError('TG_ERR_HOST_NOT_ALLOWED');
    const origin = request.headers.origin;
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
