/**
 * Tools of providers that are upstream MCP servers (issue 17), per connection: listed from the
 * upstream on first need and cached by connection (scope and provider: two users never share a
 * list, since tools can differ per credential), for the upstream's `ttlMs` when it gives one (at
 * least MIN_TTL_MS), else DEFAULT_TTL_MS, and dropped at once when the upstream sends
 * notifications/tools/list_changed or the connection changes. A list's `version` changes only when
 * its tools do; ToolService keys its cached tools/list by it. A listing that fails is remembered for
 * FAILURE_TTL_MS, so a down upstream does not hold every tools/list for its timeout.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { mcpCatalog, type McpCatalog } from '../catalog/mcp-tools.js';
import type { CatalogSnapshot, CompiledTool, ProviderEntry } from '../catalog/types.js';
import type { OAuthFlows } from '../connections/oauth/index.js';
import type { ConnectionService } from '../connections/service.js';
import type { Bus } from '../coordination/bus.js';
import { scopeKey, type Scope } from '../domain.js';
import { UpstreamHttpError, type McpUpstreams } from '../upstream/mcp-client.js';
import { OutboundBlockedError, OutboundError } from '../upstream/outbound.js';
import type { ProviderAccess } from '../upstream/provider-client.js';
import type { CallObservation } from './audit.js';
import { outboundErrorResult, responseResult, upstreamResult } from './result.js';
import { withOutcome } from './types.js';
import { Lru } from '../lru.js';

/** A connection's served list, and what the upstream offered. */
export interface McpListing extends McpCatalog {
  /** Changes when the tools do: part of ToolService's cache key. */
  version: string;
  /** Tools the upstream offered; more than `tools.length` when the list was cut at the bound. */
  offered: number;
  /** Why the last listing failed, when it did (then `tools` is empty). */
  error?: string;
}

export interface McpToolListsDeps {
  upstreams: McpUpstreams;
  connections: ConnectionService;
  oauth: OAuthFlows;
  bus: Bus;
  log: FastifyBaseLogger;
}

/** A list is kept this long when the upstream gives no ttlMs (list_changed drops it sooner). */
export const DEFAULT_TTL_MS = 10 * 60_000;
/** Shortest time a list is kept, whatever ttlMs the upstream asks for. */
export const MIN_TTL_MS = 1_000;
/** A failed listing is not retried sooner than this. */
export const FAILURE_TTL_MS = 30_000;

interface Entry {
  /**
   * Resolves to the listing and how long to keep it (undefined: no usable connection, not kept);
   * replaced when it expires. Set before it resolves, so concurrent callers share one listing.
   */
  listing: Promise<(McpListing & { ttl: number }) | undefined>;
  expiresAt: number;
  /** The provider's manifest it was listed for: a reload that changes it (categories) lists again. */
  contentHash: string;
  scope: Scope | null;
  provider: string;
}

const NO_ACCESS: ProviderAccess = { credentials: {}, fields: {} };

/** Connections whose lists are kept at once; the least recently used go first beyond it (a bound). */
const MAX_LISTS = 10_000;
/** Catalogs with a scope's listed tools kept at once (see withListedTools); a bound, not a tuning. */
const MAX_SCOPED_CATALOGS = 100;

/** The per-connection tool lists of upstream MCP providers, and calls to their tools. */
export class McpToolLists {
  private readonly entries = new Lru<string, Entry>(MAX_LISTS);
  private readonly scoped = new Lru<string, CatalogSnapshot>(MAX_SCOPED_CATALOGS);

  constructor(private readonly deps: McpToolListsDeps) {
    deps.upstreams.onToolsChanged((key) => {
      const entry = this.entries.get(key);
      if (entry)
        void deps.bus.publish({
          type: 'upstream.tools_changed',
          scope: entry.scope,
          provider: entry.provider,
        });
    });
    deps.bus.subscribe('upstream.tools_changed', ({ scope, provider }) =>
      this.entries.delete(connectionKey(scope, provider)),
    );
    deps.bus.subscribe('connection.changed', ({ scope, provider }) => {
      const key = connectionKey(scope, provider);
      this.entries.delete(key);
      deps.upstreams.drop(key);
    });
  }

  /**
   * The tools of `provider` a scope sees now: listed (or from the cache) with the scope's
   * connection; undefined without a usable connection (none, or re-approval needed).
   */
  async listing(scope: Scope, provider: ProviderEntry): Promise<McpListing | undefined> {
    const shared = provider.auth.kind === 'none';
    const key = connectionKey(shared ? null : scope, provider.id);
    const cached = this.entries.get(key);
    if (cached && cached.expiresAt > Date.now() && cached.contentHash === provider.contentHash)
      return cached.listing;
    const entry: Entry = {
      listing: this.fetch(scope, provider, key, cached),
      expiresAt: Number.POSITIVE_INFINITY,
      contentHash: provider.contentHash,
      scope: shared ? null : scope,
      provider: provider.id,
    };
    this.entries.set(key, entry);
    const listing = await entry.listing;
    if (this.entries.get(key) === entry) {
      if (listing) entry.expiresAt = Date.now() + (listing.error ? FAILURE_TTL_MS : listing.ttl);
      else this.entries.delete(key);
    }
    return listing;
  }

  /** Lists with the scope's access, the previous list at hand should the upstream fail now. */
  private async fetch(
    scope: Scope,
    provider: ProviderEntry,
    key: string,
    cached: Entry | undefined,
  ): Promise<(McpListing & { ttl: number }) | undefined> {
    const access = provider.auth.kind === 'none' ? NO_ACCESS : await this.access(scope, provider);
    if (!access) return undefined;
    const previous = cached?.contentHash === provider.contentHash ? await cached.listing : undefined;
    return this.list(provider, access, key, previous);
  }

