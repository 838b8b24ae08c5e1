import { classifyInboundRequest } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { EnvelopeVerdicts, plainLegacyRoute, standardHeadersAgree } from '../../../core/mcp/classify.js';

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

// Bodies a client might POST, well-formed or not; each is tried with several version headers.
const BODIES: unknown[] = [
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: { a: 1 } } },
  { jsonrpc: '2.0', id: 'abc', method: 'tools/list' },
  { jsonrpc: '2.0', id: 0, method: 'ping', params: {} },
  { jsonrpc: '2.0', id: -7, method: '' },
  {
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  },
  { jsonrpc: '2.0', id: 0, method: 'initialize', params: { capabilities: {} } },
  { jsonrpc: '2.0', method: 'notifications/initialized' },
  { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } },
  { jsonrpc: '2.0', id: 1, result: {} },
  { jsonrpc: '2.0', id: 1, error: { code: -1, message: 'no' } },
  { jsonrpc: '2.0', id: 2 ** 60, method: 'tools/call' },
  { jsonrpc: '2.0', id: 1.5, method: 'tools/call' },
  { jsonrpc: '2.0', id: null, method: 'tools/call' },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: [] },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: null },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', extra: true },
  { jsonrpc: '1.0', id: 1, method: 'tools/call' },
  { id: 1, method: 'tools/call' },
  { jsonrpc: '2.0', id: 1, method: 7 },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: {} } },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { _meta: { progressToken: 3 } } },
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', _meta: MODERN_META } },
  { jsonrpc: '2.0', method: 'notifications/initialized', params: { _meta: MODERN_META } },
  [{ jsonrpc: '2.0', id: 1, method: 'tools/list' }],
  [],
  'tools/list',
  null,
  42,
];
const VERSIONS = [
  undefined,
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2026-07-28',
  ' 2025-11-25',
  'x',
];

describe('the plain 2025-era route', () => {
  it('agrees with the SDK classifier wherever it answers', () => {
    let answered = 0;
    for (const body of BODIES) {
      for (const version of VERSIONS) {
        const fast = plainLegacyRoute(body, version);
        if (fast === undefined) continue;
        answered++;
        const input: Parameters<typeof classifyInboundRequest>[0] = { httpMethod: 'POST', body };
        if (version !== undefined) input.protocolVersionHeader = version;
        expect(fast, JSON.stringify({ body, version })).toEqual(classifyInboundRequest(input));
      }
    }
    expect(answered).toBeGreaterThan(20);
  });

  it('answers the messages 2025-era clients send on every call', () => {
    for (const version of [undefined, '2025-11-25']) {
      expect(plainLegacyRoute(BODIES[0], version)?.kind).toBe('legacy');
      expect(plainLegacyRoute(BODIES[1], version)?.kind).toBe('legacy');
      expect(plainLegacyRoute(BODIES[6], version)?.kind).toBe('legacy');
    }
  });

  it('leaves anything with an envelope, a modern header, a batch or a response to the SDK', () => {
    expect(plainLegacyRoute(BODIES[21], undefined)).toBeUndefined();
    expect(plainLegacyRoute(BODIES[0], '2026-07-28')).toBeUndefined();
    expect(plainLegacyRoute(BODIES[23], undefined)).toBeUndefined();
    expect(plainLegacyRoute(BODIES[8], undefined)).toBeUndefined();
  });
});

