import { createHash } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { DestinationStream } from 'pino';
import { KeyService } from './auth/key-service.js';
import { CatalogHolder, formatFindings, type CatalogReport } from './catalog/index.js';
import type { Config } from './config.js';
import { OutboundClient } from './connections/outbound.js';
import { OAuthApps } from './connections/oauth-apps.js';
import { OAuthFlows } from './connections/oauth.js';
import { ConnectionService } from './connections/service.js';
import { Vault } from './connections/vault.js';
import { adminRoutes } from './http/admin.js';
import { AdminOperations } from './http/admin-operations.js';
import { createApp } from './http/app.js';
import { authenticate, hostGuard } from './http/auth.js';
import { connectPageRoutes } from './http/connect-page.js';
import { dashboardRoutes } from './http/dashboard/index.js';
import { generatePassword, hashPassword } from './http/dashboard/password.js';
import { oauthRoutes } from './http/oauth-pages.js';
import { healthRoutes } from './http/health.js';
import { mcpRoutes } from './http/mcp.js';
import { Keyring, loadMasterKey } from './keyring.js';
import { recoverRotation } from './master-key.js';
import { LegacySseLeg } from './mcp/legacy-sse.js';
import { ModernLeg } from './mcp/modern.js';
import { TOOLS_LIST_CHANGED } from './mcp/protocol.js';
import { MemorySessionStore } from './mcp/sessions.js';
import { StreamableLeg } from './mcp/streamable.js';
import { StreamHub } from './mcp/streams.js';
import { PluginRegistry } from './plugins/registry.js';
import type { ProviderPlugin } from './plugins/types.js';
import type { Store } from './store/types.js';
import { Executor } from './tools/executor.js';
import { providerToolRunner, visibleProviders } from './tools/provider-tools.js';
import { postJson, reportWebhook } from './tools/report-webhook.js';
import { ToolService } from './tools/service.js';
import { createSystemTools } from './tools/system.js';
import { type Scope, scopeKey } from './domain.js';
import { openStore } from './store/index.js';

export interface GatewayOptions {
  config: Config;
  /** Where log lines go (default stdout); tests capture them to scan for secrets. */
  logStream?: DestinationStream;
  /** Code plugins (plugins/ at the top level), registered by the composition root. */
  plugins?: readonly ProviderPlugin[];
}

/** Timers of the running gateway; short enough that revocation cuts an open stream within ~1 s. */
const REVOCATION_SWEEP_MS = 1_000;
const KEEP_ALIVE_MS = 15_000;
const HOUSEKEEPING_MS = 60_000;
const SESSION_IDLE_MS = 60 * 60_000;
const OUTBOUND_TIMEOUT_MS = 30_000;
const OUTBOUND_MAX_BYTES = 5 * 1024 * 1024;

export const MASTER_KEY_WARNING =
  'Generated a new master key. Back this file up somewhere safe and separate from the database: without it, stored provider credentials cannot be decrypted. Or set TOOLGATE_MASTER_KEY.';

/** What both the server and the CLI open on the data dir: the migrated store and the keyring. */
export async function openCore(
  config: Config,
): Promise<{ store: Store; keyring: Keyring; masterKeyFile?: string }> {
  const store = openStore(config.databaseUrl);
  await store.migrate();
  await recoverRotation(config, store, () => loadMasterKey(config).key);
  const master = loadMasterKey(config);
  // A key kept in the data dir is re-read when an envelope names another one (a rotation by the CLI).
  const keyring = new Keyring(
    master.key,
    config.masterKey === undefined ? () => loadMasterKey(config).key : undefined,
  );
  return master.generatedAt ? { store, keyring, masterKeyFile: master.generatedAt } : { store, keyring };
}

/**
 * The composition root: settings -> master key -> store -> catalog -> services -> HTTP app.
 * Everything a running gateway holds is created here, in dependency order, and closed by
 * `close()` in reverse.
 */
export class Gateway {
  readonly app: FastifyInstance;
  readonly keys: KeyService;
  readonly hub = new StreamHub();
  readonly sessions = new MemorySessionStore();
  /** The one outbound HTTP client: provider calls, report and event webhooks. */
  readonly outbound: OutboundClient;
  readonly connections: ConnectionService;
  readonly catalog: CatalogHolder;
  readonly oauthApps: OAuthApps;
  readonly oauth: OAuthFlows;
  /** What operators do, through the admin API and the dashboard alike. */
  readonly operations: AdminOperations;
  private readonly modern: ModernLeg;
  private readonly timers: NodeJS.Timeout[] = [];
  private lastSweep = new Date().toISOString();
  private closing: Promise<void> | undefined;

