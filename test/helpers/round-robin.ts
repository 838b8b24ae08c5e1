import { EventEmitter, once } from 'node:events';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request a backend answered. */
export interface Served {
  backend: string;
  method: string;
  status: number;
}

/** A loopback balancer in front of several gateway processes. */
export interface RoundRobin {
  /** Where clients connect: `http://127.0.0.1:<port>`. */
  url: string;
  /** Each request a backend answered, in order (to show consecutive requests were spread). */
  served: Served[];
  /** Emits 'served' as each answer starts (an event stream's, as soon as it opens). */
  events: EventEmitter;
  close(): Promise<void>;
}

/**
 * A plain round-robin HTTP balancer, as an operator would put in front of Toolgate (no sticky
 * sessions): consecutive requests go to consecutive backends, whatever client or session they
 * belong to. Request bodies are read whole (MCP messages are small) so that a backend refusing the
 * connection (a killed process) is skipped for the next one, as nginx's `proxy_next_upstream error`
 * does; responses, event streams included, flow through as they are written.
 */
export async function startRoundRobin(backends: readonly string[], listenPort = 0): Promise<RoundRobin> {
  let next = 0;
  const served: Served[] = [];
  const events = new EventEmitter();
  const open = new Set<ServerResponse>();

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, tried: number): void => {
    const backend = backends[next++ % backends.length]!;
    const target = new URL(req.url ?? '/', backend);
    const upstream = request(
      target,
      { method: req.method, headers: req.headers },
      (answer: IncomingMessage) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        served.push({ backend, method: req.method ?? 'GET', status: answer.statusCode ?? 502 });
        events.emit('served');
        answer.pipe(res);
        res.on('close', () => answer.destroy());
      },
    );
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (res.headersSent) return res.destroy();
      if (error.code === 'ECONNREFUSED' && tried + 1 < backends.length)
        return forward(req, res, body, tried + 1);
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
    events,
    async close() {
      for (const res of open) res.destroy();
      server.close();
      server.closeAllConnections();
      await once(server, 'close');
    },
  };
}
