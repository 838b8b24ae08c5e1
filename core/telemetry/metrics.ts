import {
  collectDefaultMetrics,
  Counter,
  Gauge,
  Registry,
  type Histogram,
  type CounterConfiguration,
} from 'prom-client';

/**
 * How a tool call ended, as operators count it: `ok`; `tool_error`, a result with isError that the
 * agent can act on (a provider's 4xx, a missing setting); `upstream_error`, the provider failed
 * (5xx, 429, timeout, network, a token endpoint down); `not_connected`, no connection or one that
 * must be re-approved; `refused`, a protocol refusal (unknown tool, invalid arguments) or a call the
 * outbound policy blocked; `internal_error`, a fault of the gateway; `input_required`, the call
 * asked the client for input first (connect_provider's URL elicitation on 2026-07-28).
 */
export type ToolOutcome =
  'ok' | 'tool_error' | 'upstream_error' | 'not_connected' | 'refused' | 'internal_error' | 'input_required';

/** How an OAuth2 token refresh ended (tokens.ts). */
export type RefreshOutcome = 'ok' | 'temporary_error' | 'reapproval_needed';

/** The label of a tool or provider the catalog does not know: callers' free text is never a label. */
export const UNKNOWN_LABEL = '(unknown)';
/** The provider label of the system tools (list_providers, search_tools, ...). */
export const SYSTEM_LABEL = '(system)';

/** What the gauges read when Prometheus scrapes (never on a request's path). */
export interface GaugeSources {
  /** Event streams open in this process (2025 GET streams, 2024 SSE, 2026-07-28 listen). */
  openStreams: () => number;
  /** 2025-era and 2024 SSE sessions of the deployment (the session store's count). */
  sessions: () => Promise<number>;
  catalog: () => { version: number; providers: number; tools: number; failedProviders: number };
}

// Tool latency buckets (seconds): a gateway hop is a millisecond, provider calls tens to thousands.
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * A cache of bound label children, so the hot path resolves labels once: prom-client's
 * `labels(...)` validates and allocates on every call, a child bound once does not.
 */
class Children<T, K extends string | number = string> {
  private readonly map = new Map<K, T>();
  constructor(private readonly make: (key: K) => T) {}
  get(key: K): T {
    let child = this.map.get(key);
    if (child === undefined) this.map.set(key, (child = this.make(key)));
    return child;
  }
}

/** One series of a {@link LatencyHistogram}: its observations per bucket, sum and count. */
class HistogramSeries {
  /** Observations per bucket (not cumulative), the bounds' order. */
  readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Record<string, string>>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = bounds.map(() => 0);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    this.sum += value;
    this.count++;
    for (let i = 0; i < this.bounds.length; i++) {
      if (value <= this.bounds[i]!) {
        this.counts[i]!++;
        return;
      }
    }
  }
}

/** A value of a metric as prom-client's registry reads it. */
interface MetricValue {
  metricName: string;
  labels: Record<string, string | number>;
  sharedLabels: Readonly<Record<string, string>>;
  value: number;
  /** A bucket's: none recorded (prom-client's value). */
  exemplar?: null;
}

/** A metric as prom-client's registry reads it. */
interface MetricData<V> {
  name: string;
  help: string;
  type: string;
  aggregator: string;
  values: V[];
}

/**
 * A histogram that counts in plain numbers and is read by prom-client's registry as its own
 * Histogram is (the same values, so the same exposition; test/unit/telemetry/metrics.test.ts):
 * prom-client's `observe` validates, hashes and looks up the label values on every call, about 6k
 * instructions of a tools/call (scripts/bench/instructions.ts), where a bound series here adds to
 * its numbers.
 */
class LatencyHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series: HistogramSeries[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly bounds: readonly number[],
    registry: Registry,
  ) {
    // The registry takes any object with these members; its type names prom-client's classes.
    registry.registerMetric(this as unknown as Histogram);
  }

  /** A series, to be kept by the caller (Children): each call makes a new one. */
  labels(labels: Record<string, string>): HistogramSeries {
    const one = new HistogramSeries(labels, this.bounds);
    this.series.push(one);
    return one;
  }

  /** The values as prom-client's Histogram gives them to the text exposition. */
  getForPromString(): MetricData<MetricValue> {
    const values: MetricValue[] = [];
    for (const one of this.series) {
      if (one.count === 0) continue;
      const bucket = (le: number | string, value: number): MetricValue => ({
        metricName: `${this.name}_bucket`,
        labels: { le },
        sharedLabels: one.labels,
        value,
        exemplar: null,
      });
      let cumulative = 0;
      this.bounds.forEach((le, i) => values.push(bucket(le, (cumulative += one.counts[i]!))));
      values.push(
        bucket('+Inf', one.count),
        { metricName: `${this.name}_sum`, labels: {}, sharedLabels: one.labels, value: one.sum },
        { metricName: `${this.name}_count`, labels: {}, sharedLabels: one.labels, value: one.count },
      );
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  /** The values as prom-client's Histogram gives them to JSON: the series' labels merged in. */
  get(): MetricData<Omit<MetricValue, 'sharedLabels'>> {
    const data = this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...rest }) => ({
        ...rest,
        labels: { ...labels, ...sharedLabels },
      })),
    };
  }

  reset(): void {
    for (const one of this.series) {
      one.counts.fill(0);
      one.sum = 0;
      one.count = 0;
    }
  }
}

/** One series of a {@link DeferredCounter}: what it counted since the last scrape. */
class CounterSeries {
  pending = 0;
  constructor(readonly labels: Readonly<Record<string, string>>) {}

  inc(): void {
    this.pending++;
  }
}

/**
 * A counter whose series count in plain numbers on the hot path and hand their sums to prom-client
 * when Prometheus scrapes (its `collect`): prom-client's own `inc` hashes and checks the label
 * values on every call, about 1.5k instructions each, three counters a tools/call (scripts/bench,
 * callgrind). What a scrape shows is the same.
 */
class DeferredCounter {
  private readonly series: CounterSeries[] = [];

  constructor(configuration: Omit<CounterConfiguration<string>, 'collect'>) {
    const series = this.series;
    new Counter({
      ...configuration,
      collect() {
        for (const one of series) {
          if (one.pending === 0) continue;
          this.inc(one.labels, one.pending);
          one.pending = 0;
        }
      },
    });
  }

  /** A series, to be kept by the caller (Children): each call makes a new one. */
  labels(labels: Record<string, string>): CounterSeries {
    const one = new CounterSeries(labels);
    this.series.push(one);
    return one;
  }
}

