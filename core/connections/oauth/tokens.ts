import { AuthorizationCode } from 'simple-oauth2';
import type { ProviderEntry } from '../../catalog/types.js';
import { LockTimeoutError, type Lease } from '../../coordination/lock.js';
import { scopeKey, type Scope } from '../../domain.js';
import type { ConnectionRecord } from '../../store/types.js';
import type { ProviderAccess } from '../../upstream/provider-client.js';
import { oauthEndpoints, type ResolvedApp } from '../oauth-apps.js';
import {
  authorizationClient,
  clientCredentials,
  expiryOf,
  ReapprovalNeededError,
  resourceParams,
  TemporaryRefreshError,
  tokenAuthMethod,
  tokenCredentials,
  tokenHttp,
  tokenFailure,
  type OAuthDeps,
} from './client.js';

/**
 * Refresh this long before expiry at call time (the scheduler uses a wider margin), or half the
 * token's lifetime when that is shorter: a provider whose tokens live a minute or less would
 * otherwise have every call refresh, and every process waiting on a refresh refresh again.
 */
const CALL_MARGIN_MS = 60_000;
/** Transient refresh failures are retried after these pauses. */
const RETRY_DELAYS_MS = [250, 1_000];

/** How long a refresh holds its connection's lock (extended while it runs), and how long others wait for it. */
const REFRESH_LOCK_TTL_MS = 20_000;
const REFRESH_WAIT_MS = 30_000;
/** Under the lock, the connection is read from the database: what the previous holder stored. */
const FRESH = { fresh: true };

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * The token lifecycle of OAuth2 connections: fresh credentials for a call, refresh (single-flight
 * per connection, rotation honoured with a compare-and-set, transient failures retried, definitive
 * ones moving the connection to re-approval needed), and revocation on disconnect.
 */
export class OAuthTokens {
  private readonly inflight = new Map<string, Promise<ProviderAccess>>();

  constructor(private readonly deps: OAuthDeps) {}

  /**
   * The credentials to call with: refreshed first when the token expires soon (within a minute,
   * or half its lifetime). The returned access can renew itself once, for a provider's 401 on a
   * token that looked valid.
   */
  async fresh(
    scope: Scope,
    provider: ProviderEntry,
    record: ConnectionRecord,
    access: ProviderAccess,
  ): Promise<ProviderAccess> {
    const current = this.expiresSoon(record)
      ? await this.refresh(scope, provider, record.credentials)
      : access;
    // A 401 on a token that looked valid: refresh once, unless someone else did since this call began.
    return { ...current, renew: () => this.refresh(scope, provider, record.credentials) };
  }

  /**
   * Refreshes a connection's token. Single-flight: concurrent callers for one connection share one
   * token request. `seen` is the sealed credential the caller holds: if the stored one differs,
   * another call (or process) refreshed already and its result is used.
   */
  refresh(scope: Scope, provider: ProviderEntry, seen: string | undefined): Promise<ProviderAccess> {
    const key = `${scopeKey(scope)}\u0000${provider.id}`;
    let running = this.inflight.get(key);
    if (!running) {
      running = this.refreshLocked(scope, provider, seen).finally(() => this.inflight.delete(key));
      this.inflight.set(key, running);
    }
    return running;
  }

  /**
   * One refresh per connection across every process: the refresh runs under the connection's lock,
   * and a caller that waited for it re-reads the connection first, so it uses what the holder
   * stored instead of sending the rotated-away refresh token again (which a provider with reuse
   * detection answers by revoking the grant).
   */
  private async refreshLocked(
    scope: Scope,
    provider: ProviderEntry,
    seen: string | undefined,
  ): Promise<ProviderAccess> {
    try {
      return await this.deps.lock.with(
        `refresh:${scopeKey(scope)}:${provider.id}`,
        REFRESH_LOCK_TTL_MS,
        REFRESH_WAIT_MS,
        (lease) => this.refreshNow(scope, provider, seen, lease),
      );
    } catch (error) {
      if (error instanceof LockTimeoutError)
        throw new TemporaryRefreshError('another process is still renewing this connection');
      throw error;
    }
  }

