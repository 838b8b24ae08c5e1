import type { FastifyInstance } from 'fastify';
import type { AdminOperations } from '../admin/operations.js';
import type { FrontDoor } from '../auth/front-door/index.js';
import type { IdentityProviders } from '../auth/identity-providers.js';
import type { KeyService } from '../auth/key-service.js';
import type { CatalogSnapshot } from '../catalog/types.js';
import type { Config } from '../config.js';
import type { Lock } from '../coordination/lock.js';
import type { ProcessDirectory, ProcessRecord } from '../coordination/processes.js';
import type { OAuthFlows } from '../connections/oauth/index.js';
import type { ConnectionService } from '../connections/service.js';
import type { Transport } from '../mcp/index.js';
import type { Store } from '../store/types.js';
import type { Telemetry } from '../telemetry/index.js';
import { adminRoutes } from './admin.js';
import { authenticate, hostGuard, withChallenge } from './auth.js';
import { connectPageRoutes } from './connect-page.js';
import { dashboardRoutes } from './dashboard/index.js';
import { frontDoorRoutes } from './front-door.js';
import { healthRoutes } from './health.js';
import { mcpRoutes } from './mcp.js';
import { metricsRoutes } from './metrics.js';
import { oauthRoutes } from './oauth-pages.js';
import { SignInThrottle } from './throttle.js';

export interface RoutesDeps {
  config: Config;
  store: Store;
  keys: KeyService;
  frontDoor: FrontDoor;
  identityProviders: IdentityProviders;
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
  telemetry: Telemetry;
}

/**
 * Registers every route group, each an encapsulated plugin or a plain group of its own paths:
 * `/mcp` (host check and key authentication in its own hook), the OAuth front door (metadata, the
 * authorization server, sign-in and consent pages), the connect page, the OAuth pages,
 * health, the admin API, /metrics (admin token; or its own port) and the dashboard (host check, sign-in, CSRF in its own hooks).
 */
export function registerRoutes(app: FastifyInstance, deps: RoutesDeps): void {
  const { config, store, catalog, connections, operations } = deps;
  const guardHost = hostGuard(config.baseUrl, config.allowedHosts);
  const { frontDoor, keys } = deps;
  const keyRecords = store.keys;
  mcpRoutes(app, {
    authenticate: (request) => {
      const caller = authenticate(request, { keys, frontDoor, keyRecords });
      return caller instanceof Promise
        ? caller.catch((error: unknown) => {
            throw withChallenge(error, request, frontDoor.resourceMetadataUrl);
          })
        : caller;
    },
    guardHost,
    transports: deps.transports,
    telemetry: deps.telemetry,
  });
  frontDoorRoutes(app, {
    frontDoor,
    keys,
    keyRecords,
    throttle: new SignInThrottle(store, deps.lock, config.signInWindowMs, 'front-door'),
    identityProviders: deps.identityProviders,
    idpRecords: store.identityProviders,
  });
  connectPageRoutes(app, { catalog, connections });
  oauthRoutes(app, deps.oauth, config);
  healthRoutes(app, { store, catalog, processes: deps.processes, self: deps.self });
  adminRoutes(app, config, operations);
  metricsRoutes(app, config, deps.telemetry.metrics);
  dashboardRoutes(app, { config, store, ops: operations, lock: deps.lock, guardHost });
}
