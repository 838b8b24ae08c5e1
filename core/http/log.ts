import type { FastifyRequest } from 'fastify';
import { jsonString } from '../json.js';

/** Query parameters that may appear in logs; every other value is replaced (allowlist, not denylist). */
const LOGGABLE_QUERY = new Set(['user_id', 'org_id', 'tools', 'sessionId', 'status']);
/** Path prefixes whose next segment is a bearer token (one-time links). */
const TOKEN_PATHS = ['/connect/', '/oauth/start/'];
/**
 * A query of loggable parameters only, each with a value that neither decoding nor encoding
 * changes (no `%`, no `+`): logged as it is. Redacting it the long way (URLSearchParams, an
 * encodeURIComponent per name and value) took ~0.35 µs of each scoped request, this ~0.07 µs.
 */
const PLAIN_PARAM = `(?:${[...LOGGABLE_QUERY].join('|')})=[\\w.!~*'()-]*`;
const LOGGABLE_AS_IS = new RegExp(`^${PLAIN_PARAM}(?:&${PLAIN_PARAM})*$`);

/** The request URL as it may be logged: one-time tokens and unlisted query values redacted. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  let path = q === -1 ? url : url.slice(0, q);
  for (const prefix of TOKEN_PATHS) {
    if (path.startsWith(prefix)) path = prefix + '[redacted]';
  }
  if (q === -1) return path;
  const query = url.slice(q + 1);
  if (LOGGABLE_AS_IS.test(query)) return `${path}?${query}`;
  const params = new URLSearchParams(query);
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

/**
 * The line pino writes for `log.info({ req, res, responseTime }, 'request completed')` on a logger
 * with {@link serializers} and pino's defaults otherwise (createApp's), byte for byte, built here:
 * pino's generic path (a serializer call, JSON.stringify and a key loop per field) cost a tools/call
 * about 12k instructions of its ~450k (scripts/bench/instructions.ts). `bindings` are the logger's
 * own (pino's chindings: `,"pid":…,"hostname":…,"reqId":…`). test/unit/http/log.test.ts holds it to
 * pino's output.
 */
export function accessLine(
  bindings: string,
  request: FastifyRequest,
  statusCode: number,
  responseTime: number,
): string {
  const req = serializers.req(request);
  const remote = req.remoteAddress === undefined ? '' : `,"remoteAddress":${jsonString(req.remoteAddress)}`;
  const time = Number.isFinite(responseTime) ? responseTime : null;
  return (
    `{"level":30,"time":${Date.now()}${bindings},"req":{"method":${jsonString(req.method)},` +
    `"url":${jsonString(req.url)}${remote}},"res":{"statusCode":${statusCode}},` +
    `"responseTime":${time},"msg":"request completed"}\n`
  );
}
