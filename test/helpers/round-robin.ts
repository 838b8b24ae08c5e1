import { EventEmitter, once } from 'node:events';
import {
  createServer,
  request,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request a backend answered. */
export interface Served {
  backend: string;
  method: string;
  status: number;
  /** The Mcp-Session-Id the request carried, or the one the answer assigned (initialize). */
  session?: string;
}

/** A request a backend did not answer: refused, or cut off before its answer began. */
export interface Failed {
  backend: string;
  method: string;
  /** The socket error: ECONNREFUSED, ECONNRESET, ... */
  code: string;
  /** Whether the request was then sent to the next backend (otherwise the client got a 502). */
  retried: boolean;
}

/** A loopback balancer in front of several gateway processes. */
export interface RoundRobin {
  /** Where clients connect: `http://127.0.0.1:<port>`. */
  url: string;
  /** Each request a backend answered, in order (to show consecutive requests were spread). */
  served: Served[];
  /** Each attempt a backend did not answer, in order. */
  failed: Failed[];
  /** Emits 'served' as each answer starts (an event stream's, as soon as it opens), 'failed' on each failure. */
  events: EventEmitter;
  close(): Promise<void>;
}

/** How long a backend that failed is left out, as nginx's `fail_timeout` (its default, 10 s). */
const FAIL_TIMEOUT_MS = 10_000;

/** Methods nginx does not send to the next backend once the request may have reached one. */
const NON_IDEMPOTENT = new Set(['POST', 'PATCH', 'LOCK']);

/** Hop-by-hop headers: they describe one connection, not the message (nginx drops them too). */
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade'];

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function endToEnd(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const copy = { ...headers };
  for (const name of HOP_BY_HOP) delete copy[name];
  return copy;
}

/**
 * A plain round-robin HTTP balancer, as an operator would put in front of Toolgate (no sticky
 * sessions): consecutive requests go to consecutive backends, whatever client or session they
 * belong to. It behaves as scripts/deploy/balancer.conf's nginx does with its defaults:
 * - a new connection to the backend per request (no upstream keepalive), so a request never rides
 *   a pooled connection of a process that has just died;
 * - passive health checks (`max_fails=1 fail_timeout=10s`): a backend that refused a connection, or
 *   cut one off, is left out for 10 s, then tried again; when every backend is out, all are tried;
 * - `proxy_next_upstream error`: a request whose connection could not be made (refused, reset
 *   while connecting) goes to the next backend; one cut off after it was sent goes to the next only
 *   when its method is idempotent (a POST that may have reached the dead process is answered 502,
 *   never sent twice);
 * - a backend that dies while its answer flows (an event stream) has its client's connection cut,
 *   so the client sees the stream end and may open it again.
 * Request bodies are read whole (MCP messages are small); answers, event streams included, flow
 * through as they are written.
 */
export async function startRoundRobin(backends: readonly string[], listenPort = 0): Promise<RoundRobin> {
  let next = 0;
  const served: Served[] = [];
  const failed: Failed[] = [];
  const events = new EventEmitter();
  const open = new Set<ServerResponse>();
  const downUntil = new Map<string, number>();

  /** The next backend in turn that is not left out (or simply the next, when all are). */
  const pick = (): string => {
    const now = Date.now();
    for (let i = 0; i < backends.length; i++) {
      const backend = backends[next++ % backends.length]!;
      if ((downUntil.get(backend) ?? 0) <= now) return backend;
    }
    return backends[next++ % backends.length]!;
  };

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, tried: number): void => {
    const backend = pick();
    const method = req.method ?? 'GET';
    const target = new URL(req.url ?? '/', backend);
    const upstream = request(
      target,
      { method, headers: endToEnd(req.headers), agent: false },
      (answer: IncomingMessage) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        // At once, as nginx does unbuffered: an event stream's client learns it is open before
        // its first event (without this it would not even know it had a stream to lose).
        res.flushHeaders();
        const session = single(req.headers['mcp-session-id']) ?? single(answer.headers['mcp-session-id']);
        served.push({
          backend,
          method,
          status: answer.statusCode ?? 502,
          ...(session === undefined ? {} : { session }),
        });
        events.emit('served');
        answer.pipe(res);
        // The backend went away mid-answer: cut the client off too, as a proxy does.
        answer.on('close', () => {
          if (!answer.complete) res.destroy();
        });
        answer.on('error', () => res.destroy());
        res.on('close', () => answer.destroy());
      },
    );
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (res.headersSent || res.destroyed) return void res.destroy();
      downUntil.set(backend, Date.now() + FAIL_TIMEOUT_MS);
      // A connection never made (refused, reset while connecting) carried nothing to the backend.
      const unsent = error.syscall === 'connect';
      const retried = (unsent || !NON_IDEMPOTENT.has(method)) && tried + 1 < backends.length;
      failed.push({ backend, method, code: error.code ?? 'ERROR', retried });
      events.emit('failed');
      if (retried) return forward(req, res, body, tried + 1);
      res.writeHead(502, { 'content-type': 'text/plain' }).end(`no backend answered: ${error.message}`);
    });
    upstream.end(body);
  };

  const server = createServer((req, res) => {
    open.add(res);
    res.on('close', () => open.delete(res));
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => forward(req, res, Buffer.concat(chunks), 0));
  });
  server.listen(listenPort, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    failed,
    events,
    async close() {
      for (const res of open) res.destroy();
      server.close();
      server.closeAllConnections();
      await once(server, 'close');
    },
  };
}
