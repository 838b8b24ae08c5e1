import type { FastifyRequest } from 'fastify';
import type { CatalogSnapshot } from '../catalog/types.js';
import type { Bus } from '../coordination/bus.js';
import type { SessionStore } from '../coordination/sessions.js';
import { scopeKey, type Scope } from '../domain.js';
import type { ToolService } from '../tools/service.js';
import { TOOLS_LIST_CHANGED } from './protocol.js';
import { StreamHub } from './streams.js';
import { LegacySseTransport } from './transports/legacy-sse.js';
import { ModernTransport } from './transports/modern.js';
import { SessionStreams } from './transports/session-streams.js';
import { StreamableTransport } from './transports/streamable.js';
import type { Transport } from './transports/transport.js';

export { McpExchange, type Transport } from './transports/transport.js';

export interface McpEndpointDeps {
  tools: ToolService;
  sessions: SessionStore;
  bus: Bus;
  catalog: { readonly current: CatalogSnapshot };
  /** The providers a scope has connections to (any state). */
  connectedProviders: (scope: Scope) => Promise<Set<string>>;
  /** Path of the public base URL ('' or '/prefix'), for the 2024 transport's endpoint event. */
  basePath: string;
  onError: (error: unknown, request?: FastifyRequest) => void;
}

/**
 * The MCP side of the endpoint: the transports of every protocol generation, in the order
 * http/mcp.ts asks them, the hub of open streams, and the notifications the bus brings (a scope's
 * connections changed, a key was revoked, the catalog changed), delivered to exactly the streams
 * they concern in this process.
 */
export class McpEndpoint {
  readonly hub = new StreamHub();
  readonly transports: readonly Transport[];
  private readonly modern: ModernTransport;
  private readonly streams: SessionStreams;
  private readonly unsubscribe: (() => void)[];

  constructor(private readonly deps: McpEndpointDeps) {
    this.streams = new SessionStreams(deps.bus);
    this.modern = new ModernTransport({ tools: deps.tools, hub: this.hub, onError: deps.onError });
    const legacy = {
      sessions: deps.sessions,
      streams: this.streams,
      tools: deps.tools,
      hub: this.hub,
      onError: deps.onError,
    };
    this.transports = [
      this.modern,
      new StreamableTransport(legacy),
      new LegacySseTransport({ ...legacy, basePath: deps.basePath }),
    ];
    this.unsubscribe = [
      deps.bus.subscribe('connection.changed', ({ scope }) => this.toolsChanged(scopeKey(scope))),
      deps.bus.subscribe('key.revoked', ({ keyId }) => this.hub.closeWhere((s) => s.keyId === keyId)),
      deps.bus.subscribe('grant.revoked', ({ grantId }) => this.hub.closeWhere((s) => s.grantId === grantId)),
      deps.bus.subscribe('policy.changed', ({ clientId, orgId }) => {
        for (const scope of this.hub.scopes())
          if (scope.clientId === clientId && (orgId === null || scope.orgId === orgId))
            this.toolsChanged(scopeKey(scope));
      }),
      deps.bus.subscribe('catalog.changed', ({ providers }) => {
        this.providersChanged(new Set(providers)).catch((error: unknown) => deps.onError(error));
      }),
      // An upstream MCP server's tools changed: for one scope's connection, or for everyone's.
      deps.bus.subscribe('upstream.tools_changed', ({ scope, provider }) => {
        if (scope) this.toolsChanged(scopeKey(scope));
        else this.providersChanged(new Set([provider])).catch((error: unknown) => deps.onError(error));
      }),
    ];
  }

  /** Tells one scope's open streams and listen subscriptions that its tool list changed. */
  toolsChanged(key: string): void {
    this.hub.sendToScope(key, TOOLS_LIST_CHANGED);
    this.modern.toolsChanged(key);
  }

  /** After a reload: tells each listening scope that sees one of the changed providers. */
  private async providersChanged(providers: ReadonlySet<string>): Promise<void> {
    for (const scope of this.hub.scopes()) {
      if (await this.sees(scope, providers)) this.toolsChanged(scopeKey(scope));
    }
  }

  private async sees(scope: Scope, providers: ReadonlySet<string>): Promise<boolean> {
    const connected = await this.deps.connectedProviders(scope);
    for (const id of providers) {
      const entry = this.deps.catalog.current.providers.get(id);
      // A removed provider may have been visible to everyone (auth none): telling too many is harmless.
      if (connected.has(id) || !entry || entry.auth.kind === 'none') return true;
    }
    return false;
  }

  /** Closes every open stream and the SDK's handlers (shutdown). */
  async close(): Promise<void> {
    for (const stop of this.unsubscribe) stop();
    this.streams.close();
    this.hub.closeWhere(() => true);
    for (const transport of this.transports) await transport.close?.();
  }
}
