/**
 * The client of upstream MCP servers (issue 17): providers whose tools come from a vendor's MCP
 * server (manifest `mcp: { url, transport }`). Built on the official client SDK, with its `fetch`
 * routed through the gateway's outbound client, so the private-network guard, the connection
 * pools (one per upstream origin) and a response size cap apply as they do to REST calls.
 *
 * One upstream session per connection (`connection`: a key the caller chooses, one per scope and
 * provider), opened on first use and kept: a 2026-07-28 upstream is stateless (the SDK negotiates
 * the era: `server/discover`, else the 2025 `initialize`), a 2025-era upstream keeps its
 * `Mcp-Session-Id`, re-initialised once when the upstream forgets it (HTTP 404). A session whose
 * credentials changed (a refreshed token, a reconnect) is replaced. A 401 with renewable access (an
 * OAuth2 token) renews it once and tries again, as ProviderClient.transmit does for REST calls.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  Client,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  SSEClientTransport,
  SseError,
  StreamableHTTPClientTransport,
  type CallToolResult,
  type Tool,
} from '@modelcontextprotocol/client';
import type { ProviderEntry } from '../catalog/types.js';
import type { Telemetry } from '../telemetry/index.js';
import { OutboundError, OutboundTimeoutError, type OutboundClient } from './outbound.js';
import type { ProviderAccess, ProviderClient } from './provider-client.js';

/** What an upstream listed for one connection, cut to the gateway's bound. */
export interface McpToolList {
  tools: Tool[];
  /** How many the upstream offered in the pages read (more than `tools.length` when it was cut). */
  offered: number;
  /** How long the upstream says the list may be cached (2026-07-28 `ttlMs`), when it says. */
  ttlMs?: number;
}

export interface McpUpstreamLimits {
  /** Deadline of one upstream request (initialize, one page of tools/list, tools/call). */
  timeoutMs: number;
  /** Deadline of a whole listing, every page included. */
  listTimeoutMs: number;
  /** Bytes of one upstream response read before it fails. */
  maxResponseBytes: number;
  /** Tools kept of one upstream's list; the rest are left out (and said so). */
  maxTools: number;
  /** Upstream sessions kept open; the least recently used is closed beyond it. */
  maxSessions: number;
}

/** 30 s per request as for REST calls, 8 MB per answer, 1,000 tools, 1,000 open sessions. */
export const MCP_UPSTREAM_DEFAULTS: McpUpstreamLimits = {
  timeoutMs: 30_000,
  listTimeoutMs: 60_000,
  maxResponseBytes: 8 * 2 ** 20,
  maxTools: 1_000,
  maxSessions: 1_000,
};

export interface McpUpstreamDeps {
  outbound: OutboundClient;
  /** The provider client: base URL (and its TOOLGATE_PROVIDER_<ID>_BASE_URL override), credentials. */
  client: ProviderClient;
  telemetry: Telemetry;
  limits: McpUpstreamLimits;
}

/** The upstream answered with an HTTP error status. */
export class UpstreamHttpError extends OutboundError {
  override readonly name = 'UpstreamHttpError';

  constructor(
    host: string,
    readonly status: number,
    readonly text: string,
  ) {
    super(host, `${host} answered HTTP ${status}`);
  }
}

/** The upstream's answer is not MCP: not JSON-RPC, or a JSON-RPC error. */
export class UpstreamProtocolError extends OutboundError {
  override readonly name = 'UpstreamProtocolError';
}

interface Session {
  fingerprint: string;
  ready: Promise<Client>;
}

const CLIENT_INFO = { name: 'toolgate', version: '1' };

/** The gateway's sessions with upstream MCP servers; one instance serves every provider. */
export class McpUpstreams {
  /** By connection key, least recently used first. */
  private readonly sessions = new Map<string, Session>();
  private readonly changeListeners = new Set<(connection: string) => void>();

  constructor(private readonly deps: McpUpstreamDeps) {}