  private constructor(
    readonly config: Config,
    readonly store: Store,
    keyring: Keyring,
    options: GatewayOptions,
  ) {
    this.keys = new KeyService(store, keyring);
    this.app = createApp({
      logLevel: config.logLevel,
      ...(options.logStream ? { logStream: options.logStream } : {}),
    });
    const log = this.app.log;
    const plugins = new PluginRegistry();
    for (const plugin of options.plugins ?? []) plugins.register(plugin);
    this.catalog = new CatalogHolder({ dir: config.manifestsDir, registry: plugins });
    this.outbound = new OutboundClient({
      allowPrivateNetwork: config.allowPrivateNetwork,
      timeoutMs: OUTBOUND_TIMEOUT_MS,
      maxResponseBytes: OUTBOUND_MAX_BYTES,
      maxRedirects: 5,
      // Webhooks the operator configured are trusted to live on the operator's own network.
      trustedOrigins: [config.reportWebhookUrl, config.eventsWebhookUrl].filter(
        (u): u is string => u !== undefined,
      ),
    });
    const executor = new Executor({ outbound: this.outbound, plugins, config, log });
    this.connections = new ConnectionService({ store, vault: new Vault(keyring), executor, plugins, config });
    this.connections.on('changed', (scope) => this.notifyToolsChanged(scopeKey(scope)));
    this.oauthApps = new OAuthApps(store, keyring, config);
    const eventsUrl = config.eventsWebhookUrl;
    this.oauth = new OAuthFlows({
      store,
      keyring,
      apps: this.oauthApps,
      connections: this.connections,
      executor,
      plugins,
      catalog: this.catalog,
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

    const catalog = this.catalog;
    const tools = new ToolService({
      catalog,
      systemTools: createSystemTools({
        catalog,
        store,
        connections: this.connections,
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
      visibleProviders: (caller, snapshot) => visibleProviders(this.connections, caller.scope, snapshot),
      runProviderTool: providerToolRunner(this.connections, executor, this.oauth),
    });
    const onError = (error: unknown): void =>
      log.error({ err: error, code: 'TG_ERR_INTERNAL' }, 'MCP handling failed');
    const legacy = { sessions: this.sessions, tools, hub: this.hub, onError };
    this.modern = new ModernLeg({ tools, hub: this.hub, onError });
    const guardHost = hostGuard(config.baseUrl, config.allowedHosts);
    mcpRoutes(this.app, {
      authenticate: (request) => authenticate(request, this.keys),
      guardHost,
      modern: this.modern,
      streamable: new StreamableLeg(legacy),
      legacySse: new LegacySseLeg({
        ...legacy,
        basePath: new URL(config.baseUrl).pathname.replace(/\/+$/, ''),
      }),
    });
    connectPageRoutes(this.app, { catalog, connections: this.connections });
    oauthRoutes(this.app, this.oauth);
    healthRoutes(this.app, { store, catalog });
    this.operations = new AdminOperations(this);
    adminRoutes(this.app, config, this.operations);
    dashboardRoutes(this.app, { config, store, ops: this.operations, guardHost });

    catalog.on('changed', (providers) => void this.notifyProvidersChanged(providers));
    catalog.on('reloaded', (report) => this.logReload(report, 'watcher'));
    catalog.on('error', (error) =>
      log.error({ err: error, code: 'TG_CATALOG_RELOAD_FAILED' }, 'catalog reload failed'),
    );
  }

  /** Opens the store (migrating it), loads the catalog and builds the gateway; `listen()` starts serving. */
  static async create(options: GatewayOptions): Promise<Gateway> {
    const core = await openCore(options.config);
    const gateway = new Gateway(options.config, core.store, core.keyring, options);
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
    this.logReload(report, 'request');
    return report;
  }

  private logReload(report: CatalogReport, trigger: string): void {
    const log = this.app.log;
    const { version, added, changed, removed, keptOld, failed } = report;
    log.info(
      { code: 'TG_CATALOG_LOADED', trigger, version, added, changed, removed, keptOld, failed },
      'catalog loaded',
    );
    for (const [provider, findings] of Object.entries(report.findings)) {
      const errors = findings.filter((f) => f.severity === 'error');
      if (errors.length > 0) {
        log.error(
          { code: 'TG_CATALOG_PROVIDER_FAILED', provider, findings: formatFindings(errors) },
          `provider ${provider} failed to load`,
        );
      }
    }
  }

  /**
   * What the first-start banner shows (printed to stdout by the CLI, never through the logger). On
   * an empty data dir, once: the default client's solo key. Whenever no dashboard password is set
   * yet (first start, or the first start of a version with the dashboard): a generated one, stored
   * only as its scrypt hash.
   */
  async bootstrap(): Promise<{ key?: string; adminPassword?: string }> {
    const out: { key?: string; adminPassword?: string } = {};
    if (
      (await this.store.meta.setOnce('bootstrapped_at', new Date().toISOString())) &&
      (await this.store.keys.list()).length === 0
    ) {
      out.key = (await this.keys.create('default', 'solo')).key;
    }
    if ((await this.store.dashboard.getPasswordHash()) === undefined) {
      const password = generatePassword();
      // Only if still unset: another process may have set one meanwhile.
      if (await this.store.dashboard.setPasswordHash(await hashPassword(password), { onlyIfUnset: true }))
        out.adminPassword = password;
    }
    return out;
  }

  async listen(): Promise<string> {
    await this.app.listen({ host: this.config.host, port: this.config.port });
    this.catalog.start();
    this.timers.push(
      setInterval(() => void this.sweepRevoked(), REVOCATION_SWEEP_MS),
      setInterval(() => this.hub.keepAlive(), KEEP_ALIVE_MS),
      setInterval(() => void this.housekeeping(), HOUSEKEEPING_MS),
      setInterval(() => void this.refreshExpiring(), this.config.refreshSweepMs),
    );
    void this.refreshExpiring();
    for (const timer of this.timers) timer.unref();
    const address = this.app.server.address();
    if (address === null || typeof address === 'string') return String(address);
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    return `http://${host}:${address.port}`;
  }

  /** Tells one scope's open streams and listen subscriptions that its tool list changed. */
  notifyToolsChanged(key: string): void {
    this.hub.sendToScope(key, TOOLS_LIST_CHANGED);
    this.modern.toolsChanged(key);
  }

  /** After a reload: tells each listening scope that sees one of the changed providers. */
  private async notifyProvidersChanged(providers: ReadonlySet<string>): Promise<void> {
    for (const scope of this.hub.scopes()) {
      if (await this.sees(scope, providers)) this.notifyToolsChanged(scopeKey(scope));
    }
  }

  private async sees(scope: Scope, providers: ReadonlySet<string>): Promise<boolean> {
    const connected = new Set((await this.connections.list(scope)).map((c) => c.provider));
    for (const id of providers) {
      const entry = this.catalog.current.providers.get(id);
      // A removed provider may have been visible to everyone (auth none): telling too many is harmless.
      if (connected.has(id) || !entry || entry.auth.kind === 'none') return true;
    }
    return false;
  }

  /** Closes every stream opened with this key (in-process revocation; the sweep covers the CLI). */
  async revokeKey(id: string): Promise<boolean> {
    const revoked = await this.keys.revoke(id);
    this.hub.closeWhere((s) => s.keyId === id);
    return revoked;
  }

  /** Cuts off streams whose key was revoked since the last sweep, by any process. */
  private async sweepRevoked(): Promise<void> {
    if (this.hub.size === 0) return;
    const started = new Date();
    // Overlap the window a little: a revocation committed during the last sweep is not missed.
    const since = new Date(Date.parse(this.lastSweep) - 5_000).toISOString();
    try {
      const revoked = new Set(await this.store.keys.revokedSince(since));
      if (revoked.size > 0) this.hub.closeWhere((s) => revoked.has(s.keyId));
      this.lastSweep = started.toISOString();
    } catch (error) {
      this.app.log.warn({ err: error, code: 'TG_REVOCATION_SWEEP_FAILED' }, 'revocation sweep failed');
    }
  }

  /**
   * The refresh scheduler: tokens expiring within the margin are refreshed ahead of any call. The
   * expiry is in the store, so a restart loses nothing; a per-connection jitter spreads the work.
   */
  private async refreshExpiring(): Promise<void> {
    const now = Date.now();
    try {
      const due = await this.store.connections.listExpiring(
        new Date(now + this.config.refreshMarginMs + 60_000).toISOString(),
      );
      for (const { scope, provider: id, expiresAt } of due) {
        const provider = this.catalog.current.providers.get(id);
        const jitter =
          parseInt(
            createHash('sha256')
              .update(`${scopeKey(scope)}|${id}`)
              .digest('hex')
              .slice(0, 8),
            16,
          ) % 60_000;
        if (
          !provider ||
          provider.auth.kind !== 'oauth2' ||
          Date.parse(expiresAt) > now + this.config.refreshMarginMs + jitter
        )
          continue;
        await this.oauth
          .refresh(scope, provider, undefined)
          .catch((error: unknown) =>
            this.app.log.info(
              { code: 'TG_OAUTH_SCHEDULED_REFRESH_FAILED', provider: id, reason: (error as Error).message },
              'scheduled refresh failed',
            ),
          );
      }
    } catch (error) {
      this.app.log.warn({ err: error, code: 'TG_REFRESH_SWEEP_FAILED' }, 'refresh sweep failed');
    }
  }

  /** Expires idle sessions (those without an open stream) and purges expired one-time links. */
  private async housekeeping(): Promise<void> {
    try {
      const open = this.hub.sessionIds();
      for (const id of await this.sessions.idleSince(Date.now() - SESSION_IDLE_MS)) {
        if (!open.has(id)) await this.sessions.delete(id);
      }
      await this.connections.purgeExpiredLinks();
    } catch (error) {
      this.app.log.warn({ err: error, code: 'TG_HOUSEKEEPING_FAILED' }, 'housekeeping failed');
    }
  }

  /**
   * Graceful shutdown: stop accepting, close event streams, let in-flight calls finish (bounded by
   * TOOLGATE_SHUTDOWN_GRACE_MS), then close the store.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const timer of this.timers) clearInterval(timer);
      this.catalog.stop();
      this.hub.closeWhere(() => true);
      const grace = setTimeout(() => this.app.server.closeAllConnections(), this.config.shutdownGraceMs);
      try {
        await this.app.close();
      } finally {
        clearTimeout(grace);
      }
      await this.modern.close();
      await this.outbound.close();
      await this.store.close();
    })();
    return this.closing;
  }
}
