/**
 * The loopback upstream every tools/call variant ends at: a tiny node:http server answering any
 * request with the same small JSON item, as a provider's "get one object" endpoint would. It runs in
 * its own process (pinned with the load generator, so the server under test has its core alone)
 * and prints its port as the first line of stdout.
 */
import { createServer } from 'node:http';

/** What every request is answered with (about 300 bytes, like a typical "get" response). */
const UPSTREAM_ITEM = JSON.stringify({
  id: '42',
  object: 'item',
  name: 'Widget 42',
  status: 'active',
  owner: { id: 'u_1', login: 'octo', type: 'User' },
  labels: ['bench', 'loopback'],
  created_at: '2026-01-01T00:00:00Z',
  updated_at: '2026-01-02T00:00:00Z',
  url: 'https://api.example.com/items/42',
});

const body = Buffer.from(UPSTREAM_ITEM);
const server = createServer((request, response) => {
  // Drain any request body before answering, as a real API would read it.
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length });
    response.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  process.stdout.write(`${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
