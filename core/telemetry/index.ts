import {
  context,
  propagation,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api';
import packageJson from '../../package.json' with { type: 'json' };
import { Metrics, type ToolOutcome } from './metrics.js';

export {
  mcpMethodLabel,
  Metrics,
  SYSTEM_LABEL,
  UNKNOWN_LABEL,
  type GaugeSources,
  type RefreshOutcome,
  type ToolOutcome,
} from './metrics.js';

/**
 * Spans go through the OpenTelemetry API only: without an SDK registered by the operator (README,
 * "Metrics and traces") every call below is the API's no-op. The tracer is a proxy, so an SDK
 * registered after this module loaded is used from then on.
 */
const tracer = trace.getTracer('toolgate', packageJson.version);

/**
 * Whether spans are made: an operator registered a tracer provider (an SDK), or a propagator. With
 * neither, every span is the API's no-op and nothing is propagated, yet making the spans (three a
 * tools/call, with their attributes, contexts and carriers) cost about 3 % of a tools/call's
 * instructions (scripts/bench, under callgrind), so they are not made. Asked at each use: an SDK
 * registered after start is used from then on.
 */
function tracing(): boolean {
  const provider = trace.getTracerProvider();
  return (
    !(provider instanceof ProxyTracerProvider) ||
    provider.getDelegateTracer('toolgate', packageJson.version) !== undefined ||
    propagation.fields().length > 0
  );
}

/** What a span may say of an upstream request: its method and host, never its path or query (tokens). */
interface UpstreamRequestView {
  method: string;
  url: string;
  /** Receives `traceparent` (and `tracestate`) for the provider. */
  headers: Record<string, string>;
}

/** The span (when {@link tracing}) and timer of one tool call; {@link completed} records it. */
export class ToolCallTelemetry {
  private readonly started = performance.now();
  private readonly span: Span | undefined;
  private readonly context: Context | undefined;

  constructor(
    private readonly metrics: Metrics,
    private readonly provider: string,
    private readonly tool: string,
  ) {
    if (!tracing()) return;
    this.span = tracer.startSpan(`execute_tool ${tool}`, {
      kind: SpanKind.INTERNAL,
      attributes: { 'gen_ai.tool.name': tool, 'toolgate.provider': provider },
    });
    this.context = trace.setSpan(context.active(), this.span);
  }

  /** Runs the call with its span active, so upstream calls are its children. */
  within<T>(run: () => Promise<T>): Promise<T> {
    return this.context ? context.with(this.context, run) : run();
  }

  /** The call ended: its latency observed (and returned, in seconds), its span closed with the outcome. */
  completed(outcome: ToolOutcome): number {
    const seconds = (performance.now() - this.started) / 1_000;
    this.metrics.toolCall(this.provider, this.tool, outcome, seconds);
    if (this.span) {
      this.span.setAttribute('toolgate.tool.outcome', outcome);
      if (outcome === 'internal_error' || outcome === 'upstream_error')
        this.span.setStatus({ code: SpanStatusCode.ERROR });
      this.span.end();
    }
    return seconds;
  }
}

/**
 * Metrics and traces of the gateway, handed to the parts that observe (tools, upstream, OAuth
 * tokens, the MCP routes). Spans carry methods, providers, tools and statuses: never secrets,
 * arguments, results or user ids.
 */
export class Telemetry {
  readonly metrics = new Metrics();

  /**
   * Runs one MCP request's handling in a server span (when {@link tracing}) that continues the
   * caller's trace: W3C `traceparent`/`tracestate` from the request's `params._meta` (where
   * 2026-07-28 puts them) or else its headers, as the operator's registered propagator reads them.
   */
  mcpRequest<T>(
    method: string,
    generation: string,
    carrier: Readonly<Record<string, unknown>>,
    run: () => Promise<T>,
    status: () => number,
  ): Promise<T> {
    // Without tracing, run's own promise: an async function returning it would cost two more ticks.
    if (!tracing()) return run();
    const parent = propagation.extract(ROOT_CONTEXT, carrier);
    const span = tracer.startSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: { 'mcp.method.name': method, 'toolgate.mcp.generation': generation },
      },
      parent,
    );
    return context.with(trace.setSpan(parent, span), run).then(
      (result) => {
        span.setAttribute('http.response.status_code', status());
        span.end();
        return result;
      },
      (error: unknown) => {
        // A refusal (its status is set by the error handler, after this) or a fault.
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
        throw error;
      },
    );
  }

  /** Starts timing a tool call (`provider`, `tool`: catalog names or the fixed labels). */
  toolCallStarted(provider: string, tool: string): ToolCallTelemetry {
    return new ToolCallTelemetry(this.metrics, provider, tool);
  }

  /**
   * Sends one provider request, in a client span with `traceparent` injected into its headers when
   * {@link tracing}, and counts its HTTP status (or `error` when no response came).
   */
  async upstreamCall<T extends { status: number }>(
    provider: string,
    request: UpstreamRequestView,
    send: () => Promise<T>,
  ): Promise<T> {
    const span = tracing() ? upstreamSpan(provider, request) : undefined;
    try {
      const response = await send();
      this.metrics.upstreamResponse(provider, response.status);
      span?.setAttribute('http.response.status_code', response.status);
      if (response.status >= 500) span?.setStatus({ code: SpanStatusCode.ERROR });
      return response;
    } catch (error) {
      this.metrics.upstreamResponse(provider, 'error');
      span?.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span?.end();
    }
  }
}

/** A provider request's client span, its `traceparent` (and `tracestate`) put in the request's headers. */
function upstreamSpan(provider: string, request: UpstreamRequestView): Span {
  const span = tracer.startSpan(request.method, {
    kind: SpanKind.CLIENT,
    attributes: { 'http.request.method': request.method, 'toolgate.provider': provider },
  });
  if (span.isRecording()) span.setAttribute('server.address', hostOf(request.url));
  propagation.inject(trace.setSpan(context.active(), span), request.headers);
  return span;
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return '';
  }
}
