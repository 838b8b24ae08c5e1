import { createHash, randomBytes } from 'node:crypto';
import { andThen, type Awaitable } from '../awaitable.js';
import type { ProviderEntry } from '../catalog/types.js';
import type { Bus } from '../coordination/bus.js';
import type { Config } from '../config.js';
import type { PluginRegistry } from '../catalog/plugins/registry.js';
import { auditScope, type AuditLog } from '../store/audit-log.js';
import { newId } from '../store/ids.js';
import type { ConnectionEvent, ConnectionRecord, LinkRecord, Store } from '../store/types.js';
import type { ProviderAccess, ProviderClient } from '../upstream/provider-client.js';
import type { ProviderRequest } from '../upstream/request.js';
import { checkCredentials, checkFields, type Checked } from './validate.js';
import type { Vault } from './vault.js';
import { scopeKey, type ConnectionState, type Scope } from '../domain.js';
import { providerMessage } from '../upstream/response.js';
import { OutboundError } from '../upstream/outbound.js';
import { UpstreamHttpError, type McpUpstreams } from '../upstream/mcp-client.js';
import { Lru, PER_CALL_ENTRIES } from '../lru.js';

/** The words SPEC.md uses for a connection's state, as shown to agents. */
export type StateWord = 'no connection' | 'connected' | 're-approval needed';
export const STATE_WORDS: Readonly<Record<ConnectionState, StateWord>> = {
  connected: 'connected',
  reapproval_needed: 're-approval needed',
};

/** How long a one-time link lives (issue 4: ten minutes, single use). */
export const LINK_TTL_MS = 10 * 60_000;

export type ConnectOutcome =
  { ok: true; account: string | null; replaced: boolean } | { ok: false; message: string };

