import { randomBytes } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { connect, type Generation } from '../../helpers/clients.js';
import { startObserved, type ObservedGateway } from '../../helpers/observed.js';
import { expectToolOk } from '../../helpers/results.js';

/**
 * What an operator's SDK setup does (README, "Metrics and traces"), here with an in-memory exporter:
 * the gateway runs in this process and uses only @opentelemetry/api, so its spans land here.
 */
const exporter = new InMemorySpanExporter();
trace.setGlobalTracerProvider(
  new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
);
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());

const USER = 'carol-traced-91ab';
let acme: ObservedGateway;
let key: string;

beforeAll(async () => {
  acme = await startObserved();
  const created = await acme.tg.gateway.keys.create('acme-co', 'client');
  key = created.key;
  await acme.connectExpired(created.record.clientId, USER);
});
afterAll(async () => {
  await acme?.close();
  trace.disable();
  context.disable();
  propagation.disable();
});
beforeEach(() => exporter.reset());

/** A caller's trace: a fresh trace id and parent span id, as its traceparent. */
function callerTrace(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

/** Checks the chain caller -> MCP request -> tool call -> provider request, all in the caller's trace. */
function expectChain(spans: ReadableSpan[], caller: { traceId: string; spanId: string }): void {
  const upstream = spans.find(
    (s) => s.kind === SpanKind.CLIENT && s.attributes['toolgate.provider'] === 'acme',
  );
  const tool = spans.find((s) => s.name === 'execute_tool acme_me');
  const request = spans.find((s) => s.kind === SpanKind.SERVER && s.name === 'tools/call');
  expect(upstream && tool && request).toBeTruthy();
  for (const span of [upstream!, tool!, request!]) expect(span.spanContext().traceId).toBe(caller.traceId);
  expect(request!.parentSpanContext?.spanId).toBe(caller.spanId);
  expect(tool!.parentSpanContext?.spanId).toBe(request!.spanContext().spanId);
  expect(upstream!.parentSpanContext?.spanId).toBe(tool!.spanContext().spanId);
  // 200, or 202 where the answer travels on the 2024 SSE stream.
  expect(request!.attributes).toMatchObject({ 'mcp.method.name': 'tools/call' });
  expect([200, 202]).toContain(request!.attributes['http.response.status_code']);
  expect(tool!.attributes).toMatchObject({
    'gen_ai.tool.name': 'acme_me',
    'toolgate.provider': 'acme',
    'toolgate.tool.outcome': 'ok',
  });
  expect(upstream!.attributes).toMatchObject({
    'http.request.method': 'GET',
    'http.response.status_code': 200,
    'server.address': '127.0.0.1',
  });
  // Never the user, the key or a token in what is exported.
  const exported = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes })));
  expect(exported).not.toContain(USER);
  expect(exported).not.toContain(key);
  expect(exported).not.toMatch(/access-\d/);
}

/** The traceparent the provider's API received on its last request. */
function upstreamTraceparent(): string | undefined {
  const header = acme.api.received.at(-1)?.headers.traceparent;
  return typeof header === 'string' ? header : undefined;
}

describe('OpenTelemetry spans with an SDK registered', () => {
  it.each<Generation>(['2025 (v1 client)', '2024-11-05 SSE'])(
    'continue a traceparent header into the provider call (%s)',
    async (generation) => {
      const caller = callerTrace();
      const client = await connect(generation, acme.tg.mcpUrl(`?user_id=${USER}`), {
        'X-API-Key': key,
        traceparent: caller.traceparent,
      });
      try {
        exporter.reset();
        expectToolOk(await client.callTool('acme_me'), 'owner@acme.example');
      } finally {
        await client.close();
      }
      expect(upstreamTraceparent()).toMatch(new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-01$`));
      expectChain(exporter.getFinishedSpans(), caller);
    },
  );

  it('continue a traceparent from params._meta of a 2026-07-28 request', async () => {
    const caller = callerTrace();
    const client = new Client(
      { name: 'toolgate-test', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(acme.tg.mcpUrl(`?user_id=${USER}`), {
        requestInit: { headers: { 'X-API-Key': key } },
      }),
    );
    try {
      exporter.reset();
      const result = await client.callTool({
        name: 'acme_me',
        arguments: {},
        _meta: { traceparent: caller.traceparent },
      });
      expect(result.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    const sent = upstreamTraceparent();
    expect(sent).toMatch(new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-01$`));
    // The provider is handed the gateway's own span as parent, not the caller's.
    expect(sent).not.toContain(caller.spanId);
    expectChain(exporter.getFinishedSpans(), caller);
  });

  it('start a trace of their own for a request that carries none', async () => {
    const client = await connect('2025 (v2 client)', acme.tg.mcpUrl(`?user_id=${USER}`), {
      'X-API-Key': key,
    });
    try {
      exporter.reset();
      expectToolOk(await client.callTool('acme_me'));
    } finally {
      await client.close();
    }
    const request = exporter.getFinishedSpans().find((s) => s.name === 'tools/call');
    expect(request?.parentSpanContext).toBeUndefined();
    expect(upstreamTraceparent()).toContain(request!.spanContext().traceId);
  });
});
