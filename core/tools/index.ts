import type { FastifyBaseLogger } from 'fastify';
import type { CatalogSnapshot } from '../catalog/types.js';
import type { Config } from '../config.js';
import type { OAuthFlows } from '../connections/oauth/index.js';
import type { ConnectionService } from '../connections/service.js';
import type { AuditLog } from '../store/audit-log.js';
import type { Store } from '../store/types.js';
import type { Telemetry } from '../telemetry/index.js';
import type { OutboundClient } from '../upstream/outbound.js';
import type { ProviderClient } from '../upstream/provider-client.js';
import type { Bus } from '../coordination/bus.js';
import type { McpUpstreams } from '../upstream/mcp-client.js';
import { McpToolLists } from './mcp-tools.js';
import { providerToolRunner, visibleProviders } from './provider-tools.js';
import { createCompactTools } from './compact.js';
import { visibilityOf, type VisibilityOf } from './policy.js';
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
  /** Sessions with upstream MCP servers (providers with `mcp`). */
  upstreams: McpUpstreams;
  bus: Bus;
  outbound: OutboundClient;
  log: FastifyBaseLogger;
  telemetry: Telemetry;
  audit: AuditLog;
}

/**
 * The tools every scope is served: the system tools (reports delivered to
 * TOOLGATE_REPORT_WEBHOOK_URL when set), the provider tools of the scope's connections, and
 * search_tools/call_tool, which the compact list shows instead of the provider tools.
 */
export function createToolService(deps: ToolsDeps): ToolService {
  const { config, catalog, connections, oauth, log } = deps;
  const visibility: VisibilityOf = (caller) => visibilityOf(deps.store.policies, caller.scope);
  const mcp = new McpToolLists({
    upstreams: deps.upstreams,
    connections,
    oauth,
    bus: deps.bus,
    log,
  });
  const service: ToolService = new ToolService({
    catalog,
    // call_tool goes through the service's own tools/call, so there is one way to call a tool.
    compactTools: createCompactTools({
      catalog,
      connections,
      visibility,
      call: (caller, name, args, context) => service.call(caller, name, args, context),
      scopedCatalog: (caller, snapshot) => mcp.withListedTools(caller.scope, snapshot),
    }),
    compactThreshold: config.compactThreshold,
    systemTools: createSystemTools({
      catalog,
      store: deps.store,
      connections,
      oauth,
      visibility,
      baseUrl: config.baseUrl,
      listed: (scope, provider) => mcp.listing(scope, provider),
      ...(config.reportWebhookUrl
        ? { reportSink: reportWebhook(deps.outbound, config.reportWebhookUrl) }
        : {}),
      onSinkError: (error, report) =>
        log.warn(
          { err: error, report: report.id, code: 'TG_REPORT_WEBHOOK_FAILED' },
          'report webhook failed',
        ),
    }),
    visibility,
    visibleProviders: (caller, snapshot) => visibleProviders(connections, caller.scope, snapshot),
    runProviderTool: providerToolRunner(connections, deps.client, oauth, mcp),
    listedTools: (caller, provider) => mcp.listing(caller.scope, provider),
    telemetry: deps.telemetry,
    audit: deps.audit,
  });
  return service;
}