describe('the remembered 2026-07-28 route', () => {
  const V = 'io.modelcontextprotocol/protocolVersion';
  // Envelopes valid and not: each is tried in several bodies, with several headers.
  const METAS: unknown[] = [
    MODERN_META,
    { ...MODERN_META, traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    { ...MODERN_META, progressToken: 'p' },
    { ...MODERN_META, progressToken: { no: 1 } },
    { ...MODERN_META, [V]: '2025-06-18' },
    { ...MODERN_META, [V]: ' 2026-07-28' },
    { ...MODERN_META, [V]: '2026-07-28 ' },
    { ...MODERN_META, [V]: 7 },
    { ...MODERN_META, 'io.modelcontextprotocol/clientInfo': 'me' },
    { [V]: '2026-07-28' },
  ];
  const bodies = METAS.flatMap((meta) => [
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', arguments: {}, _meta: meta } },
    { jsonrpc: '2.0', id: 'a', method: 'tools/list', params: { _meta: meta } },
    { jsonrpc: '2.0', id: 2, method: 'initialize', params: { _meta: meta } },
    { jsonrpc: '2.0', id: 2 ** 60, method: 'tools/list', params: { _meta: meta } },
    { jsonrpc: '2.0', id: null, method: 'tools/list', params: { _meta: meta } },
    { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: meta }, extra: 1 },
    { jsonrpc: '2.0', id: 3, result: {}, method: 'tools/list', params: { _meta: meta } },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: meta } },
    [{ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: meta } }],
  ]);
  const headers = [undefined, '2026-07-28', ' 2026-07-28', '2026-07-28 ', '2025-06-18', 'x'].flatMap(
    (version) =>
      [undefined, 'tools/call', 'tools/list', ' tools/list', 'initialize'].map((method) => ({
        version,
        method,
      })),
  );
  const sdk = (body: unknown, version?: string, method?: string) => {
    const input: Parameters<typeof classifyInboundRequest>[0] = { httpMethod: 'POST', body };
    if (version !== undefined) input.protocolVersionHeader = version;
    if (method !== undefined) input.mcpMethodHeader = method;
    return classifyInboundRequest(input);
  };

  it('agrees with the SDK classifier wherever it answers', () => {
    const verdicts = new EnvelopeVerdicts();
    for (const body of bodies)
      for (const { version, method } of headers) verdicts.remember(sdk(body, version, method));
    let answered = 0;
    for (const body of bodies) {
      for (const { version, method } of headers) {
        const fast = verdicts.route(body, version, method);
        if (fast === undefined) continue;
        answered++;
        expect(fast, JSON.stringify({ body, version, method })).toEqual(sdk(body, version, method));
      }
    }
    expect(answered).toBeGreaterThanOrEqual(8);
  });

  it('answers a request whose envelope the SDK accepted before, and only then', () => {
    const verdicts = new EnvelopeVerdicts();
    const body = bodies[1]!;
    expect(verdicts.route(body, '2026-07-28', 'tools/list')).toBeUndefined();
    verdicts.remember(sdk(body, '2026-07-28', 'tools/list'));
    expect(verdicts.route(body, '2026-07-28', 'tools/list')?.kind).toBe('modern');
    // The same envelope in a tools/call: no new check needed.
    expect(verdicts.route(bodies[0], '2026-07-28', 'tools/call')?.kind).toBe('modern');
    // Another envelope (a trace context) is the SDK's to check first.
    expect(verdicts.route(bodies[10], '2026-07-28', 'tools/call')).toBeUndefined();
  });

  it('answers an envelope equal in value to one it answered, whatever the order of its members', () => {
    const verdicts = new EnvelopeVerdicts();
    const call = (meta: unknown) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'x', _meta: meta as Record<string, unknown> },
    });
    const known = call(MODERN_META);
    // The first request answered from memory: its object may change later (the handlers have it).
    const first = call(structuredClone(MODERN_META));
    verdicts.remember(sdk(known, '2026-07-28', 'tools/call'));
    expect(verdicts.route(first, '2026-07-28', 'tools/call')?.kind).toBe('modern');
    const reordered = Object.fromEntries(Object.entries(MODERN_META).reverse());
    expect(verdicts.route(call(reordered), '2026-07-28', 'tools/call')).toEqual(
      sdk(known, '2026-07-28', 'tools/call'),
    );
    // Right after those answers, an envelope that differs in one nested value or one member is not.
    const info = 'io.modelcontextprotocol/clientInfo';
    const renamed = { ...MODERN_META, [info]: { ...MODERN_META[info], name: 'other' } };
    expect(verdicts.route(call(renamed), '2026-07-28', 'tools/call')).toBeUndefined();
    expect(verdicts.route(call({ ...MODERN_META, extra: [] }), '2026-07-28', 'tools/call')).toBeUndefined();
    // What was answered is kept as a copy: the first request's object, changed, is not valid.
    first.params._meta[info] = 'changed';
    expect(verdicts.route(first, '2026-07-28', 'tools/call')).toBeUndefined();
    expect(verdicts.route(known, '2026-07-28', 'tools/call')?.kind).toBe('modern');
  });
});

describe('standardHeadersAgree', () => {
  const both = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call' };
  const call = { name: 'list_providers' };

  it('takes the lean path only when the headers plainly agree with the body', () => {
    expect(standardHeadersAgree({ ...both, 'mcp-name': 'list_providers' }, 'tools/call', call)).toBe(true);
    expect(standardHeadersAgree({ ...both, 'mcp-name': ' list_providers\t' }, 'tools/call', call)).toBe(true);
    expect(standardHeadersAgree({ ...both, 'mcp-method': 'tools/list' }, 'tools/list', {})).toBe(true);
  });

  it('leaves everything else to the SDK', () => {
    expect(standardHeadersAgree(both, 'tools/call', call)).toBe(false);
    expect(standardHeadersAgree({ ...both, 'mcp-name': 'other' }, 'tools/call', call)).toBe(false);
    expect(
      standardHeadersAgree({ ...both, 'mcp-name': '=?base64?bGlzdF9wcm92aWRlcnM=?=' }, 'tools/call', call),
    ).toBe(false);
    expect(standardHeadersAgree({ 'mcp-method': 'tools/list' }, 'tools/list', {})).toBe(false);
    expect(standardHeadersAgree({ 'mcp-protocol-version': '2026-07-28' }, 'tools/list', {})).toBe(false);
    expect(standardHeadersAgree({ ...both, 'mcp-method': ['a', 'b'] }, 'tools/list', {})).toBe(false);
  });
});
