import { once } from 'node:events';
import { createServer } from 'node:net';

/**
 * A loopback port free right now, for a server that must be told its port up front (a gateway
 * whose base URL is known before it listens). Shared by the tests and the bench (which may use test helpers; tests never import scripts/).
 */
export async function freePort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}
