import type { FastifyRequest } from 'fastify';
import { andThen, type Awaitable } from '../../awaitable.js';
import { GatewayError } from '../../errors.js';
import type { ToolService } from '../../tools/service.js';
import type { CallContext } from '../../tools/types.js';
import { dispatch, isNotification, isRequest, isResponse, type RpcRequest } from '../dispatch.js';
import { encodeError, RPC, type RpcBody } from '../protocol.js';
import { newSessionId, type SessionRecord, type SessionStore } from '../../coordination/sessions.js';
import type { Caller } from '../../domain.js';
import type { SseWriter, StreamHub } from '../streams.js';
import type { SessionStreams } from './session-streams.js';

/** What both older transports (2025 Streamable HTTP, 2024 HTTP+SSE) share. */
export interface LegacyDeps {
  sessions: SessionStore;
  /** Session event streams, reached from any process. */
  streams: SessionStreams;
  tools: ToolService;
  onError: (error: unknown, request: FastifyRequest) => void;
}

/** How often a session's lastSeenAt is written; every request would be a write per call. */
const TOUCH_INTERVAL_MS = 30_000;

/**
 * The session a request names, when it belongs to this caller. A session presented with another
 * client's key, or from another scope, is answered exactly like an unknown one (404): it is never
 * served and its existence is not revealed.
 */
export function ownedSession(
  deps: LegacyDeps,
  id: string,
  caller: Caller,
  transport: SessionRecord['transport'],
): Awaitable<SessionRecord> {
  // At once while the session store holds the record (core/awaitable.ts): every request of a session.
  return andThen(deps.sessions.get(id), (session) => {
    if (
      !session ||
      session.transport !== transport ||
      session.clientId !== caller.clientId ||
      session.scopeKey !== caller.scopeKey
    ) {
      throw new GatewayError('TG_ERR_SESSION_NOT_FOUND');
    }
    const now = Date.now();
    if (now - session.lastSeenAt <= TOUCH_INTERVAL_MS) return session;
    return deps.sessions.update(id, { lastSeenAt: now }).then(() => session);
  });
}

/** Splits a POSTed body into JSON-RPC messages; a body that is not JSON-RPC is a 400. */
export function messagesOf(body: unknown, allowBatch: boolean): unknown[] {
  const messages = Array.isArray(body) && allowBatch ? body : [body];
  if (messages.length === 0 || !messages.every((m) => isRequest(m) || isNotification(m) || isResponse(m))) {
    throw new GatewayError('TG_ERR_BAD_REQUEST');
  }
  return messages;
}

/** Answers one request on the lean path; an unexpected failure becomes a JSON-RPC internal error. */
export async function answer(
  deps: LegacyDeps,
  request: FastifyRequest,
  message: RpcRequest,
  caller: Caller,
  context: CallContext = {},
): Promise<RpcBody> {
  try {
    return await dispatch(message, caller, deps.tools, 'legacy', context);
  } catch (error) {
    deps.onError(error, request);
    return encodeError(message.id, RPC.INTERNAL_ERROR, `Internal error (request ${request.id}).`);
  }
}

export function isInitialize(message: unknown): message is RpcRequest {
  return isRequest(message) && message.method === 'initialize';
}

/** Creates and stores a session record for this caller; returns its new id. */
export async function newSession(
  deps: LegacyDeps,
  caller: Caller,
  transport: SessionRecord['transport'],
  protocolVersion: string | undefined,
  elicitUrl: boolean,
): Promise<string> {
  const id = newSessionId();
  await deps.sessions.create({
    id,
    transport,
    clientId: caller.clientId,
    scope: caller.scope,
    scopeKey: caller.scopeKey,
    protocolVersion,
    elicitUrl,
    ...(caller.surface !== 'auto' ? { surface: caller.surface } : {}),
    lastSeenAt: Date.now(),
  });
  return id;
}

/**
 * The caller a session's request acts as: the request's own, with the tool list the session was
 * opened with (issue 15), whatever `tools` this request's URL says.
 */
export function sessionCaller(caller: Caller, session: SessionRecord): Caller {
  const surface = session.surface ?? 'auto';
  return surface === caller.surface ? caller : { ...caller, surface };
}

/**
 * Registers a session's event stream with the hub (notifications of its scope, keep-alives,
 * revocation), and unregisters it when the stream closes, then runs `onClose` when given.
 */
export function attachWriter(
  hub: StreamHub,
  caller: Caller,
  sessionId: string,
  writer: SseWriter,
  onClose?: () => void,
): void {
  const unregister = hub.add({
    keyId: caller.keyId,
    ...(caller.grantId ? { grantId: caller.grantId } : {}),
    scope: caller.scope,
    scopeKey: caller.scopeKey,
    sessionId,
    send: (json) => writer.send(json),
    keepAlive: () => writer.write(': keep-alive\n\n'),
    close: () => writer.close(),
  });
  writer.onClose(() => {
    unregister();
    onClose?.();
  });
}