  /**
   * `catalog` as a scope sees it: its upstream MCP providers carrying the tools and categories
   * listed for the scope (what search_tools indexes). The same object while the catalog and the
   * lists stay the same, so its search index is built once (ToolIndex.of caches by snapshot).
   */
  async withListedTools(scope: Scope, catalog: CatalogSnapshot): Promise<CatalogSnapshot> {
    const dynamic = [...catalog.providers.values()].filter((p) => p.categoryRules !== undefined);
    const listings = await Promise.all(dynamic.map((p) => this.listing(scope, p)));
    const listed = dynamic.flatMap((p, i) => {
      const listing = listings[i];
      return listing && listing.tools.length > 0 ? [{ provider: p, listing }] : [];
    });
    if (listed.length === 0) return catalog;
    const key = `${catalog.version}\u0000${listed.map((l) => `${l.provider.id}@${l.listing.version}`).join(',')}`;
    const known = this.scoped.get(key);
    if (known) return known;
    const providers = new Map(catalog.providers);
    const tools = new Map(catalog.tools);
    for (const { provider, listing } of listed) {
      providers.set(provider.id, { ...provider, tools: listing.tools, categories: listing.categories });
      for (const tool of listing.tools) tools.set(tool.name, tool);
    }
    const snapshot: CatalogSnapshot = { ...catalog, providers, tools };
    this.scoped.set(key, snapshot);
    return snapshot;
  }

  /** Calls an upstream tool with the scope's access (ProviderToolRunner checked the connection). */
  async call(
    scope: Scope,
    provider: ProviderEntry,
    tool: CompiledTool,
    args: Record<string, unknown>,
    access: ProviderAccess,
    signal?: AbortSignal,
    observed: CallObservation = {},
  ): Promise<CallToolResult> {
    const key = connectionKey(provider.auth.kind === 'none' ? null : scope, provider.id);
    const secrets = Object.values(access.credentials);
    try {
      const result = await this.deps.upstreams.callTool(
        provider,
        access,
        key,
        tool.source.slice('mcp:'.length),
        args,
        signal,
      );
      return upstreamResult(tool, result, { secrets });
    } catch (error) {
      if (error instanceof UpstreamHttpError) {
        observed.upstreamStatus = error.status;
        const body = Buffer.from(error.text);
        const response = { status: error.status, headers: {}, body, truncated: false, url: '' };
        const result = responseResult(tool, response, { secrets });
        return error.status >= 500 || error.status === 429 ? withOutcome(result, 'upstream_error') : result;
      }
      if (error instanceof OutboundError)
        return withOutcome(
          outboundErrorResult(tool, error),
          error instanceof OutboundBlockedError ? 'refused' : 'upstream_error',
        );
      throw error;
    }
  }

  /** The scope's access to a connected provider, fresh (OAuth2); undefined when there is none to use. */
  private async access(scope: Scope, provider: ProviderEntry): Promise<ProviderAccess | undefined> {
    try {
      const found = await this.deps.connections.access(scope, provider.id);
      if (!found || found.record.state !== 'connected') return undefined;
      return provider.auth.kind === 'oauth2'
        ? await this.deps.oauth.tokens.fresh(scope, provider, found.record, found.access)
        : found.access;
    } catch {
      // Unreadable or no longer renewable: the tools show up again once the user reconnects.
      return undefined;
    }
  }

  private async list(
    provider: ProviderEntry,
    access: ProviderAccess,
    key: string,
    previous: McpListing | undefined,
  ): Promise<McpListing & { ttl: number }> {
    const { log } = this.deps;
    try {
      const listed = await this.deps.upstreams.listTools(provider, access, key);
      const served = mcpCatalog(provider, listed.tools);
      const version = createHash('sha256').update(JSON.stringify(served.tools)).digest('hex').slice(0, 16);
      if (listed.offered > listed.tools.length)
        log.warn(
          {
            code: 'TG_MCP_TOOLS_CUT',
            provider: provider.id,
            offered: listed.offered,
            kept: listed.tools.length,
          },
          'an upstream MCP server lists more tools than the gateway serves; the rest are left out',
        );
      if (served.skipped.length > 0)
        log.warn(
          { code: 'TG_MCP_TOOLS_SKIPPED', provider: provider.id, skipped: served.skipped.slice(0, 20) },
          'upstream MCP tools left out: their schemas cannot be served',
        );
      const ttl = Math.max(MIN_TTL_MS, Math.min(listed.ttlMs ?? DEFAULT_TTL_MS, DEFAULT_TTL_MS));
      return { ...served, version, offered: listed.offered, ttl };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log.warn(
        { code: 'TG_MCP_LIST_FAILED', provider: provider.id, err: message },
        'listing the tools of an upstream MCP server failed',
      );
      // The last good list keeps serving until the upstream answers again.
      if (previous && previous.error === undefined) return { ...previous, ttl: FAILURE_TTL_MS };
      return {
        tools: [],
        categories: provider.categories,
        skipped: [],
        version: 'failed',
        offered: 0,
        error: message,
        ttl: FAILURE_TTL_MS,
      };
    }
  }
}

/** The upstream session and list key of a connection; `null` scope: a provider anyone uses. */
export function connectionKey(scope: Scope | null, provider: string): string {
  return `${scope === null ? '*' : scopeKey(scope)}\u0001${provider}`;
}
