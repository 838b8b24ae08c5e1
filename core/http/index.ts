import type { FastifyInstance } from 'fastify';
import type { AdminOperations } from '../admin/operations.js';
import type { KeyService } from '../auth/key-service.js';
import type { CatalogSnapshot } from '../catalog/types.js';
import type { Config } from '../config.js';
import type { Lock } from '../coordination/lock.js';
import type { ProcessDirectory, ProcessRecord } from '../coordination/processes.js';
import type { OAuthFlows } from '../connections/oauth/index.js';
import type { ConnectionService } from '../connections/service.js';
import type { Transport } from '../mcp/index.js';
import type { Store } from '../store/types.js';
import { adminRoutes } from './admin.js';
import { authenticate, hostGuard } from './auth.js';
import { connectPageRoutes } from './connect-page.js';
import { dashboardRoutes } from './dashboard/index.js';
import { healthRoutes } from './health.js';
import { mcpRoutes } from './mcp.js';
import { oauthRoutes } from './oauth-pages.js';

export interface RoutesDeps {
  config: Config;
  store: Store;
  keys: KeyService;
  catalog: { readonly current: CatalogSnapshot };
  connections: ConnectionService;
  oauth: OAuthFlows;
  transports: readonly Transport[];
  operations: AdminOperations;
  /** Serialises work across the processes of the deployment (dashboard sign-in attempts). */
  lock: Lock;
  /** The live processes of the deployment, and this one's record, for /readyz. */
  processes: ProcessDirectory;
  self: () => ProcessRecord;
}

/**
 * Registers every route group, each an encapsulated plugin or a plain group of its own paths:
 * `/mcp` (host check and key authentication in its own hook), the connect page, the OAuth pages,
 * health, the admin API and the dashboard (host check, sign-in, CSRF in its own hooks).
 */
export function registerRoutes(app: FastifyInstance, deps: RoutesDeps): void {
  const { config, store, catalog, connections, operations } = deps;
  const guardHost = hostGuard(config.baseUrl, config.allowedHosts);
  mcpRoutes(app, {
    authenticate: (request) => authenticate(request, deps.keys),
    guardHost,
    transports: deps.transports,
  });
  connectPageRoutes(app, { catalog, connections });
  oauthRoutes(app, deps.oauth);
  healthRoutes(app, { store, catalog, processes: deps.processes, self: deps.self });
  adminRoutes(app, config, operations);
  dashboardRoutes(app, { config, store, ops: operations, lock: deps.lock, guardHost });
}
