import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type RequestListener } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';

export interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The body as UTF-8 text. */
  body: string;
  /** The body's bytes, as they arrived. */
  bytes: Buffer;
}

/** What the stand-in answers to one request. */
export interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

/** A JSON answer: `value` as the body, `content-type: application/json` unless `headers` names another. */
export function jsonAnswer(status: number, value: unknown, headers: Record<string, string> = {}): Answer {
  return { status, body: JSON.stringify(value), headers: { 'content-type': 'application/json', ...headers } };
}

/** A running stand-in (what `startReceiver` resolves to). */
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

/**
 * A loopback HTTP server standing in for a third party: records every request and answers with
 * whatever `respond` says. `next()` resolves with the next request to arrive (or one already queued).
 */
export async function startReceiver(
  respond: (req: Received) => Answer = () => ({ status: 200, body: 'ok' }),
  /** Serve https with this certificate (PEM) instead of http. */
  tls?: { key: string; cert: string },
) {
  const received: Received[] = [];
  const waiting: ((req: Received) => void)[] = [];
  let delivered = 0;
  const listener: RequestListener = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const bytes = Buffer.concat(chunks);
      const entry: Received = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: bytes.toString(),
        bytes,
      };
      received.push(entry);
      const answer = respond(entry);
      res.writeHead(answer.status, answer.headers ?? { 'content-type': 'text/plain' });
      res.end(answer.body ?? '');
      const waiter = waiting.shift();
      if (waiter) {
        delivered++;
        waiter(entry);
      }
    });
  };
  const server = tls ? createHttpsServer(tls, listener) : createServer(listener);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    received,
    next(): Promise<Received> {
      if (delivered < received.length) return Promise.resolve(received[delivered++]!);
      return new Promise((resolve) => waiting.push(resolve));
    },
    async close(): Promise<void> {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
