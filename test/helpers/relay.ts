import { once } from 'node:events';
import { createConnection, createServer, type Socket } from 'node:net';

/**
 * A TCP relay in front of a server (Redis, PostgreSQL) that a test can take down and bring back on
 * the same port, as a server that went away and returned.
 */
export interface Relay {
  /** The target's URL through the relay (credentials, database and options kept). */
  url: string;
  /** Refuses new connections and cuts the open ones, as a server that went away. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
}

/** Opens a {@link Relay} to the server of `target` (its port, else `defaultPort`); stop it when done. */
export async function tcpRelay(target: string, defaultPort: number): Promise<Relay> {
  const to = new URL(target);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = createConnection({
      host: to.hostname.replace(/^\[|\]$/g, ''),
      port: Number(to.port || defaultPort),
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  const listen = async (port: number): Promise<number> => {
    server.listen(port, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as { port: number }).port;
  };
  const port = await listen(0);
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return {
    url: url.toString(),
    async stop() {
      if (!server.listening) return;
      const closed = once(server, 'close');
      server.close();
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    async start() {
      await listen(port);
    },
  };
}