  /** Calls `listener` with the connection key whenever its upstream says its tools changed. */
  onToolsChanged(listener: (connection: string) => void): void {
    this.changeListeners.add(listener);
  }

  /** The connection's tools, every page up to `maxTools`, within `listTimeoutMs`. */
  listTools(
    provider: ProviderEntry,
    access: ProviderAccess,
    connection: string,
    signal?: AbortSignal,
  ): Promise<McpToolList> {
    const { limits } = this.deps;
    const deadline = AbortSignal.timeout(limits.listTimeoutMs);
    const within = signal ? AbortSignal.any([signal, deadline]) : deadline;
    return this.run(provider, access, connection, async (client) => {
      const tools: Tool[] = [];
      let offered = 0;
      let ttlMs: number | undefined;
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor }, {
          timeout: limits.timeoutMs,
          signal: within,
        });
        offered += page.tools.length;
        tools.push(...page.tools.slice(0, Math.max(0, limits.maxTools - tools.length)));
        const ttl = (page as { ttlMs?: unknown }).ttlMs;
        if (typeof ttl === 'number' && ttl >= 0) ttlMs = Math.min(ttl, ttlMs ?? ttl);
        cursor = page.nextCursor;
        // Past the bound, one more page only says there are more: stop asking.
      } while (cursor !== undefined && tools.length < limits.maxTools);
      return { tools, offered, ...(ttlMs !== undefined ? { ttlMs } : {}) };
    }).catch((error: unknown) => {
      if (deadline.aborted && !signal?.aborted)
        throw new OutboundTimeoutError(this.host(provider), limits.listTimeoutMs);
      throw error;
    });
  }

  /** Calls one tool by its upstream name; the upstream's result as it is (isError included). */
  callTool(
    provider: ProviderEntry,
    access: ProviderAccess,
    connection: string,
    name: string,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<CallToolResult> {
    return this.run(provider, access, connection, (client) =>
      client.callTool(
        { name, arguments: args },
        { timeout: this.deps.limits.timeoutMs, ...(signal ? { signal } : {}) },
      ),
    );
  }

  /**
   * Checks credentials before they are stored: initialize and tools/list on a session of their
   * own, closed after. Rejects as a call would (UpstreamHttpError 401 for a refused key).
   */
  async check(provider: ProviderEntry, access: ProviderAccess): Promise<McpToolList> {
    const key = `check\u0000${provider.id}\u0000${randomUUID()}`;
    try {
      const { credentials, fields } = access;
      return await this.listTools(provider, { credentials, fields }, key);
    } finally {
      this.drop(key);
    }
  }

  /** Ends the session of a connection (disconnected, or its credentials are gone). */
  drop(connection: string): void {
    const session = this.sessions.get(connection);
    if (!session) return;
    this.sessions.delete(connection);
    session.ready.then((client) => client.close()).catch(() => {});
  }

  /** Ends every session (shutdown). */
  close(): void {
    for (const key of [...this.sessions.keys()]) this.drop(key);
  }

  /**
   * Runs `op` on the connection's session: once more on a new session after the upstream forgot
   * the old one (404), and once more with renewed access after a 401.
   */
  private async run<T>(
    provider: ProviderEntry,
    access: ProviderAccess,
    connection: string,
    op: (client: Client) => Promise<T>,
  ): Promise<T> {
    let current = access;
    let renewed = false;
    let reopened = false;
    for (;;) {
      try {
        return await op(await this.session(provider, current, connection));
      } catch (error) {
        const status = httpStatus(error);
        if (status === 401 && current.renew && !renewed) {
          renewed = true;
          this.drop(connection);
          current = await current.renew();
          continue;
        }
        if (status === 404 && !reopened && this.sessions.has(connection)) {
          reopened = true;
          this.drop(connection);
          continue;
        }
        throw this.upstreamError(provider, error);
      }
    }
  }

  private session(provider: ProviderEntry, access: ProviderAccess, connection: string): Promise<Client> {
    const fingerprint = createHash('sha256')
      .update(JSON.stringify([access.credentials, access.fields]))
      .digest('hex');
    const existing = this.sessions.get(connection);
    if (existing?.fingerprint === fingerprint) {
      // Most recently used last.
      this.sessions.delete(connection);
      this.sessions.set(connection, existing);
      return existing.ready;
    }
    if (existing) this.drop(connection);
    while (this.sessions.size >= this.deps.limits.maxSessions) {
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.drop(oldest);
    }
    const ready = this.open(provider, access, connection);
    const session = { fingerprint, ready };
    this.sessions.set(connection, session);
    // A session that could not be opened is not kept: the next call tries afresh.
    ready.catch(() => {
      if (this.sessions.get(connection) === session) this.sessions.delete(connection);
    });
    return ready;
  }

  private async open(provider: ProviderEntry, access: ProviderAccess, connection: string): Promise<Client> {
    const { client: providers, outbound, telemetry, limits } = this.deps;
    const signed = providers.sign(provider, providers.baseUrl(provider, undefined, access), access);
    const url = new URL(signed.url);
    const fetch = outbound.fetch(limits.maxResponseBytes);
    // Each request in a client span carrying `traceparent`, its status counted by provider.
    const traced = (input: string | URL, init: RequestInit = {}): Promise<Response> => {
      const injected: Record<string, string> = {};
      const request = { method: init.method ?? 'GET', url: String(input), headers: injected };
      return telemetry.upstreamCall(provider.id, request, () => {
        const headers = new Headers(init.headers);
        for (const [name, value] of Object.entries(injected)) headers.set(name, value);
        return fetch(input, { ...init, headers });
      });
    };
    const options = { requestInit: { headers: signed.headers }, fetch: traced };
    const sse = provider.spec.mcp?.transport === 'sse';
    const client = new Client(CLIENT_INFO, {
      ...(sse ? {} : { versionNegotiation: { mode: 'auto' as const } }),
      listChanged: {
        tools: {
          autoRefresh: false,
          onChanged: () => {
            for (const listener of this.changeListeners) listener(connection);
          },
        },
      },
    });
    const transport = sse
      ? new SSEClientTransport(url, options)
      : new StreamableHTTPClientTransport(url, options);
    try {
      await client.connect(transport, { timeout: limits.timeoutMs });
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    }
    return client;
  }

  private host(provider: ProviderEntry): string {
    try {
      return new URL(this.deps.client.baseUrl(provider, undefined, { credentials: {}, fields: {} })).hostname;
    } catch {
      return provider.id;
    }
  }

  /** Any failure as an OutboundError, so that tool results say what REST failures say. */
  private upstreamError(provider: ProviderEntry, error: unknown): unknown {
    for (let cause = error; cause instanceof Error; cause = cause.cause) {
      if (cause instanceof OutboundError) return cause;
    }
    const host = this.host(provider);
    const status = httpStatus(error);
    if (status !== undefined) {
      const text =
        error instanceof SdkHttpError && typeof error.data.text === 'string' ? error.data.text : '';
      return new UpstreamHttpError(host, status, text);
    }
    if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout)
      return new OutboundTimeoutError(host, this.deps.limits.timeoutMs);
    if (error instanceof ProtocolError)
      return new UpstreamProtocolError(host, `${host} answered with an MCP error: ${error.message}`);
    if (error instanceof SdkError || error instanceof SyntaxError || isSchemaError(error))
      return new UpstreamProtocolError(
        host,
        `${host} did not answer as an MCP server (${error instanceof SdkError ? error.code : 'invalid JSON-RPC'})`,
      );
    return error;
  }
}

/** The HTTP status an SDK transport failed with, when it failed on one. */
function httpStatus(error: unknown): number | undefined {
  if (error instanceof SdkHttpError) return error.status;
  if (error instanceof SseError && typeof error.code === 'number' && error.code >= 400) return error.code;
  if (error instanceof Error && error.name === 'UnauthorizedError') return 401;
  return undefined;
}

/** A schema library's validation failure (the SDK checks every message it receives). */
function isSchemaError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'ZodError' || error.name === '$ZodError');
}
