import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { bootstrap } from './admin/bootstrap.js';
import { MASTER_KEY_WARNING, openCore } from './admin/open.js';
import { AdminOperations } from './admin/operations.js';
import type { Coordination, ProcessRecord } from './coordination/index.js';
import type { Keyring } from './keyring.js';
import { FrontDoor } from './auth/front-door/index.js';
import { KeyService } from './auth/key-service.js';
import { CatalogHolder, logCatalogReport, warmBuildWorker, type CatalogReport } from './catalog/index.js';
import type { Config } from './config.js';
import { OAuthApps } from './connections/oauth-apps.js';
import { OAuthFlows } from './connections/oauth/index.js';
import { ConnectionService } from './connections/service.js';
import { Vault } from './connections/vault.js';
import { createApp, localOrigin } from './http/app.js';
import { frontDoorErrorPage } from './http/front-door.js';
import { IdentityProviders } from './auth/identity-providers.js';
import { registerRoutes } from './http/index.js';
import { listenMetrics, portOf } from './http/metrics.js';
import {
  Jobs,
  auditRetention,
  linkPurge,
  processAnnouncement,
  refreshScheduler,
  revocationSweep,
  sessionJobs,
  type Job,
} from './jobs.js';
import { McpEndpoint } from './mcp/index.js';
import { PluginRegistry } from './catalog/plugins/registry.js';
import type { ProviderPlugin } from './catalog/plugins/types.js';
import type { AuditLog } from './store/audit-log.js';
import type { Store } from './store/types.js';
import { Telemetry } from './telemetry/index.js';
import { createToolService } from './tools/index.js';
import { outboundClient, type OutboundClient } from './upstream/outbound.js';
import { ProviderClient } from './upstream/provider-client.js';
import { MCP_UPSTREAM_DEFAULTS, McpUpstreams } from './upstream/mcp-client.js';
import { eventsWebhook } from './upstream/webhooks.js';

