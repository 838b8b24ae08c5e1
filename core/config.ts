import { resolve } from 'node:path';

/**
 * Every setting of the gateway, read once from the environment (TOOLGATE_*) and validated.
 * Provider settings (TOOLGATE_PROVIDER_<ID>_*) are read on demand through `providerSetting`,
 * because the set of providers is only known once the catalog is loaded.
 */
export interface Config {
  host: string;
  port: number;
  /** Public URL used in links and client configs, without a trailing slash. */
  baseUrl: string;
  dataDir: string;
  manifestsDir: string;
  /** Base64 of 32 bytes, or undefined to use (or create) `<dataDir>/master.key`. */
  masterKey: string | undefined;
  /**
   * The admin API's token, the same for every process of a deployment; undefined to use (or
   * create) `<dataDir>/admin.token`.
   */
  adminToken: string | undefined;
  /** `sqlite:<path>` (defaults to `<dataDir>/toolgate.db`) or `postgres://…` / `postgresql://…`. */
  databaseUrl: string;
  /** `redis://…` or `rediss://…`: coordination across processes (locks, bus, sessions); undefined: one process. */
  redisUrl: string | undefined;
  /** Prefix of every Redis key and channel, so deployments can share a server. */
  redisPrefix: string;
  /** Extra Host header values accepted on /mcp/ (DNS-rebinding protection), lower-cased. */
  allowedHosts: string[];
  /** Lets the outbound client reach loopback and private addresses (tests, local mocks). */
  allowPrivateNetwork: boolean;
  reportWebhookUrl: string | undefined;
  /** Receives operator events such as `connection.reapproval_needed` (never secrets). */
  eventsWebhookUrl: string | undefined;
  /** How often the refresh scheduler looks for expiring OAuth2 tokens. */
  refreshSweepMs: number;
  /** Tokens expiring within this margin (plus a per-connection jitter) are refreshed ahead. */
  refreshMarginMs: number;
  logLevel: string;
  /** Upper bound on waiting for in-flight calls at shutdown. */
  shutdownGraceMs: number;
  /** Dashboard sign-in: failures are counted over this window, and a locked source waits it out. */
  signInWindowMs: number;
  /**
   * Callers that do not choose a tool list (`tools=`) get the compact one once their scope sees
   * more provider tools than this (issue 15). 40: tool choice degrades past 30-50 tools in
   * published evaluations, Cursor serves at most 40, OpenAI's API refuses more than 128.
   */
  compactThreshold: number;
  /**
   * Serves `/metrics` on this port of TOOLGATE_HOST, without a token (reach it only from the
   * monitoring network); undefined: `/metrics` on the main port, with the admin token only.
   */
  metricsPort: number | undefined;
  /** Records tool calls and connection events in the audit trail (TOOLGATE_AUDIT, on by default). */
  audit: boolean;
  /** Audit entries older than this many days are deleted by the housekeeping job. */
  auditDays: number;
  /**
   * Longest an audit entry waits in memory before it is written (TOOLGATE_AUDIT_FLUSH_MS): what a
   * process killed outright may lose.
   */
  auditFlushMs: number;
  /** Limits of each manifest's build in a catalog build worker (core/catalog/build-pool.ts). */
  catalogBuild: CatalogBuildLimits;
  /**
   * Deadline of one request to an upstream MCP server (initialize, a page of tools/list, a
   * tools/call); a whole listing gets twice it (TOOLGATE_MCP_TIMEOUT_MS).
   */
  mcpTimeoutMs: number;
  env: NodeJS.ProcessEnv;
}

/** A manifest's build is stopped, and fails with a finding, past either limit. */
export interface CatalogBuildLimits {
  /** Wall time of one manifest's build (TOOLGATE_CATALOG_BUILD_TIMEOUT_MS). */
  timeoutMs: number;
  /** Heap (V8 old generation) of the worker building it (TOOLGATE_CATALOG_BUILD_MEMORY_MB). */
  memoryMb: number;
}

/**
 * GitHub's full description (1,221 tools) builds in ~2 s on a quiet machine, ~11 s under heavy
 * load, with a heap under 200 MB: both defaults leave it several times that room.
 */
export const CATALOG_BUILD_DEFAULTS: CatalogBuildLimits = { timeoutMs: 60_000, memoryMb: 1_024 };

