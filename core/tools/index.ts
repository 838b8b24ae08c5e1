import type { FastifyBaseLogger } from 'fastify';
import type { CatalogSnapshot } from '../catalog/types.js';
import type { Config } from '../config.js';
import type { OAuthFlows } from '../connections/oauth/index.js';
import type { ConnectionService } from '../connections/service.js';
import type { Store } from '../store/types.js';
import type { OutboundClient } from '../upstream/outbound.js';
import type { ProviderClient } from '../upstream/provider-client.js';
import { providerToolRunner, visibleProviders } from './provider-tools.js';
import { reportWebhook } from './report-webhook.js';
import { ToolService } from './service.js';
import { createSystemTools } from './system.js';

export interface ToolsDeps {
  config: Config;
  catalog: { readonly current: CatalogSnapshot };
  store: Store;
  connections: ConnectionService;
  oauth: OAuthFlows;
  client: ProviderClient;
  outbound: OutboundClient;
  log: FastifyBaseLogger;
}

/**
 * The tools every scope is served: the system tools (reports delivered to
 * TOOLGATE_REPORT_WEBHOOK_URL when set) and the provider tools of the scope's connections.
 */
export function createToolService(deps: ToolsDeps): ToolService {
  const { config, catalog, connections, oauth, log } = deps;
  return new ToolService({
    catalog,
    systemTools: createSystemTools({
      catalog,
      store: deps.store,
      connections,
      oauth,
      baseUrl: config.baseUrl,
      ...(config.reportWebhookUrl
        ? { reportSink: reportWebhook(deps.outbound, config.reportWebhookUrl) }
        : {}),
      onSinkError: (error, report) =>
        log.warn(
          { err: error, report: report.id, code: 'TG_REPORT_WEBHOOK_FAILED' },
          'report webhook failed',
        ),
    }),
    visibleProviders: (caller, snapshot) => visibleProviders(connections, caller.scope, snapshot),
    runProviderTool: providerToolRunner(connections, deps.client, oauth),
  });
}