  private async refreshNow(
    scope: Scope,
    provider: ProviderEntry,
    seen: string | undefined,
    lease: Lease,
  ): Promise<ProviderAccess> {
    const found = await this.deps.connections.access(scope, provider.id, FRESH);
    if (!found) throw new ReapprovalNeededError(`${provider.displayName} is not connected.`);
    const { record, access } = found;
    if (record.state === 'reapproval_needed')
      throw new ReapprovalNeededError(`The ${provider.displayName} connection must be re-approved.`);
    if (seen !== undefined && record.credentials !== seen && !this.expiresSoon(record)) return access;
    const refreshToken = access.credentials.refresh_token;
    const app =
      record.oauthApp !== null ? await this.deps.apps.byId(record.oauthApp, provider.id) : undefined;
    if (!refreshToken || !app) {
      this.deps.telemetry.metrics.oauthRefresh(provider.id, 'reapproval_needed');
      await this.markReapproval(
        scope,
        provider,
        refreshToken ? 'the OAuth app that minted the token is gone' : 'no refresh token',
      );
      throw new ReapprovalNeededError(`The ${provider.displayName} connection must be re-approved.`);
    }
    let values: Record<string, unknown>;
    try {
      values = await this.refreshWithRetry(provider, app, refreshToken);
    } catch (error) {
      const failure = tokenFailure(error);
      if (!failure.definitive) {
        this.deps.telemetry.metrics.oauthRefresh(provider.id, 'temporary_error');
        this.deps.log.warn(
          { code: 'TG_OAUTH_REFRESH_TEMPORARY', provider: provider.id, reason: failure.description },
          'token refresh failed for now',
        );
        throw new TemporaryRefreshError(failure.description);
      }
      // Another process may have refreshed (and rotated) the token meanwhile: read before concluding.
      const again = await this.deps.connections.access(scope, provider.id, FRESH);
      if (again && again.record.credentials !== record.credentials && again.record.state === 'connected')
        return again.access;
      this.deps.telemetry.metrics.oauthRefresh(provider.id, 'reapproval_needed');
      await this.markReapproval(scope, provider, failure.description);
      throw new ReapprovalNeededError(`The ${provider.displayName} connection must be re-approved.`);
    }
    const credentials = tokenCredentials(values, refreshToken);
    this.deps.telemetry.metrics.oauthRefresh(provider.id, credentials ? 'ok' : 'temporary_error');
    if (!credentials) throw new TemporaryRefreshError('the token response carried no access token');
    const next: ProviderAccess = { credentials, fields: record.fields };
    // The lock can lapse under a holder that stalled past its ttl. Storing is still right: the
    // compare-and-set below is the fence (it stores only over the credentials this refresh read),
    // and the provider has already rotated the refresh token this one holds. The operator hears of it.
    if (!(await lease.held().catch(() => false)))
      this.deps.log.warn(
        { code: 'TG_OAUTH_REFRESH_LOCK_LOST', provider: provider.id, fence: lease.fence },
        'token refresh outlived its lock',
      );
    // Compare-and-set: the rotated refresh token is stored before anyone can use the old one again.
    const stored = await this.deps.connections.swapCredentials(
      scope,
      provider.id,
      record,
      credentials,
      expiryOf(values),
    );
    if (!stored) {
      const winner = await this.deps.connections.access(scope, provider.id, FRESH);
      if (winner) return winner.access;
    }
    return next;
  }

  /** Whether the token expires within the call margin (see CALL_MARGIN_MS). */
  private expiresSoon(record: ConnectionRecord): boolean {
    if (record.expiresAt === null) return false;
    const expiresAt = Date.parse(record.expiresAt);
    // The credentials were stored (updatedAt) when the token was issued: its lifetime is the gap.
    const lifetime = expiresAt - Date.parse(record.updatedAt);
    const margin = Number.isFinite(lifetime)
      ? Math.min(CALL_MARGIN_MS, Math.max(0, lifetime / 2))
      : CALL_MARGIN_MS;
    return expiresAt - Date.now() < margin;
  }

  private async refreshWithRetry(
    provider: ProviderEntry,
    app: ResolvedApp,
    refreshToken: string,
  ): Promise<Record<string, unknown>> {
    const auth = provider.spec.auth;
    const extra = { ...(auth.kind === 'oauth2' ? (auth.token_params ?? {}) : {}), ...resourceParams(app) };
    for (let attempt = 0; ; attempt++) {
      try {
        const client = authorizationClient(provider, app, this.deps);
        const refreshed = await client.createToken({ refresh_token: refreshToken }).refresh(extra);
        return refreshed.token;
      } catch (error) {
        const failure = tokenFailure(error);
        // A registered client the authorization server no longer knows: the next link registers anew.
        if (failure.code === 'invalid_client') await this.deps.apps.forget(app);
        const delay = RETRY_DELAYS_MS[attempt];
        if (failure.definitive || delay === undefined) throw error;
        await wait(delay);
      }
    }
  }

  /** Moves a connection to re-approval needed, and tells the operator (log, events webhook). */
  private async markReapproval(scope: Scope, provider: ProviderEntry, reason: string): Promise<void> {
    if (!(await this.deps.store.connections.setState(scope, provider.id, 'reapproval_needed'))) return;
    await this.deps.connections.recordEvent(scope, provider.id, 'reapproval_needed', reason);
    this.deps.log.warn(
      {
        code: 'TG_CONNECTION_REAPPROVAL_NEEDED',
        provider: provider.id,
        client: scope.clientId,
        org_id: scope.orgId,
        user_id: scope.userId,
        reason,
      },
      'connection needs re-approval',
    );
    this.deps.emitEvent({
      type: 'connection.reapproval_needed',
      provider: provider.id,
      client_id: scope.clientId,
      org_id: scope.orgId,
      user_id: scope.userId,
      reason,
      at: new Date().toISOString(),
    });
  }

  /** Revokes a connection's token at the provider, when it has a revocation URL (best effort). */
  async revoke(provider: ProviderEntry, record: ConnectionRecord, access: ProviderAccess): Promise<void> {
    if (record.oauthApp === null) return;
    const app = await this.deps.apps.byId(record.oauthApp, provider.id);
    const revocationUrl = app?.server
      ? app.server.revocationUrl
      : oauthEndpoints(provider, this.deps.config).revocationUrl;
    if (!app || !revocationUrl) return;
    const revocation = new URL(revocationUrl);
    const token = access.credentials.refresh_token ?? access.credentials.access_token;
    if (!token) return;
    const hint = access.credentials.refresh_token ? 'refresh_token' : 'access_token';
    try {
      const client = new AuthorizationCode({
        client: clientCredentials(provider, app),
        auth: { tokenHost: revocation.origin, revokePath: revocation.pathname + revocation.search },
        options: {
          authorizationMethod: tokenAuthMethod(provider, app) === 'client_secret_basic' ? 'header' : 'body',
        },
        http: tokenHttp(app, revocationUrl, this.deps, { json: 'force' }),
      });
      await client.createToken({ [hint]: token }).revoke(hint);
    } catch (error) {
      this.deps.log.warn(
        { code: 'TG_OAUTH_REVOKE_FAILED', provider: provider.id, reason: tokenFailure(error).description },
        'token revocation failed',
      );
    }
  }
}