export interface GatewayOptions {
  config: Config;
  /** Where log lines go (default stdout); tests capture them to scan for secrets. */
  logStream?: DestinationStream;
  /** Code plugins (plugins/ at the top level), registered by the composition root. */
  plugins?: readonly ProviderPlugin[];
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
  /** Sessions with the upstream MCP servers of `mcp` providers. */
  readonly upstreams: McpUpstreams;
  readonly connections: ConnectionService;
  readonly oauthApps: OAuthApps;
  readonly mcp: McpEndpoint;
  /** What operators do, through the admin API and the dashboard alike. */
  readonly operations: AdminOperations;
  /** The OAuth front door: sign-in for MCP clients that cannot send an API key header (issue 14). */
  readonly frontDoor: FrontDoor;
  /** Prometheus metrics (GET /metrics) and OpenTelemetry spans. */
  readonly telemetry = new Telemetry();
  /** The TOOLGATE_METRICS_PORT server, while listening. */
  private metricsServer: Server | undefined;
  private readonly oauth: OAuthFlows;
  private readonly jobs: Jobs;
  /** The audit trail's writer, flushed last at shutdown (after in-flight calls finished). */
  readonly audit: AuditLog;
  private readonly announcement: Job;
  private closing: Promise<void> | undefined;
  /**
   * This process among the deployment's (the process directory, /readyz); also tells its own
   * `catalog.reload` apart from other processes'.
   */
  readonly processId = `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  private readonly startedAt = new Date().toISOString();

  private constructor(
    readonly config: Config,
    readonly store: Store,
    keyring: Keyring,
    readonly coordination: Coordination,
    audit: AuditLog,
    options: GatewayOptions,
  ) {
    this.audit = audit;
    const app = (this.app = createApp({ logLevel: config.logLevel, logStream: options.logStream }));
    const log = app.log;
    const { bus, lock, sessions } = coordination;
    const keys = (this.keys = new KeyService(store, keyring, bus, audit));
    const plugins = new PluginRegistry(options.plugins);
    const catalog = (this.catalog = new CatalogHolder({
      dir: config.manifestsDir,
      registry: plugins,
      limits: config.catalogBuild,
    }));
    const outbound = (this.outbound = outboundClient(config));
    const { telemetry } = this;
    const client = new ProviderClient({ outbound, plugins, config, log, telemetry });
    const upstreams = (this.upstreams = new McpUpstreams({
      outbound,
      client,
      telemetry,
      limits: {
        ...MCP_UPSTREAM_DEFAULTS,
        timeoutMs: config.mcpTimeoutMs,
        listTimeoutMs: 2 * config.mcpTimeoutMs,
      },
    }));
    const connections = (this.connections = new ConnectionService({
      store,
      bus,
      vault: new Vault(keyring),
      client,
      upstreams,
      plugins,
      config,
      audit,
    }));
    const oauthApps = (this.oauthApps = new OAuthApps(store, keyring, config, audit));
    const emitEvent = eventsWebhook(outbound, config.eventsWebhookUrl, log);
    const oauth = (this.oauth = new OAuthFlows({
      store,
      lock,
      keyring,
      apps: oauthApps,
      connections,
      client,
      outbound,
      plugins,
      catalog,
      config,
      log,
      emitEvent,
      telemetry,
    }));
    const tools = createToolService({
      config,
      catalog,
      store,
      connections,
      oauth,
      client,
      upstreams,
      bus,
      outbound,
      log,
      telemetry,
      audit,
    });
    this.mcp = new McpEndpoint({
      tools,
      sessions,
      bus,
      catalog,
      basePath: new URL(config.baseUrl).pathname.replace(/\/+$/, ''),
      connectedProviders: async (scope) => new Set((await connections.list(scope)).map((c) => c.provider)),
      onError: (error) => log.error({ err: error, code: 'TG_ERR_INTERNAL' }, 'MCP handling failed'),
    });
    telemetry.metrics.watch({
      openStreams: () => this.mcp.hub.size,
      sessions: () => sessions.count(),
      catalog: () => {
        const { version, providers, tools, failed } = catalog.current;
        return { version, providers: providers.size, tools: tools.size, failedProviders: failed.size };
      },
    });
    const reloadCatalog = (): Promise<CatalogReport> => this.reloadEverywhere();
    const localOriginOf = (): string | undefined => localOrigin(app);
    const frontDoor = (this.frontDoor = new FrontDoor({
      config,
      store,
      keyring,
      outbound,
      bus,
      errorPage: frontDoorErrorPage,
    }));
    const operations = (this.operations = new AdminOperations({
      config,
      store,
      keys,
      catalog,
      reloadCatalog,
      oauthApps,
      localOrigin: localOriginOf,
      bus,
      frontDoor,
      keyring,
    }));
    const self = (): ProcessRecord => this.processRecord();
    const identityProviders = new IdentityProviders({
      store,
      keyring,
      outbound,
      callbackUrl: `${frontDoor.issuer}/signin/idp/callback`,
      allowInsecureIssuers: config.allowPrivateNetwork,
    });
    registerRoutes(app, {
      config,
      store,
      keys,
      frontDoor,
      identityProviders,
      catalog,
      connections,
      oauth,
      transports: this.mcp.transports,
      operations,
      lock,
      processes: coordination.processes,
      self,
      telemetry,
    });
    catalog.on('changed', (ids) => void bus.publish({ type: 'catalog.changed', providers: [...ids] }));
    catalog.on('reloaded', (report) => logCatalogReport(log, report, 'watcher'));
    bus.subscribe('catalog.reload', ({ origin }) => {
      if (origin === this.processId) return;
      this.reloadCatalog('bus').catch((err: unknown) =>
        log.error({ err, code: 'TG_CATALOG_RELOAD_FAILED' }, 'catalog reload failed'),
      );
    });
    catalog.on('error', (err) =>
      log.error({ err, code: 'TG_CATALOG_RELOAD_FAILED' }, 'catalog reload failed'),
    );
    this.jobs = new Jobs({ lock, log });
    this.announcement = processAnnouncement({ processes: coordination.processes, record: self });
  }

  private processRecord(): ProcessRecord {
    const { version, fingerprint } = this.catalog.current;
    return {
      id: this.processId,
      host: hostname(),
      pid: process.pid,
      startedAt: this.startedAt,
      catalog: { version, fingerprint },
      seenAt: new Date().toISOString(),
    };
  }

  /** Opens the store (migrating it), loads the catalog and builds the gateway; `listen()` starts serving. */
  static async create(options: GatewayOptions): Promise<Gateway> {
    // The first catalog build needs a build worker: it loads while the store opens.
    warmBuildWorker(options.config.catalogBuild);
    // Bus delivery failures are logged by the gateway's logger, which exists once the gateway does.
    const sink: { log?: FastifyBaseLogger } = {};
    const core = await openCore(
      options.config,
      (error) => sink.log?.error({ err: error, code: 'TG_ERR_INTERNAL' }, 'bus delivery failed'),
      (error, dropped) =>
        sink.log?.error({ err: error, code: 'TG_AUDIT_WRITE_FAILED', dropped }, 'audit trail write failed'),
      {
        server: {
          onCheckpointFailure: (error) =>
            sink.log?.error(
              { err: error, code: 'TG_ERR_INTERNAL' },
              "SQLite's checkpoint worker stopped; the server's connection checkpoints the WAL itself again",
            ),
        },
      },
    );
    const gateway = new Gateway(
      options.config,
      core.store,
      core.keyring,
      core.coordination,
      core.audit,
      options,
    );
    sink.log = gateway.app.log;
    if (core.masterKeyFile) {
      gateway.app.log.warn({ code: 'TG_MASTER_KEY_GENERATED', file: core.masterKeyFile }, MASTER_KEY_WARNING);
    }
    await gateway.keys.init();
    await gateway.reloadCatalog();
    return gateway;
  }

  /** Rebuilds the catalog aside and swaps it in (SIGHUP, `toolgate catalog reload`, the admin API). */
  async reloadCatalog(trigger = 'request'): Promise<CatalogReport> {
    const report = await this.catalog.reload();
    logCatalogReport(this.app.log, report, trigger);
    // The other processes see the new catalog at once, not at the next announcement.
    if (report.swapped && this.app.server.listening) void this.jobs.tick(this.announcement);
    return report;
  }

  /**
   * An operator's reload (`toolgate catalog reload`, the dashboard's button, the admin API): this
   * process reloads and answers with its report, and every other process of the deployment reloads
   * on the bus's `catalog.reload`.
   */
  async reloadEverywhere(): Promise<CatalogReport> {
    const report = await this.reloadCatalog();
    await this.coordination.bus.publish({ type: 'catalog.reload', origin: this.processId });
    return report;
  }

  /** The first-start banner's key and dashboard password (admin/bootstrap.ts). */
  bootstrap(): Promise<{ key?: string; adminPassword?: string }> {
    return bootstrap(this.store, this.keys);
  }

  async listen(): Promise<string> {
    await this.app.listen({ host: this.config.host, port: this.config.port });
    if (this.config.metricsPort !== undefined) {
      const { host, metricsPort: port } = this.config;
      this.metricsServer = await listenMetrics(this.telemetry.metrics, { host, port, log: this.app.log });
      this.app.log.info(
        { code: 'TG_METRICS_LISTENING', port: portOf(this.metricsServer) },
        'metrics served on their own port (GET /metrics, no token)',
      );
    }
    this.catalog.start();
    const { store, coordination, connections, catalog, config } = this;
    this.jobs.start([
      revocationSweep({ store, bus: coordination.bus }),
      refreshScheduler({ store, catalog, oauth: this.oauth, config, log: this.app.log }),
      linkPurge({ connections, store }),
      auditRetention({ store, config }),
      ...sessionJobs({ sessions: coordination.sessions, hub: this.mcp.hub }),
      this.announcement,
    ]);
    const address = this.app.server.address();
    if (address === null || typeof address === 'string') return String(address);
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  /** The port /metrics is served on apart (TOOLGATE_METRICS_PORT), once listening; else undefined. */
  get metricsPort(): number | undefined {
    return this.metricsServer && portOf(this.metricsServer);
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
      this.metricsServer?.closeAllConnections();
      this.metricsServer?.close();
      this.metricsServer = undefined;
      const grace = setTimeout(() => this.app.server.closeAllConnections(), this.config.shutdownGraceMs);
      try {
        await this.app.close();
      } finally {
        clearTimeout(grace);
      }
      await this.mcp.close();
      this.upstreams.close();
      // Every call has ended: their entries are written before the store closes.
      await this.audit.close();
      await this.outbound.close();
      // Best effort: a process that cannot say goodbye drops out of the directory at its ttl.
      await this.coordination.processes.withdraw(this.processId).catch(() => {});
      await this.coordination.close();
      await this.store.close();
    })();
    return this.closing;
  }
}
