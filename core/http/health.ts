import type { FastifyInstance } from 'fastify';
import type { CatalogSnapshot, Finding } from '../catalog/types.js';
import type { Store } from '../store/types.js';

function errorsByProvider(map: ReadonlyMap<string, Finding[]>): Record<string, string[]> {
  return Object.fromEntries(
    [...map].map(([id, findings]) => [
      id,
      findings
        .filter((f) => f.severity === 'error')
        .map((f) => `${f.code} ${f.path.join(' > ')}: ${f.message}`),
    ]),
  );
}

/**
 * `/healthz`: the process answers. `/readyz`: the store answers and a catalog is loaded; its detail
 * names providers that failed to load and those serving their last good version (stale).
 */
export function healthRoutes(
  app: FastifyInstance,
  deps: { store: Store; catalog: { readonly current: CatalogSnapshot } },
): void {
  app.get('/healthz', (_request, reply) => reply.send({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const storeOk = await deps.store.ping();
    const catalog = deps.catalog.current;
    return reply.code(storeOk ? 200 : 503).send({
      status: storeOk ? 'ready' : 'unavailable',
      store: storeOk ? 'ok' : 'unreachable',
      catalog: {
        version: catalog.version,
        providers: catalog.providers.size,
        tools: catalog.tools.size,
        failed: errorsByProvider(catalog.failed),
        stale: errorsByProvider(catalog.stale),
      },
    });
  });
}