export class ConfigError extends Error {
  override name = 'ConfigError';
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function url(name: string, raw: string): string {
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be an absolute http(s) URL, got "${raw}"`);
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
    throw new ConfigError(`${name} must use http or https, got "${parsed.protocol}"`);
  }
  return raw.replace(/\/+$/, '');
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback = false): boolean {
  const raw = (env[name] ?? '').toLowerCase();
  if (raw === '') return fallback;
  if (raw === '0' || raw === 'false' || raw === 'no' || raw === 'off') return false;
  if (raw === '1' || raw === 'true' || raw === 'yes' || raw === 'on') return true;
  throw new ConfigError(`${name} must be 1 or 0 (on or off), got "${env[name]}"`);
}

/** Reads and validates every TOOLGATE_* setting; throws ConfigError naming the bad one. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = integer(env, 'TOOLGATE_PORT', 8080, 0, 65535);
  const dataDir = resolve(env.TOOLGATE_DATA_DIR || './data');
  const baseUrl = url('TOOLGATE_BASE_URL', env.TOOLGATE_BASE_URL || `http://localhost:${port}`);
  const databaseUrl = env.TOOLGATE_DATABASE_URL || `sqlite:${resolve(dataDir, 'toolgate.db')}`;
  if (!/^(sqlite:|postgres:\/\/|postgresql:\/\/)/.test(databaseUrl)) {
    throw new ConfigError('TOOLGATE_DATABASE_URL must be sqlite:<path> or a postgres:// (postgresql://) URL');
  }
  const redisUrl = env.TOOLGATE_REDIS_URL || undefined;
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl))
    throw new ConfigError('TOOLGATE_REDIS_URL must be a redis:// or rediss:// URL');
  // Several processes share a PostgreSQL store; without Redis each would refresh tokens, keep
  // sessions and hear notifications on its own (lost grants, unknown sessions). Refuse, saying why.
  if (!databaseUrl.startsWith('sqlite:') && redisUrl === undefined)
    throw new ConfigError(
      'TOOLGATE_DATABASE_URL names PostgreSQL, which several gateway processes share; set TOOLGATE_REDIS_URL too (redis://host:6379), so they share locks, sessions and notifications. One process needs neither: leave both unset for the embedded SQLite store.',
    );
  const reportWebhookUrl = env.TOOLGATE_REPORT_WEBHOOK_URL
    ? url('TOOLGATE_REPORT_WEBHOOK_URL', env.TOOLGATE_REPORT_WEBHOOK_URL)
    : undefined;
  const eventsWebhookUrl = env.TOOLGATE_EVENTS_WEBHOOK_URL
    ? url('TOOLGATE_EVENTS_WEBHOOK_URL', env.TOOLGATE_EVENTS_WEBHOOK_URL)
    : undefined;
  const adminToken = env.TOOLGATE_ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && !/^[A-Za-z0-9._~+/=-]{32,}$/.test(adminToken))
    throw new ConfigError(
      'TOOLGATE_ADMIN_TOKEN must be at least 32 characters without spaces (for example: openssl rand -base64 32)',
    );
  const metricsPort = env.TOOLGATE_METRICS_PORT
    ? integer(env, 'TOOLGATE_METRICS_PORT', 0, 0, 65535)
    : undefined;
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === port)
    throw new ConfigError(
      'TOOLGATE_METRICS_PORT must differ from TOOLGATE_PORT: it serves /metrics apart from the main port; unset it to serve /metrics on the main port with the admin token.',
    );
  return {
    host: env.TOOLGATE_HOST || '127.0.0.1',
    port,
    baseUrl,
    dataDir,
    manifestsDir: resolve(env.TOOLGATE_MANIFESTS_DIR || './manifests'),
    masterKey: env.TOOLGATE_MASTER_KEY || undefined,
    adminToken,
    databaseUrl,
    redisUrl,
    redisPrefix: env.TOOLGATE_REDIS_PREFIX || 'toolgate:',
    allowedHosts: (env.TOOLGATE_ALLOWED_HOSTS ?? '')
      .split(',')
      .map((h) => h.trim().toLowerCase())
      .filter(Boolean),
    allowPrivateNetwork: flag(env, 'TOOLGATE_ALLOW_PRIVATE_NETWORK'),
    reportWebhookUrl,
    eventsWebhookUrl,
    refreshSweepMs: integer(env, 'TOOLGATE_REFRESH_SWEEP_MS', 30_000, 100, 3_600_000),
    refreshMarginMs: integer(env, 'TOOLGATE_REFRESH_MARGIN_MS', 300_000, 0, 86_400_000),
    logLevel: env.TOOLGATE_LOG_LEVEL || 'info',
    shutdownGraceMs: integer(env, 'TOOLGATE_SHUTDOWN_GRACE_MS', 10_000, 0, 600_000),
    signInWindowMs: integer(env, 'TOOLGATE_SIGNIN_WINDOW_SECONDS', 900, 1, 86_400) * 1_000,
    compactThreshold: integer(env, 'TOOLGATE_COMPACT_THRESHOLD', 40, 0, 100_000),
    metricsPort,
    audit: flag(env, 'TOOLGATE_AUDIT', true),
    auditDays: integer(env, 'TOOLGATE_AUDIT_DAYS', 30, 1, 3_650),
    auditFlushMs: integer(env, 'TOOLGATE_AUDIT_FLUSH_MS', 1_000, 100, 60_000),
    catalogBuild: {
      timeoutMs: integer(
        env,
        'TOOLGATE_CATALOG_BUILD_TIMEOUT_MS',
        CATALOG_BUILD_DEFAULTS.timeoutMs,
        100,
        3_600_000,
      ),
      memoryMb: integer(env, 'TOOLGATE_CATALOG_BUILD_MEMORY_MB', CATALOG_BUILD_DEFAULTS.memoryMb, 32, 65_536),
    },
    mcpTimeoutMs: integer(env, 'TOOLGATE_MCP_TIMEOUT_MS', 30_000, 100, 600_000),
    env,
  };
}

/** `slack-webhook` + `BASE_URL` -> TOOLGATE_PROVIDER_SLACK_WEBHOOK_BASE_URL. */
export function providerSettingName(providerId: string, name: string): string {
  return `TOOLGATE_PROVIDER_${providerId.replace(/-/g, '_').toUpperCase()}_${name}`;
}

/** `slack-webhook` + `BASE_URL` -> value of TOOLGATE_PROVIDER_SLACK_WEBHOOK_BASE_URL. */
export function providerSetting(config: Config, providerId: string, name: string): string | undefined {
  const value = config.env[providerSettingName(providerId, name)];
  return value === undefined || value === '' ? undefined : value;
}
