import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import type { CatalogSnapshot } from './catalog/types.js';
import type { Config } from './config.js';
import type { OAuthFlows } from './connections/oauth/index.js';
import type { ConnectionService } from './connections/service.js';
import type { Bus } from './coordination/bus.js';
import type { Lock } from './coordination/lock.js';
import type { ProcessDirectory, ProcessRecord } from './coordination/processes.js';
import type { SessionStore } from './coordination/sessions.js';
import { scopeKey } from './domain.js';
import type { StreamHub } from './mcp/streams.js';
import type { Store } from './store/types.js';

/**
 * A background job of the running gateway. A `cluster` job does work for the whole deployment
 * (refreshing tokens, finding revocations, purging expired rows): it runs under a named Lock, so
 * with several processes one runs each tick. A local job serves this process's own streams.
 */
export interface Job {
  name: string;
  everyMs: number;
  cluster: boolean;
  /** Also run once at start (the refresh scheduler catches up after a restart). */
  atStart?: boolean;
  /** The log code of a failed run. */
  failureCode: string;
  run(): Promise<void>;
}

/** How long a cluster job's lock outlives a holder that died mid-run (a live holder extends it). */
const JOB_LOCK_TTL_MS = 30_000;

/** Runs jobs on their timers until `stop()`; a run still going when its next tick comes is skipped. */
export class Jobs {
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly running = new Set<string>();

  constructor(private readonly deps: { lock: Lock; log: FastifyBaseLogger }) {}

  start(jobs: readonly Job[]): void {
    for (const job of jobs) {
      const timer = setInterval(() => void this.tick(job), job.everyMs);
      timer.unref();
      this.timers.push(timer);
      if (job.atStart) void this.tick(job);
    }
  }

  /** One run of a job now (under its lock when it is a cluster job); failures are logged, never thrown. */
  async tick(job: Job): Promise<void> {
    if (this.running.has(job.name)) return;
    this.running.add(job.name);
    try {
      if (job.cluster) await this.deps.lock.tryWith(`job:${job.name}`, JOB_LOCK_TTL_MS, () => job.run());
      else await job.run();
    } catch (error) {
      this.deps.log.warn({ err: error, code: job.failureCode, job: job.name }, `${job.name} failed`);
    } finally {
      this.running.delete(job.name);
    }
  }

  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers.length = 0;
  }
}

/** A process is listed (see /readyz) while it announces itself within the ttl. */
const ANNOUNCE_MS = 5_000;
const ANNOUNCE_TTL_MS = 15_000;

/** Short enough that revocation cuts an open stream within ~1 s. */
const REVOCATION_SWEEP_MS = 1_000;
const KEEP_ALIVE_MS = 15_000;
const HOUSEKEEPING_MS = 60_000;
const SESSION_IDLE_MS = 60 * 60_000;
/** Well within SESSION_IDLE_MS: a session with an open stream is touched many times before it could expire. */
const SESSION_TOUCH_MS = 5 * 60_000;

/**
 * Publishes `key.revoked` for keys revoked since the last sweep by anyone (the CLI writes the store
 * only), so every process cuts off their open streams within a second.
 */
export function revocationSweep(deps: { store: Store; bus: Bus }): Job {
  let lastSweep = new Date().toISOString();
  return {
    name: 'revocation-sweep',
    everyMs: REVOCATION_SWEEP_MS,
    cluster: true,
    failureCode: 'TG_REVOCATION_SWEEP_FAILED',
    async run() {
      const started = new Date();
      // Overlap the window a little: a revocation committed during the last sweep is not missed.
      const since = new Date(Date.parse(lastSweep) - 5_000).toISOString();
      for (const keyId of await deps.store.keys.revokedSince(since))
        await deps.bus.publish({ type: 'key.revoked', keyId });
      lastSweep = started.toISOString();
    },
  };
}

/**
 * The refresh scheduler: tokens expiring within the margin are refreshed ahead of any call. The
 * expiry is in the store, so a restart loses nothing; a per-connection jitter spreads the work.
 */
