import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { bootstrap } from './admin/bootstrap.js';
import { recoverRotation } from './admin/master-key.js';
import { AdminOperations } from './admin/operations.js';
import { KeyService } from './auth/key-service.js';
import { CatalogHolder, logCatalogReport, type CatalogReport } from './catalog/index.js';
import type { Config } from './config.js';
import { OAuthApps } from './connections/oauth-apps.js';
import { OAuthFlows } from './connections/oauth.js';
import { ConnectionService } from './connections/service.js';
import { Vault } from './connections/vault.js';
import { openCoordination, type Coordination } from './coordination/index.js';
import { adminRoutes } from './http/admin.js';
import { createApp, localOrigin } from './http/app.js';
import { authenticate, hostGuard } from './http/auth.js';
import { connectPageRoutes } from './http/connect-page.js';
import { dashboardRoutes } from './http/dashboard/index.js';
import { healthRoutes } from './http/health.js';
import { mcpRoutes } from './http/mcp.js';
import { oauthRoutes } from './http/oauth-pages.js';
import { Jobs, linkPurge, refreshScheduler, revocationSweep, sessionJobs } from './jobs.js';
import { Keyring, loadMasterKey } from './keyring.js';
import { McpEndpoint } from './mcp/index.js';
import { PluginRegistry } from './plugins/registry.js';
import type { ProviderPlugin } from './plugins/types.js';
import { openStore } from './store/index.js';
import type { Store } from './store/types.js';
import { providerToolRunner, visibleProviders } from './tools/provider-tools.js';
import { postJson, reportWebhook } from './tools/report-webhook.js';
import { ToolService } from './tools/service.js';
import { createSystemTools } from './tools/system.js';
import { OutboundClient } from './upstream/outbound.js';
import { ProviderClient } from './upstream/provider-client.js';

export interface GatewayOptions {
  config: Config;
  /** Where log lines go (default stdout); tests capture them to scan for secrets. */
  logStream?: DestinationStream;
  /** Code plugins (plugins/ at the top level), registered by the composition root. */
  plugins?: readonly ProviderPlugin[];
}

export const MASTER_KEY_WARNING =
  'Generated a new master key. Back this file up somewhere safe and separate from the database: without it, stored provider credentials cannot be decrypted. Or set TOOLGATE_MASTER_KEY.';

export interface Core {
  store: Store;
  keyring: Keyring;
  coordination: Coordination;
  /** Set when this call generated the master key into the data dir. */
  masterKeyFile?: string;
  close(): Promise<void>;
}

/** What both the server and the CLI open on the data dir: the migrated store, the keyring, coordination. */
export async function openCore(
  config: Config,
  onBusError: (error: unknown) => void = () => {},
): Promise<Core> {
  const store = openStore(config.databaseUrl);
  await store.migrate();
  await recoverRotation(config, store, () => loadMasterKey(config).key);
  const master = loadMasterKey(config);
  // A key kept in the data dir is re-read when an envelope names another one (a rotation by the CLI).
  const keyring = new Keyring(
    master.key,
    config.masterKey === undefined ? () => loadMasterKey(config).key : undefined,
  );
  const coordination = openCoordination({ onBusError });
  const close = async (): Promise<void> => {
    await coordination.close();
    await store.close();
  };
  return master.generatedAt
    ? { store, keyring, coordination, masterKeyFile: master.generatedAt, close }
    : { store, keyring, coordination, close };
}

/**
 * The composition root: wiring only. Settings -> store, keyring, coordination -> catalog ->
 * upstream -> connections -> tools -> MCP endpoint -> admin -> HTTP routes -> jobs, each created
 * once, in dependency order, and closed by `close()` in reverse.
 */
export class Gateway {
  readonly app: FastifyInstance;
  readonly keys: KeyService;
  readonly catalog: CatalogHolder;
  /** The one outbound HTTP client: provider calls, report and event webhooks. */
  readonly outbound: OutboundClient;
  readonly connections: ConnectionService;
  readonly oauthApps: OAuthApps;
  readonly mcp: McpEndpoint;
  /** What operators do, through the admin API and the dashboard alike. */
  readonly operations: AdminOperations;
  private readonly jobs: Jobs;
  private readonly oauth: OAuthFlows;
  private closing: Promise<void> | undefined;

