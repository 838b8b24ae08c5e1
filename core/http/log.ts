import type { FastifyRequest } from 'fastify';

/** Query parameters that may appear in logs; every other value is replaced (allowlist, not denylist). */
const LOGGABLE_QUERY = new Set(['user_id', 'org_id', 'tools', 'sessionId', 'status']);
/** Path prefixes whose next segment is a bearer token (one-time links). */
const TOKEN_PATHS = ['/connect/', '/oauth/start/'];

/** The request URL as it may be logged: one-time tokens and unlisted query values redacted. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  let path = q === -1 ? url : url.slice(0, q);
  for (const prefix of TOKEN_PATHS) {
    if (path.startsWith(prefix)) path = prefix + '[redacted]';
  }
  if (q === -1) return path;
  const params = new URLSearchParams(url.slice(q + 1));
  const kept: string[] = [];
  for (const [name, value] of params) {
    kept.push(
      `${encodeURIComponent(name)}=${LOGGABLE_QUERY.has(name) ? encodeURIComponent(value) : '[redacted]'}`,
    );
  }
  return `${path}?${kept.join('&')}`;
}

/**
 * Pino serializers: what a request and a response may put in a log line. Headers are never logged
 * (X-API-Key, Authorization and cookies live there); bodies are never logged (credential arguments
 * live there).
 */
export const serializers = {
  req(request: FastifyRequest) {
    return { method: request.method, url: redactUrl(request.url), remoteAddress: request.ip };
  },
  res(reply: { statusCode: number }) {
    return { statusCode: reply.statusCode };
  },
};
