/**
 * The error catalogue: every code the gateway answers with over HTTP, its status and its message.
 * A message says what happened and what to do next; none ever carries a secret. Codes are never
 * reused for another meaning. README.md's "Error codes" table is kept in step by a test.
 */
export const ERRORS = {
  TG_ERR_KEY_MISSING: {
    status: 401,
    message: 'No API key was sent. Send it in the X-API-Key header, or as Authorization: Bearer <key>.',
  },
  TG_ERR_KEY_MALFORMED: {
    status: 401,
    message:
      'The API key is malformed or mistyped: a key is toolgate_ followed by 49 letters and digits, and its checksum did not match. Copy the whole key again.',
  },
  TG_ERR_KEY_UNKNOWN: {
    status: 401,
    message:
      'The API key is not recognised. Check that the whole key was copied, or create a new one (dashboard or `toolgate keys create`).',
  },
  TG_ERR_KEY_REVOKED: {
    status: 401,
    message:
      'This API key was revoked. Ask the operator for a new key; connections made with the old one are kept.',
  },
  TG_ERR_TOKEN_INVALID: {
    status: 401,
    message:
      'The access token is not valid: it expired, was revoked, or was issued for another server. Your MCP client signs in again by itself; if it does not, remove and add the server again.',
  },
  TG_ERR_TOKEN_SCOPE_MISMATCH: {
    status: 403,
    message:
      'This access token acts for the user and organization chosen when signing in: leave user_id and org_id out of the URL, or sign in again for the other user.',
  },
  TG_ERR_SCOPE_NEEDS_CLIENT_KEY: {
    status: 403,
    message:
      'user_id needs a client or platform key: a solo key serves a single user, and accepting user_id would silently merge users. Remove user_id from the URL or use a client key.',
  },
  TG_ERR_SCOPE_NEEDS_PLATFORM_KEY: {
    status: 403,
    message:
      'org_id together with user_id (3-level scoping) needs a platform key. Remove org_id from the URL or use a platform key.',
  },
  TG_ERR_IDENTIFIER_INVALID: {
    status: 400,
    message: 'user_id and org_id must be 1 to 256 printable characters, without control characters.',
  },
  TG_ERR_TOOLS_MODE_INVALID: {
    status: 400,
    message:
      'The tools query parameter must be compact or full, given once. Leave it out to let the gateway choose: compact when the scope has many tools.',
  },
  TG_ERR_HOST_NOT_ALLOWED: {
    status: 403,
    message:
      'The Host header names a host this gateway does not serve (DNS-rebinding protection). Behind a proxy, list the public host in TOOLGATE_ALLOWED_HOSTS.',
  },
  TG_ERR_ORIGIN_NOT_ALLOWED: {
    status: 403,
    message: 'Requests from this browser origin are not allowed (DNS-rebinding protection).',
  },
  TG_ERR_SESSION_NOT_FOUND: {
    status: 404,
    message:
      'Session not found: it ended, expired, or belongs to another caller. Start a new session (initialize).',
  },
  TG_ERR_SESSION_REQUIRED: {
    status: 400,
    message: 'This request needs the Mcp-Session-Id header returned by initialize.',
  },
  TG_ERR_STREAM_CONFLICT: {
    status: 409,
    message: 'This session already has an open event stream; close it before opening another.',
  },
  TG_ERR_METHOD_NOT_ALLOWED: {
    status: 405,
    message: 'This HTTP method is not supported here; the Allow header lists the ones that are.',
  },
  TG_ERR_NOT_ACCEPTABLE: {
    status: 406,
    message: 'The Accept header must allow application/json or text/event-stream.',
  },
  TG_ERR_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: 'The request body must be JSON (Content-Type: application/json).',
  },
  TG_ERR_BAD_REQUEST: {
    status: 400,
    message: 'The request body is not a valid JSON-RPC message.',
  },
  TG_ERR_PAYLOAD_TOO_LARGE: {
    status: 413,
    message: 'The request body is too large.',
  },
  TG_ERR_NOT_FOUND: {
    status: 404,
    message: 'Nothing is served at this path. The MCP endpoint is /mcp/.',
  },
  TG_ERR_ADMIN_UNAUTHORIZED: {
    status: 401,
    message:
      'The admin API needs Authorization: Bearer <token>, with the token from admin.token in the data dir.',
  },
  TG_ERR_INVALID_INPUT: {
    status: 400,
    message: 'A field of the request is missing or invalid; the message names it and says what it accepts.',
  },
  TG_ERR_RECORD_NOT_FOUND: {
    status: 404,
    message:
      'No record has this id. List them first (toolgate keys list, toolgate reports list) and copy the id.',
  },
  TG_ERR_UNAVAILABLE: {
    status: 503,
    message:
      'The gateway is shutting down, or cannot reach its database or coordination service (Redis) right now. Retry shortly.',
  },
  TG_ERR_INTERNAL: {
    status: 500,
    message: 'Internal error. The operator can find details in the log under this request id.',
  },
} as const satisfies Record<string, { status: number; message: string }>;

export type ErrorCode = keyof typeof ERRORS;

/** An error that maps to a catalogue entry; thrown anywhere, answered by the HTTP layer. */
export class GatewayError extends Error {
  override name = 'GatewayError';
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message?: string,
    readonly headers?: Record<string, string>,
  ) {
    super(message ?? ERRORS[code].message);
    this.status = ERRORS[code].status;
  }

  /** The JSON body every refusal carries. */
  toBody(): { error: { code: ErrorCode; message: string } } {
    return { error: { code: this.code, message: this.message } };
  }
}

// Network failures of a connection to a service (Node's socket errors, PostgreSQL's SQLSTATE class
// 08 "connection exception" and 57P0x "the server is shutting down or starting").
const OUTAGE_CODES =
  /^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|EHOSTUNREACH|ENETUNREACH|ENOTFOUND|EAI_AGAIN|08\w{3}|57P0[1-3])$/;
// What node-postgres and ioredis say when a connection is gone or cannot be had in time.
const OUTAGE_MESSAGES =
  /Connection terminated|Connection is closed|timeout exceeded when trying to connect|Reached the max retries per request limit|Command timed out|Stream isn't writeable/;

/**
 * Whether an error means the database or Redis cannot be reached (rather than a fault of the
 * gateway): such a request is answered 503 TG_ERR_UNAVAILABLE, and works again once the service is
 * back, without a restart (the drivers reconnect by themselves).
 */
export function isOutage(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' && OUTAGE_CODES.test(code)) || OUTAGE_MESSAGES.test(error.message);
}
