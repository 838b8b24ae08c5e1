import type { FastifyInstance } from 'fastify';
import type { CatalogSnapshot } from '../catalog/types.js';
import type { Store } from '../store/types.js';

/** `/healthz`: the process answers. `/readyz`: the store answers and a catalog is loaded. */
export function healthRoutes(
  app: FastifyInstance,
  deps: { store: Store; catalog: { readonly current: CatalogSnapshot } },
): void {
  app.get('/healthz', (_request, reply) => reply.send({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const storeOk = await deps.store.ping();
    const catalog = deps.catalog.current;
    const failed = Object.fromEntries(
      [...catalog.failed].map(([id, findings]) => [
        id,
        findings.map((f) => `${f.code} ${f.path.join(' > ')}: ${f.message}`),
      ]),
    );
    const body = {
      status: storeOk ? 'ready' : 'unavailable',
      store: storeOk ? 'ok' : 'unreachable',
      catalog: {
        version: catalog.version,
        providers: catalog.providers.size,
        tools: catalog.tools.size,
        failed,
      },
    };
    return reply.code(storeOk ? 200 : 503).send(body);
  });
}
