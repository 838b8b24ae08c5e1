import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport as V1StreamableTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { EventEmitter } from 'node:events';
import type { KeyType } from '../../core/domain.js';
import { until, type TestGateway } from './gateway.js';

/**
 * The real MCP clients of each protocol generation, behind one small interface so a test can run
 * the same assertions against all of them.
 */
export type Generation = '2026-07-28' | '2025 (v2 client)' | '2025 (v1 client)' | '2024-11-05 SSE';
export const GENERATIONS: Generation[] = [
  '2026-07-28',
  '2025 (v2 client)',
  '2025 (v1 client)',
  '2024-11-05 SSE',
];

export interface TestClient {
  listToolNames(): Promise<string[]>;
  callTool(
    name: string,
    args?: Record<string, unknown>,
  ): Promise<{ isError?: boolean; content: { type: string; text?: string }[] }>;
  /**
   * Starts receiving notifications/tools/list_changed (opens the listen stream on 2026-07-28; the
   * older clients open their event stream themselves, so wait for it on the server's hub).
   */
  watchToolsChanged(onChange: () => void): Promise<void>;
  /** Resolves when the transport reports it was closed (by us or by the server). */
  closed: Promise<void>;
  close(): Promise<void>;
}

type CallResult = Awaited<ReturnType<TestClient['callTool']>>;

export async function connect(
  generation: Generation,
  url: URL,
  headers: Record<string, string>,
): Promise<TestClient> {
  let onClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => (onClosed = resolve));
  if (generation === '2026-07-28' || generation === '2025 (v2 client)') {
    const client = new Client(
      { name: 'toolgate-test', version: '1.0.0' },
      generation === '2026-07-28' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
    );
    const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
    client.onclose = onClosed;
    await client.connect(transport);
    return {
      listToolNames: async () => (await client.listTools()).tools.map((t) => t.name),
      callTool: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallResult,
      async watchToolsChanged(onChange) {
        client.setNotificationHandler('notifications/tools/list_changed', onChange);
        if (generation === '2026-07-28') await client.listen({ toolsListChanged: true });
      },
      closed,
      close: () => client.close(),
    };
  }
  const client = new V1Client({ name: 'toolgate-test', version: '1.0.0' });
  const transport =
    generation === '2024-11-05 SSE'
      ? new SSEClientTransport(url, { requestInit: { headers } })
      : new V1StreamableTransport(url, { requestInit: { headers } });
  client.onclose = onClosed;
  await client.connect(transport);
  return {
    listToolNames: async () => (await client.listTools()).tools.map((t) => t.name),
    callTool: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallResult,
    watchToolsChanged(onChange) {
      client.setNotificationHandler(ToolListChangedNotificationSchema, onChange);
      return Promise.resolve();
    },
    closed,
    close: () => client.close(),
  };
}

/**
 * Creates an API key of `type` for `clientName` and connects a client of `generation` with it (as
 * X-API-Key) to the gateway's MCP endpoint, with `query` ("?user_id=u1") after it.
 */
export async function connectWithKey(
  tg: TestGateway,
  generation: Generation,
  query: string,
  type: KeyType = 'client',
  clientName?: string,
): Promise<TestClient> {
  const { key } = await tg.key(type, clientName);
  return connect(generation, tg.mcpUrl(query), { 'X-API-Key': key });
}

/** The notifications/tools/list_changed a client has received (see countToolsChanged). */
export interface ToolsChangedCount {
  /** How many have arrived so far. */
  readonly count: number;
  /** Resolves once `predicate(count)` holds, checked now and on each arrival (no polling). */
  until(predicate: (count: number) => boolean): Promise<void>;
}

/**
 * Counts the notifications/tools/list_changed `client` receives, and resolves once the gateway's
 * hub holds its stream (the client is the only session), so that none sent from then on is missed.
 */
export async function countToolsChanged(client: TestClient, tg: TestGateway): Promise<ToolsChangedCount> {
  const arrivals = new EventEmitter();
  let count = 0;
  await client.watchToolsChanged(() => {
    count++;
    arrivals.emit('notified');
  });
  await until(tg.gateway.mcp.hub, 'change', () => tg.gateway.mcp.hub.size === 1);
  return {
    get count() {
      return count;
    },
    until: (predicate) => until(arrivals, 'notified', () => predicate(count)),
  };
}

/** The system tools every scope sees, in tools/list order. */
export const SYSTEM_TOOLS = [
  'list_providers',
  'connect_provider',
  'disconnect_provider',
  'inspect_provider',
  'report_problem',
];