  private constructor(
    readonly config: Config,
    readonly store: Store,
    keyring: Keyring,
    readonly coordination: Coordination,
    options: GatewayOptions,
  ) {
    this.app = createApp({
      logLevel: config.logLevel,
      ...(options.logStream ? { logStream: options.logStream } : {}),
    });
    const log = this.app.log;
    const { bus, lock, sessions } = coordination;
    this.keys = new KeyService(store, keyring, bus);
    const plugins = new PluginRegistry();
    for (const plugin of options.plugins ?? []) plugins.register(plugin);
    const catalog = (this.catalog = new CatalogHolder({ dir: config.manifestsDir, registry: plugins }));
    this.outbound = new OutboundClient({
      allowPrivateNetwork: config.allowPrivateNetwork,
      timeoutMs: 30_000,
      maxResponseBytes: 5 * 1024 * 1024,
      maxRedirects: 5,
      // Webhooks the operator configured are trusted to live on the operator's own network.
      trustedOrigins: [config.reportWebhookUrl, config.eventsWebhookUrl].filter(
        (u): u is string => u !== undefined,
      ),
    });
    const client = new ProviderClient({ outbound: this.outbound, plugins, config, log });
    const connections = (this.connections = new ConnectionService({
      store,
      bus,
      vault: new Vault(keyring),
      client,
      plugins,
      config,
    }));
    this.oauthApps = new OAuthApps(store, keyring, config);
    const eventsUrl = config.eventsWebhookUrl;
    this.oauth = new OAuthFlows({
      store,
      keyring,
      apps: this.oauthApps,
      connections,
      client,
      plugins,
      catalog,
      config,
      log,
      emitEvent: (event) => {
        if (eventsUrl === undefined) return;
        postJson(this.outbound, eventsUrl, event).catch((error: unknown) =>
          log.warn(
            { err: error, code: 'TG_EVENTS_WEBHOOK_FAILED', event: event.type },
            'events webhook failed',
          ),
        );
      },
    });

    const tools = new ToolService({
      catalog,
      systemTools: createSystemTools({
        catalog,
        store,
        connections,
        oauth: this.oauth,
        baseUrl: config.baseUrl,
        ...(config.reportWebhookUrl
          ? { reportSink: reportWebhook(this.outbound, config.reportWebhookUrl) }
          : {}),
        onSinkError: (error, report) =>
          log.warn(
            { err: error, report: report.id, code: 'TG_REPORT_WEBHOOK_FAILED' },
            'report webhook failed',
          ),
      }),
      visibleProviders: (caller, snapshot) => visibleProviders(connections, caller.scope, snapshot),
      runProviderTool: providerToolRunner(connections, client, this.oauth),
    });
    this.mcp = new McpEndpoint({
      tools,
      sessions,
      bus,
      catalog,
      connectedProviders: async (scope) => new Set((await connections.list(scope)).map((c) => c.provider)),
      basePath: new URL(config.baseUrl).pathname.replace(/\/+$/, ''),
      onError: (error) => log.error({ err: error, code: 'TG_ERR_INTERNAL' }, 'MCP handling failed'),
    });
    this.operations = new AdminOperations({
      config,
      store,
      keys: this.keys,
      catalog,
      reloadCatalog: () => this.reloadCatalog(),
      oauthApps: this.oauthApps,
      localOrigin: () => localOrigin(this.app),
    });

    const guardHost = hostGuard(config.baseUrl, config.allowedHosts);
    mcpRoutes(this.app, {
      authenticate: (request) => authenticate(request, this.keys),
      guardHost,
      transports: this.mcp.transports,
    });
    connectPageRoutes(this.app, { catalog, connections });
    oauthRoutes(this.app, this.oauth);
    healthRoutes(this.app, { store, catalog });
    adminRoutes(this.app, config, this.operations);
    dashboardRoutes(this.app, { config, store, ops: this.operations, guardHost });

    catalog.on(
      'changed',
      (providers) => void bus.publish({ type: 'catalog.changed', providers: [...providers] }),
    );
    catalog.on('reloaded', (report) => logCatalogReport(log, report, 'watcher'));
    catalog.on('error', (error) =>
      log.error({ err: error, code: 'TG_CATALOG_RELOAD_FAILED' }, 'catalog reload failed'),
    );

    this.jobs = new Jobs({ lock, log });
  }

  /** Opens the store (migrating it), loads the catalog and builds the gateway; `listen()` starts serving. */
  static async create(options: GatewayOptions): Promise<Gateway> {
    // Bus delivery failures are logged by the gateway's logger, which exists once the gateway does.
    const sink: { log?: FastifyBaseLogger } = {};
    const core = await openCore(options.config, (error) =>
      sink.log?.error({ err: error, code: 'TG_ERR_INTERNAL' }, 'bus delivery failed'),
    );
    const gateway = new Gateway(options.config, core.store, core.keyring, core.coordination, options);
    sink.log = gateway.app.log;
    if (core.masterKeyFile) {
      gateway.app.log.warn({ code: 'TG_MASTER_KEY_GENERATED', file: core.masterKeyFile }, MASTER_KEY_WARNING);
    }
    await gateway.keys.init();
    await gateway.reloadCatalog();
    return gateway;
  }

  /** Rebuilds the catalog aside and swaps it in (SIGHUP, `toolgate catalog reload`, the admin API). */
  async reloadCatalog(): Promise<CatalogReport> {
    const report = await this.catalog.reload();
    logCatalogReport(this.app.log, report, 'request');
    return report;
  }

  /** The first-start banner's key and dashboard password (admin/bootstrap.ts). */
  bootstrap(): Promise<{ key?: string; adminPassword?: string }> {
    return bootstrap(this.store, this.keys);
  }

  async listen(): Promise<string> {
    await this.app.listen({ host: this.config.host, port: this.config.port });
    this.catalog.start();
    const { store, coordination, connections, catalog, config } = this;
    this.jobs.start([
      revocationSweep({ store, bus: coordination.bus }),
      refreshScheduler({ store, catalog, oauth: this.oauth, config, log: this.app.log }),
      linkPurge({ connections }),
      ...sessionJobs({ sessions: coordination.sessions, hub: this.mcp.hub }),
    ]);
    const address = this.app.server.address();
    if (address === null || typeof address === 'string') return String(address);
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  /**
   * Graceful shutdown: stop accepting, close event streams, let in-flight calls finish (bounded by
   * TOOLGATE_SHUTDOWN_GRACE_MS), then close coordination and the store.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.jobs.stop();
      this.catalog.stop();
      this.mcp.hub.closeWhere(() => true);
      const grace = setTimeout(() => this.app.server.closeAllConnections(), this.config.shutdownGraceMs);
      try {
        await this.app.close();
      } finally {
        clearTimeout(grace);
      }
      await this.mcp.close();
      await this.outbound.close();
      await this.coordination.close();
      await this.store.close();
    })();
    return this.closing;
  }
}
