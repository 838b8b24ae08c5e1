import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import type { Metrics } from '../telemetry/index.js';
import { adminGuard, adminToken } from './admin.js';

/**
 * `GET /metrics` on the main port, in the Prometheus text format, for the admin token only
 * (`Authorization: Bearer <token>`, as the admin API): never public by default. Not registered
 * when TOOLGATE_METRICS_PORT is set: the metrics are served there instead ({@link listenMetrics}),
 * and the main port answers 404.
 */
export function metricsRoutes(app: FastifyInstance, config: Config, metrics: Metrics): void {
  if (config.metricsPort !== undefined) return;
  const check = adminGuard(adminToken(config));
  app.get('/metrics', async (request, reply) => {
    check(request);
    const { contentType, text } = await metrics.exposition();
    return reply.type(contentType).send(text);
  });
}

/**
 * The metrics port (TOOLGATE_METRICS_PORT on TOOLGATE_HOST): `GET /metrics` without a token, for a
 * Prometheus on the monitoring network; nothing else is served there. Resolves once it listens.
 */
export async function listenMetrics(
  metrics: Metrics,
  options: { host: string; port: number; log: FastifyBaseLogger },
): Promise<Server> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?', 1)[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('This port serves GET /metrics only.\n');
      return;
    }
    metrics.exposition().then(
      ({ contentType, text }) => {
        response.writeHead(200, { 'content-type': contentType });
        response.end(text);
      },
      (error: unknown) => {
        options.log.error({ err: error, code: 'TG_ERR_INTERNAL' }, 'metrics collection failed');
        response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        response.end('The metrics could not be collected; the gateway log says why.\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

/** The port a listening server got (the metrics port may be 0: any free one, as in tests). */
export function portOf(server: Server): number {
  return (server.address() as AddressInfo).port;
}
