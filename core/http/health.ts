import type { FastifyInstance } from 'fastify';
import type { CatalogSnapshot, Finding } from '../catalog/types.js';
import type { ProcessDirectory, ProcessRecord } from '../coordination/processes.js';
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

/** What /readyz says of a process of the deployment. */
interface ProcessView {
  id: string;
  host: string;
  pid: number;
  self: boolean;
  catalog: { version: number; fingerprint: string };
  seenAt: string;
}

/**
 * This process and the others the directory lists (undefined while it cannot be read). This
 * process is shown with the catalog it serves now, which its last announcement may predate.
 */
async function processViews(deps: HealthDeps, catalog: CatalogSnapshot): Promise<ProcessView[] | undefined> {
  const listed = await deps.processes.list().catch(() => undefined);
  if (!listed) return undefined;
  const self: ProcessView = {
    ...deps.self(),
    self: true,
    catalog: { version: catalog.version, fingerprint: catalog.fingerprint },
  };
  const others = listed
    .filter((p) => p.id !== self.id)
    .map((p) => ({ id: p.id, host: p.host, pid: p.pid, self: false, catalog: p.catalog, seenAt: p.seenAt }));
  return [self, ...others];
}

export interface HealthDeps {
  store: Store;
  catalog: { readonly current: CatalogSnapshot };
  processes: ProcessDirectory;
  /** This process as the directory lists it. */
  self: () => ProcessRecord;
}

/**
 * `/healthz`: the process answers. `/readyz`: the store answers and a catalog is loaded; its detail
 * names providers that failed to load and those serving their last good version (stale), and lists
 * the processes of the deployment with the catalog each serves: a process whose catalog differs
 * from another's says so (`catalog.differsFrom`, and a warning), without leaving the balancer
 * (during a rolling change of manifests they differ for a while; taking them out would stop all).
 */
export function healthRoutes(app: FastifyInstance, deps: HealthDeps): void {
  app.get('/healthz', (_request, reply) => reply.send({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const storeOk = await deps.store.ping();
    const catalog = deps.catalog.current;
    const processes = await processViews(deps, catalog);
    const differsFrom = (processes ?? [])
      .filter((p) => p.catalog.fingerprint !== catalog.fingerprint)
      .map((p) => p.id);
    return reply.code(storeOk ? 200 : 503).send({
      status: storeOk ? 'ready' : 'unavailable',
      store: storeOk ? 'ok' : 'unreachable',
      coordination: processes ? 'ok' : 'unreachable',
      catalog: {
        version: catalog.version,
        fingerprint: catalog.fingerprint,
        providers: catalog.providers.size,
        tools: catalog.tools.size,
        failed: errorsByProvider(catalog.failed),
        stale: errorsByProvider(catalog.stale),
        differsFrom,
        ...(differsFrom.length > 0 && {
          warning: `this process serves another catalog than ${differsFrom.length} other process(es): give every process the same manifests, then run toolgate catalog reload`,
        }),
      },
      processes: processes ?? [],
    });
  });
}
