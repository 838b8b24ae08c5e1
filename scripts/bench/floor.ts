/**
 * The floor of this stack (DESIGN.md, Performance facts): a bare Fastify app with one route, at
 * Toolgate's URL, that is sent the very tools/call Toolgate is (URL, headers, JSON-RPC body:
 * targets.ts, floorTarget), parses it, sends the same request to the upstream through an undici
 * Pool, and answers the upstream's text in a JSON-RPC result. No auth, no store, no MCP: what any
 * Fastify + undici gateway pays at least. Prints its port as the first line.
 */
import Fastify from 'fastify';
import { Pool } from 'undici';

async function main(): Promise<void> {
  const upstream = process.env.BENCH_UPSTREAM;
  if (!upstream) throw new Error('BENCH_UPSTREAM is not set');
  const pool = new Pool(upstream, { connections: 64 });
  const app = Fastify({ logger: false });
  app.post('/mcp/', async (request, reply) => {
    const body = request.body as {
      id: number;
      params: { arguments: { id: string; fields?: string }; _meta?: unknown };
    };
    const args = body.params.arguments;
    const query = args.fields !== undefined ? `?fields=${encodeURIComponent(args.fields)}` : '';
    const response = await pool.request({
      method: 'GET',
      path: `/items/${encodeURIComponent(args.id)}${query}`,
      headers: { accept: 'application/json', 'x-api-key': 'bench-secret' },
    });
    const text = await response.body.text();
    return reply
      .type('application/json')
      .send(
        `{"jsonrpc":"2.0","id":${JSON.stringify(body.id)},"result":{"content":[{"type":"text","text":${JSON.stringify(text)}}]}}`,
      );
  });
  const url = new URL(await app.listen({ host: '127.0.0.1', port: 0 }));
  process.stdout.write(`${url.port}\n`);
  process.on('SIGTERM', () => {
    void app.close().then(() => process.exit(0));
  });
}

void main();