export function refreshScheduler(deps: {
  store: Store;
  catalog: { readonly current: CatalogSnapshot };
  oauth: OAuthFlows;
  config: Config;
  log: FastifyBaseLogger;
}): Job {
  const margin = deps.config.refreshMarginMs;
  return {
    name: 'refresh-scheduler',
    everyMs: deps.config.refreshSweepMs,
    cluster: true,
    atStart: true,
    failureCode: 'TG_REFRESH_SWEEP_FAILED',
    async run() {
      const now = Date.now();
      const due = await deps.store.connections.listExpiring(new Date(now + margin + 60_000).toISOString());
      for (const { scope, provider: id, expiresAt } of due) {
        const provider = deps.catalog.current.providers.get(id);
        const jitter =
          parseInt(
            createHash('sha256')
              .update(`${scopeKey(scope)}|${id}`)
              .digest('hex')
              .slice(0, 8),
            16,
          ) % 60_000;
        if (!provider || provider.auth.kind !== 'oauth2' || Date.parse(expiresAt) > now + margin + jitter)
          continue;
        await deps.oauth.tokens
          .refresh(scope, provider, undefined)
          .catch((error: unknown) =>
            deps.log.info(
              { code: 'TG_OAUTH_SCHEDULED_REFRESH_FAILED', provider: id, reason: (error as Error).message },
              'scheduled refresh failed',
            ),
          );
      }
    },
  };
}

/** Purges expired one-time links (every process's links live in the store). */
export function linkPurge(deps: { connections: ConnectionService; store: Store }): Job {
  return {
    name: 'link-purge',
    everyMs: HOUSEKEEPING_MS,
    cluster: true,
    failureCode: 'TG_HOUSEKEEPING_FAILED',
    async run() {
      await deps.connections.purgeExpiredLinks();
      // The front door's expired codes, tokens, interactions and unused registrations.
      await deps.store.frontDoor.purgeExpired(new Date().toISOString());
    },
  };
}

const DAY_MS = 86_400_000;

/** Deletes audit entries older than TOOLGATE_AUDIT_DAYS (run at start too: a restart catches up). */
export function auditRetention(deps: { store: Store; config: Config }): Job {
  return {
    name: 'audit-retention',
    everyMs: HOUSEKEEPING_MS,
    cluster: true,
    atStart: true,
    failureCode: 'TG_HOUSEKEEPING_FAILED',
    async run() {
      await deps.store.audit.purge(new Date(Date.now() - deps.config.auditDays * DAY_MS).toISOString());
    },
  };
}

/**
 * The session jobs. Local, every process: keep-alives on its streams, and a touch of each session
 * whose stream it holds, so that a session with an open stream never looks idle to any process.
 * Cluster: expiry of sessions idle (no request, no open stream) for an hour.
 */
export function sessionJobs(deps: { sessions: SessionStore; hub: StreamHub }): Job[] {
  return [
    {
      name: 'session-touch',
      everyMs: SESSION_TOUCH_MS,
      cluster: false,
      failureCode: 'TG_HOUSEKEEPING_FAILED',
      async run() {
        const now = Date.now();
        for (const id of deps.hub.sessionIds()) await deps.sessions.update(id, { lastSeenAt: now });
      },
    },
    {
      name: 'session-expiry',
      everyMs: HOUSEKEEPING_MS,
      cluster: true,
      failureCode: 'TG_HOUSEKEEPING_FAILED',
      async run() {
        for (const id of await deps.sessions.idleSince(Date.now() - SESSION_IDLE_MS))
          await deps.sessions.delete(id);
      },
    },
    {
      name: 'keep-alive',
      everyMs: KEEP_ALIVE_MS,
      cluster: false,
      failureCode: 'TG_HOUSEKEEPING_FAILED',
      run() {
        deps.hub.keepAlive();
        return Promise.resolve();
      },
    },
  ];
}

/** Keeps this process, and the catalog it serves, in the deployment's process directory. */
export function processAnnouncement(deps: { processes: ProcessDirectory; record: () => ProcessRecord }): Job {
  return {
    name: 'process-announce',
    everyMs: ANNOUNCE_MS,
    cluster: false,
    atStart: true,
    failureCode: 'TG_HOUSEKEEPING_FAILED',
    run: () => deps.processes.announce(deps.record(), ANNOUNCE_TTL_MS),
  };
}
