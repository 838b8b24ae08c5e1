import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken } from '../../../core/http/admin.js';
import { connect, type TestClient } from '../../helpers/clients.js';
import { postMcp, startGateway, until } from '../../helpers/gateway.js';
import { startObserved, valueOf, type ObservedGateway } from '../../helpers/observed.js';
import { expectToolError, expectToolOk } from '../../helpers/results.js';

// A user id that must never become a label (nor appear anywhere in the exposition).
const USER = 'alice-observed-7f3c';

let acme: ObservedGateway;
let modern: TestClient;
let legacy: TestClient;

async function scrape(token = acme.adminToken): Promise<string> {
  const response = await fetch(`${acme.tg.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return response.text();
}

beforeAll(async () => {
  acme = await startObserved();
  const { key, record } = await acme.tg.gateway.keys.create('acme-co', 'client');
  await acme.connectExpired(record.clientId, USER);
  const url = acme.tg.mcpUrl(`?user_id=${USER}`);
  modern = await connect('2026-07-28', url, { 'X-API-Key': key });
  legacy = await connect('2025 (v1 client)', url, { 'X-API-Key': key });
});
afterAll(async () => {
  await modern?.close();
  await legacy?.close();
  await acme?.close();
});

describe('GET /metrics on the main port', () => {
  it('answers only with the admin token: 401 without it or with another', async () => {
    const bare = await fetch(`${acme.tg.url}/metrics`);
    expect(bare.status).toBe(401);
    expect(((await bare.json()) as { error: { code: string } }).error.code).toBe('TG_ERR_ADMIN_UNAUTHORIZED');
    const wrong = await fetch(`${acme.tg.url}/metrics`, {
      headers: { authorization: `Bearer ${'x'.repeat(acme.adminToken.length)}` },
    });
    expect(wrong.status).toBe(401);
    // An MCP caller's key is not the admin token.
    const { key } = await acme.tg.key('client');
    const caller = await fetch(`${acme.tg.url}/metrics`, { headers: { authorization: `Bearer ${key}` } });
    expect(caller.status).toBe(401);
  });

  it('serves the process metrics and the catalog gauges', async () => {
    const text = await scrape();
    expect(valueOf(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(text).toContain('nodejs_eventloop_lag_seconds');
    expect(valueOf(text, 'toolgate_catalog_version')).toBe(acme.tg.gateway.catalog.current.version);
    expect(valueOf(text, 'toolgate_catalog_providers')).toBe(1);
    expect(valueOf(text, 'toolgate_catalog_tools')).toBe(2);
    expect(valueOf(text, 'toolgate_catalog_failed_providers')).toBe(0);
  });
});

describe('after real MCP traffic', () => {
  it('counts requests by method, generation and status, and tool calls by provider, tool and outcome', async () => {
    const before = await scrape();
    const callsOf = (text: string, tool: string, outcome: string, provider = 'acme'): number =>
      valueOf(text, 'toolgate_tool_call_duration_seconds_count', { provider, tool, outcome });

    // The first call refreshes the expired token, then reaches the API; the second uses the new one.
    expectToolOk(await modern.callTool('acme_me'), 'owner@acme.example');
    expectToolOk(await legacy.callTool('acme_me'), 'owner@acme.example');
    expectToolError(await modern.callTool('acme_outage'), /503/);
    expectToolOk(await legacy.callTool('list_providers'), 'Acme Cloud');
    await expect(legacy.callTool('no_such_tool_from_a_confused_agent')).rejects.toThrow(/Unknown tool/);
    await modern.listToolNames();
    const unauthenticated = await postMcp(acme.tg.mcpUrl(), 'toolgate_wrong', {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
    });
    expect(unauthenticated.status).toBe(401);
    // A made-up method is counted as `other`, never under its own name.
    const { key } = await acme.tg.key('client');
    const madeUp = await postMcp(acme.tg.mcpUrl(), key, {
      jsonrpc: '2.0',
      id: 2,
      method: 'x/made-up-by-a-client',
    });
    expect(madeUp.status).toBe(200);

    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>): number =>
      valueOf(after, name, labels) - valueOf(before, name, labels);

    expect(callsOf(after, 'acme_me', 'ok')).toBe(2);
    expect(callsOf(after, 'acme_outage', 'upstream_error')).toBe(1);
    expect(callsOf(after, 'list_providers', 'ok', '(system)')).toBe(1);
    // An unknown name is refused and counted without its free text as a label.
    expect(callsOf(after, '(unknown)', 'refused', '(unknown)')).toBe(1);
    expect(after).not.toContain('no_such_tool');
    // Latency: the sum of the histogram is in seconds, and each call lands in a bucket.
    const sum = valueOf(after, 'toolgate_tool_call_duration_seconds_sum', { tool: 'acme_me' });
    expect(sum).toBeGreaterThan(0);
    expect(sum).toBeLessThan(30);
    expect(
      valueOf(after, 'toolgate_tool_call_duration_seconds_bucket', { tool: 'acme_me', le: '+Inf' }),
    ).toBe(2);

    expect(delta('toolgate_upstream_responses_total', { provider: 'acme', status: '200' })).toBe(2);
    expect(delta('toolgate_upstream_responses_total', { provider: 'acme', status: '503' })).toBe(1);
    expect(delta('toolgate_oauth_refreshes_total', { provider: 'acme', outcome: 'ok' })).toBe(1);

    const requests = (labels: Record<string, string>): number => delta('toolgate_mcp_requests_total', labels);
    expect(requests({ method: 'tools/call', generation: '2026-07-28', status: '200' })).toBe(2);
    expect(requests({ method: 'tools/list', generation: '2026-07-28', status: '200' })).toBe(1);
    expect(requests({ method: 'tools/call', generation: '2025 sessions', status: '200' })).toBe(3);
    expect(requests({ method: 'other', generation: '2025 sessions', status: '200' })).toBe(1);
    expect(after).not.toContain('made-up-by-a-client');
    // Refused before its body was read: counted under its HTTP method, and no transport.
    expect(requests({ method: 'POST', generation: 'none', status: '401' })).toBe(1);
    // The clients' handshakes were counted when they connected.
    expect(
      valueOf(after, 'toolgate_mcp_requests_total', { method: 'initialize', generation: '2025 sessions' }),
    ).toBe(1);
    expect(
      valueOf(after, 'toolgate_mcp_requests_total', { method: 'server/discover', generation: '2026-07-28' }),
    ).toBe(1);

    // Never a user id, a key or a credential in the exposition.
    expect(after).not.toContain(USER);
    expect(after).not.toMatch(/toolgate_[A-Za-z0-9]{40,}/);
    expect(after).not.toContain('access-2');
  });

  it('counts a refresh refused for good as reapproval_needed, and the call as not_connected', async () => {
    const { key, record } = await acme.tg.gateway.keys.create('beta-co', 'client');
    await acme.connectExpired(record.clientId, 'bob', 'refresh-bad');
    const bob = await connect('2025 (v2 client)', acme.tg.mcpUrl('?user_id=bob'), { 'X-API-Key': key });
    try {
      expectToolError(await bob.callTool('acme_me'), /must be re-approved/);
    } finally {
      await bob.close();
    }
    const text = await scrape();
    expect(
      valueOf(text, 'toolgate_oauth_refreshes_total', { provider: 'acme', outcome: 'reapproval_needed' }),
    ).toBe(1);
    expect(
      valueOf(text, 'toolgate_tool_call_duration_seconds_count', {
        tool: 'acme_me',
        outcome: 'not_connected',
      }),
    ).toBe(1);
  });

  it('shows open streams and sessions as gauges', async () => {
    const hub = acme.tg.gateway.mcp.hub;
    // The 1.x client holds its session's event stream open; a 2026-07-28 listen stream joins it.
    await until(hub, 'change', () => hub.size >= 1);
    const streamsBefore = hub.size;
    await modern.watchToolsChanged(() => {});
    await until(hub, 'change', () => hub.size === streamsBefore + 1);
    const text = await scrape();
    expect(valueOf(text, 'toolgate_mcp_open_streams')).toBe(streamsBefore + 1);
    expect(valueOf(text, 'toolgate_mcp_sessions')).toBe(await acme.tg.gateway.coordination.sessions.count());
    expect(valueOf(text, 'toolgate_mcp_sessions')).toBeGreaterThanOrEqual(1);
  });
});

describe('TOOLGATE_METRICS_PORT', () => {
  it('serves /metrics on its own port without a token, and nothing at /metrics on the main port', async () => {
    const tg = await startGateway({ TOOLGATE_METRICS_PORT: '0' });
    try {
      const port = tg.gateway.metricsPort;
      expect(port).toBeGreaterThan(0);
      expect(port).not.toBe(Number(new URL(tg.url).port));
      // The operator is told where.
      expect(tg.logs.find((line) => line.includes('TG_METRICS_LISTENING'))).toContain(`"port":${port}`);
      const served = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(served.status).toBe(200);
      expect(await served.text()).toContain('toolgate_catalog_version');
      expect((await fetch(`http://127.0.0.1:${port}/mcp/`)).status).toBe(404);

      const main = await fetch(`${tg.url}/metrics`, {
        headers: { authorization: `Bearer ${adminToken(tg.gateway.config)}` },
      });
      expect(main.status).toBe(404);
    } finally {
      await tg.close();
    }
    expect(tg.gateway.metricsPort).toBeUndefined();
  });
});

describe('with the audit trail off (TOOLGATE_AUDIT=off)', () => {
  it('still counts and times every tool call, call_tool and the tool it calls included', async () => {
    const tg = await startGateway({ TOOLGATE_AUDIT: 'off' });
    const { key } = await tg.key('solo');
    const client = await connect('2026-07-28', tg.mcpUrl(), { 'X-API-Key': key });
    try {
      expectToolOk(await client.callTool('list_providers'));
      expectToolOk(await client.callTool('call_tool', { name: 'list_providers', arguments: {} }));
      const response = await fetch(`${tg.url}/metrics`, {
        headers: { authorization: `Bearer ${adminToken(tg.gateway.config)}` },
      });
      const text = await response.text();
      const count = (tool: string): number =>
        valueOf(text, 'toolgate_tool_call_duration_seconds_count', {
          provider: '(system)',
          tool,
          outcome: 'ok',
        });
      expect(count('list_providers')).toBe(2);
      expect(count('call_tool')).toBe(1);
      expect(await tg.gateway.store.audit.list({ limit: 10 })).toEqual([]);
    } finally {
      await client.close();
      await tg.close();
    }
  });
});