/**
 * The gateway's Prometheus metrics, in a registry of its own (one per gateway, so several in one
 * process, as in tests, never mix). Every label value is bounded: MCP methods from a fixed list,
 * generations, HTTP status codes, provider and tool names from the catalog, outcomes from an enum;
 * never user ids, keys or free text. README.md, "Metrics and traces", lists every series.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Children<Children<Children<CounterSeries, number>>>;
  private readonly toolCalls: Children<Children<Children<HistogramSeries>>>;
  private readonly upstream: Children<Children<CounterSeries, number | 'error'>>;
  private readonly refreshes: Children<Children<CounterSeries>>;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const requests = new DeferredCounter({
      name: 'toolgate_mcp_requests_total',
      help: 'MCP HTTP requests by JSON-RPC method, protocol generation and HTTP status.',
      labelNames: ['method', 'generation', 'status'],
      registers,
    });
    this.requests = new Children(
      (method) =>
        new Children(
          (generation) =>
            new Children<CounterSeries, number>((status) =>
              requests.labels({ method, generation, status: String(status) }),
            ),
        ),
    );
    const toolCalls = new LatencyHistogram(
      'toolgate_tool_call_duration_seconds',
      'Tool calls by provider, tool and outcome, with their latency; _count is the number of calls.',
      LATENCY_BUCKETS,
      this.registry,
    );
    this.toolCalls = new Children(
      (provider) =>
        new Children((tool) => new Children((outcome) => toolCalls.labels({ provider, tool, outcome }))),
    );
    const upstream = new DeferredCounter({
      name: 'toolgate_upstream_responses_total',
      help: 'Provider HTTP calls by provider and HTTP status ("error": no response: timeout, network, refused).',
      labelNames: ['provider', 'status'],
      registers,
    });
    this.upstream = new Children(
      (provider) =>
        new Children<CounterSeries, number | 'error'>((status) =>
          upstream.labels({ provider, status: String(status) }),
        ),
    );
    const refreshes = new DeferredCounter({
      name: 'toolgate_oauth_refreshes_total',
      help: 'OAuth2 token refreshes by provider and outcome (ok, temporary_error, reapproval_needed).',
      labelNames: ['provider', 'outcome'],
      registers,
    });
    this.refreshes = new Children(
      (provider) => new Children((outcome) => refreshes.labels({ provider, outcome })),
    );
  }

  /** The gauges, read from their sources at each scrape. */
  watch(sources: GaugeSources): void {
    const registers = [this.registry];
    new Gauge({
      name: 'toolgate_mcp_open_streams',
      help: 'Event streams open in this process (2025 session streams, 2024 SSE, 2026-07-28 listen).',
      registers,
      collect() {
        this.set(sources.openStreams());
      },
    });
    new Gauge({
      name: 'toolgate_mcp_sessions',
      help: 'Open 2025-era and 2024 SSE sessions of the deployment (shared by every process with Redis).',
      registers,
      async collect() {
        // The session store may be unreachable (Redis down): the other series are still served.
        const count = await sources.sessions().catch(() => undefined);
        if (count !== undefined) this.set(count);
      },
    });
    const catalogGauge = (
      name: string,
      help: string,
      read: (c: ReturnType<GaugeSources['catalog']>) => number,
    ) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(sources.catalog()));
        },
      });
    catalogGauge(
      'toolgate_catalog_version',
      'Version of the catalog this process serves (grows at each reload).',
      (c) => c.version,
    );
    catalogGauge('toolgate_catalog_providers', 'Providers in the catalog served.', (c) => c.providers);
    catalogGauge('toolgate_catalog_tools', 'Provider tools in the catalog served.', (c) => c.tools);
    catalogGauge(
      'toolgate_catalog_failed_providers',
      'Providers whose manifest failed to load (GET /readyz names them and why).',
      (c) => c.failedProviders,
    );
  }

  mcpRequest(method: string, generation: string, status: number): void {
    this.requests.get(method).get(generation).get(status).inc();
  }

  toolCall(provider: string, tool: string, outcome: ToolOutcome, seconds: number): void {
    this.toolCalls.get(provider).get(tool).get(outcome).observe(seconds);
  }

  upstreamResponse(provider: string, status: number | 'error'): void {
    this.upstream.get(provider).get(status).inc();
  }

  oauthRefresh(provider: string, outcome: RefreshOutcome): void {
    this.refreshes.get(provider).get(outcome).inc();
  }

  /** The exposition text, and its content type, for GET /metrics. */
  async exposition(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }
}

/**
 * The MCP methods counted by name (every revision's, 2024-11-05 to 2026-07-28); any other method a
 * client sends is counted as `other`, so a client cannot grow the series with made-up names.
 */
const MCP_METHODS: ReadonlySet<string> = new Set([
  'initialize',
  'ping',
  'server/discover',
  'subscriptions/listen',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/read',
  'resources/templates/list',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
  'logging/setLevel',
  'notifications/initialized',
  'notifications/cancelled',
  'notifications/progress',
  'notifications/roots/list_changed',
]);

/** The `method` label of an MCP method name from a request (its body or its Mcp-Method header). */
export function mcpMethodLabel(method: unknown): string {
  return typeof method === 'string' && MCP_METHODS.has(method) ? method : 'other';
}