export interface ConnectionServiceDeps {
  store: Store;
  bus: Bus;
  vault: Vault;
  client: ProviderClient;
  /** Upstream MCP servers: an mcp provider's credential is checked by listing its tools. */
  upstreams: McpUpstreams;
  plugins: PluginRegistry;
  config: Config;
  audit: AuditLog;
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Reads the value at a JSON pointer (`/login`, `/data/0/email`). */
function atPointer(value: unknown, pointer: string): unknown {
  let current = value;
  for (const raw of pointer.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/**
 * A scope's connections: connect (check, verify, store sealed), disconnect (really delete),
 * read credentials for a call, and one-time links for entering a secret outside the model.
 * Publishes `connection.changed` on the bus when a connection is stored or removed, so every
 * process tells that scope's sessions their tools changed.
 */
export class ConnectionService {
  /**
   * Opened credentials by scope and provider, with the connection id and sealed value they were
   * opened from: a call whose record has the same id and sealed value skips the decryption,
   * whichever process stored the record; a reconnect (new id) or a refresh (new sealed value)
   * opens afresh. A `connection.changed` event on the bus drops the entry, so the map holds live
   * connections only.
   */
  private readonly opened = new Lru<string, { id: string; sealed: string; access: ProviderAccess }>(
    PER_CALL_ENTRIES,
  );
  /**
   * The same, by the record a store returned: a store's read cache gives each call the same record
   * object while the row is unchanged, found here without building the scope's key (a key made per
   * call is hashed and compared in full). An entry lives as long as its record does: a change of
   * the row is a new record.
   */
  private readonly openedRecords = new WeakMap<ConnectionRecord, ProviderAccess>();

  constructor(private readonly deps: ConnectionServiceDeps) {
    deps.bus.subscribe('connection.changed', ({ scope, provider }) =>
      this.opened.delete(`${scopeKey(scope)}\u0000${provider}`),
    );
  }

  list(scope: Scope): Promise<ConnectionRecord[]> {
    return this.deps.store.connections.list(scope);
  }

  async state(scope: Scope, provider: string): Promise<StateWord> {
    const record = await this.deps.store.connections.get(scope, provider);
    return record ? STATE_WORDS[record.state] : 'no connection';
  }

  /**
   * The connection and its opened credentials, for a call in this scope; `fresh`: as the database
   * has it now, never from a read cache (see ConnectionStore.get).
   */
  access(
    scope: Scope,
    provider: string,
    options?: { fresh: boolean },
  ): Awaitable<{ record: ConnectionRecord; access: ProviderAccess } | undefined> {
    // Nearly every call: the store's record at hand, its credentials opened before.
    return andThen(this.deps.store.connections.get(scope, provider, options), (record) => {
      if (!record) return undefined;
      const known = this.openedRecords.get(record);
      return known ? { record, access: known } : this.open(scope, provider, record);
    });
  }

  /** {@link access} of a record whose credentials this map has not opened: opened, or found opened by key. */
  private async open(
    scope: Scope,
    provider: string,
    record: ConnectionRecord,
  ): Promise<{ record: ConnectionRecord; access: ProviderAccess }> {
    const key = `${scopeKey(scope)}\u0000${provider}`;
    const cached = this.opened.get(key);
    if (cached?.id === record.id && cached.sealed === record.credentials) {
      this.openedRecords.set(record, cached.access);
      return { record, access: cached.access };
    }
    const scopeId = await this.deps.store.scopes.ensure(scope);
    const credentials = this.deps.vault.open(scopeId, provider, record.id, record.credentials);
    const access: ProviderAccess = Object.freeze({
      credentials: Object.freeze(credentials),
      fields: record.fields,
    });
    this.opened.set(key, { id: record.id, sealed: record.credentials, access });
    this.openedRecords.set(record, access);
    return { record, access };
  }

  /**
   * Connects an api_key or webhook_url provider: checks the credentials and fields against the
   * manifest, runs the credential check, names the account, and only then stores the connection
   * (replacing an existing one whole). Nothing is stored on any failure.
   */
  async connect(
    scope: Scope,
    provider: ProviderEntry,
    input: { credentials?: unknown; fields?: unknown },
  ): Promise<ConnectOutcome> {
    const credentials = checkCredentials(provider, input.credentials, this.deps.config);
    if (!credentials.ok) return credentials;
    const fields = checkFields(provider, input.fields);
    if (!fields.ok) return fields;
    const access: ProviderAccess = { credentials: credentials.value, fields: fields.value };
    const verified = await this.verify(provider, access);
    if (!verified.ok) return verified;
    const account = verified.value ?? (await this.identify(provider, access));
    const existing = await this.deps.store.connections.get(scope, provider.id);
    await this.store(scope, provider.id, access, account);
    return { ok: true, account, replaced: existing !== undefined };
  }

  /** Seals and stores a connection (a new id: the ciphertext is bound to it), then tells listeners. */
  async store(
    scope: Scope,
    provider: string,
    access: ProviderAccess,
    account: string | null,
    oauth: { oauthApp: string; expiresAt: string | null } | null = null,
  ): Promise<void> {
    const scopeId = await this.deps.store.scopes.ensure(scope);
    const id = newId('con');
    await this.deps.store.connections.put(scope, {
      id,
      provider,
      state: 'connected',
      fields: { ...access.fields },
      account,
      credentials: this.deps.vault.seal(scopeId, provider, id, access.credentials),
      oauthApp: oauth?.oauthApp ?? null,
      expiresAt: oauth?.expiresAt ?? null,
    });
    await this.recordEvent(scope, provider, 'connected');
    await this.deps.bus.publish({ type: 'connection.changed', scope, provider });
  }

  /** A connection event: in the connection history (the dashboard's) and in the audit trail. */
  async recordEvent(scope: Scope, provider: string, event: ConnectionEvent, detail?: string): Promise<void> {
    await this.deps.store.connections.addEvent(scope, provider, event, detail);
    this.deps.audit.record({ event, ...auditScope(scope), provider });
  }

  async disconnect(scope: Scope, provider: string): Promise<boolean> {
    const removed = await this.deps.store.connections.delete(scope, provider);
    if (removed) {
      await this.recordEvent(scope, provider, 'disconnected');
      await this.deps.bus.publish({ type: 'connection.changed', scope, provider });
    }
    return removed;
  }

  /** A one-time link for this scope and provider; returns its token (the URL is the caller's to build). */
  async createLink(
    scope: Scope,
    provider: string,
    purpose: string,
    payload: string | null = null,
  ): Promise<{ token: string; expiresAt: string }> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = new Date(Date.now() + LINK_TTL_MS).toISOString();
    await this.deps.store.links.create(hashToken(token), { scope, provider, purpose, payload, expiresAt });
    return { token, expiresAt };
  }

  peekLink(token: string): Promise<LinkRecord | undefined> {
    return this.deps.store.links.peek(hashToken(token), new Date().toISOString());
  }

  consumeLink(token: string): Promise<LinkRecord | undefined> {
    return this.deps.store.links.consume(hashToken(token), new Date().toISOString());
  }

  purgeExpiredLinks(): Promise<number> {
    return this.deps.store.links.purgeExpired(new Date().toISOString());
  }

  /** The plugin's credential check, else the manifest's `verify` operation; a pass may name the account. */
  private async verify(provider: ProviderEntry, access: ProviderAccess): Promise<Checked<string | null>> {
    const plugin = provider.plugin !== undefined ? this.deps.plugins.get(provider.plugin) : undefined;
    if (plugin?.checkCredential) {
      const result = await plugin.checkCredential(this.deps.client.pluginContext(provider, plugin, access));
      return result.ok
        ? { ok: true, value: result.account ?? null }
        : {
            ok: false,
            message: `${provider.displayName} refused the credential: ${result.message} Nothing was stored.`,
          };
    }
    if (provider.spec.mcp) return this.verifyMcp(provider, access);
    const verify = provider.spec.verify;
    if (!verify) return { ok: true, value: null };
    const request = this.operation(provider, verify);
    try {
      const response = await this.deps.client.send(provider, access, request);
      const accepted = verify.status
        ? verify.status.includes(response.status)
        : response.status >= 200 && response.status < 300;
      if (accepted) return { ok: true, value: null };
      const said = providerMessage(response, Object.values(access.credentials));
      const refused = response.status === 401 || response.status === 403;
      return {
        ok: false,
        message:
          `${provider.displayName} ${refused ? 'refused the credential' : 'did not accept the credential check'} (HTTP ${response.status}${said ? `: ${said}` : ''}). ` +
          'Check that the whole value was copied, from the right account, with the permissions the tools need. Nothing was stored.',
      };
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
      return {
        ok: false,
        message: `Could not reach ${provider.displayName} to check the credential (${error.message}). Nothing was stored; try again later.`,
      };
    }
  }

  /** An upstream MCP server accepts the credential when initialize and tools/list succeed with it. */
  private async verifyMcp(provider: ProviderEntry, access: ProviderAccess): Promise<Checked<string | null>> {
    try {
      await this.deps.upstreams.check(provider, access);
      return { ok: true, value: null };
    } catch (error) {
      if (!(error instanceof OutboundError)) throw error;
      const refused = error instanceof UpstreamHttpError && (error.status === 401 || error.status === 403);
      return {
        ok: false,
        message: refused
          ? `${provider.displayName} refused the credential (HTTP ${error.status} from its MCP server). Check that the whole value was copied, from the right account, with the permissions the tools need. Nothing was stored.`
          : `Could not list ${provider.displayName}'s tools with this credential (${error.message}). Nothing was stored; try again later.`,
      };
    }
  }

  /**
   * Replaces a connection's credentials after a token refresh, only if nobody else did first
   * (compare-and-set on the sealed value); false means the caller should re-read.
   */
  async swapCredentials(
    scope: Scope,
    provider: string,
    record: ConnectionRecord,
    credentials: Record<string, string>,
    expiresAt: string | null,
  ): Promise<boolean> {
    const scopeId = await this.deps.store.scopes.ensure(scope);
    const sealed = this.deps.vault.seal(scopeId, provider, record.id, credentials);
    const swapped = await this.deps.store.connections.swapCredentials(scope, provider, record.credentials, {
      credentials: sealed,
      expiresAt,
    });
    if (swapped) {
      await this.recordEvent(scope, provider, 'refreshed');
      await this.deps.bus.publish({ type: 'connection.refreshed', scope, provider });
    }
    return swapped;
  }

  /** The connected account for fresh credentials: the plugin's check, else the manifest's identity operation. */
  async accountOf(provider: ProviderEntry, access: ProviderAccess): Promise<string | null> {
    const plugin = provider.plugin !== undefined ? this.deps.plugins.get(provider.plugin) : undefined;
    if (plugin?.checkCredential) {
      const result = await plugin.checkCredential(this.deps.client.pluginContext(provider, plugin, access));
      if (result.ok && result.account !== undefined) return result.account;
    }
    return this.identify(provider, access);
  }

  private async identify(provider: ProviderEntry, access: ProviderAccess): Promise<string | null> {
    const identity = provider.spec.identity;
    if (!identity) return null;
    try {
      const tool =
        identity.tool !== undefined ? provider.tools.find((t) => t.name === identity.tool) : undefined;
      let body: unknown;
      if (tool && !tool.request) {
        // A plugin tool: run it, and read the account from its structured result.
        const result = await this.deps.client.runPluginTool(provider, tool.name, {}, access);
        body = result === undefined || result.isError ? undefined : result.structuredContent;
      } else {
        const response = await this.deps.client.send(provider, access, this.operation(provider, identity));
        if (response.status < 200 || response.status > 299) return null;
        body = JSON.parse(response.body.toString('utf8')) as unknown;
      }
      const value = atPointer(body, identity.pointer);
      return typeof value === 'string' || typeof value === 'number' ? String(value) : null;
    } catch {
      // The account name is a nicety: a connection whose credential passed its check is kept without it.
      return null;
    }
  }

  private operation(
    provider: ProviderEntry,
    ref: { tool?: string; method?: ProviderRequest['method']; path?: string },
  ): ProviderRequest {
    const plan =
      ref.tool !== undefined ? provider.tools.find((t) => t.name === ref.tool)?.request : undefined;
    const request: ProviderRequest = {
      method: plan?.method ?? ref.method ?? 'GET',
      path: plan?.path ?? ref.path ?? '',
    };
    if (plan?.server !== undefined) request.server = plan.server;
    return request;
  }
}
