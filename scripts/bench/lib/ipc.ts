import type { KeyType } from '../../../core/domain.js';
import type { Miss } from '../../../test/fixtures/retrieval/recall.js';
/** The messages between run.ts and its bench-only child processes (gateway.ts, catalog.ts, context.ts, list.ts). */

export type BenchCommand =
  | { id: number; cmd: 'heap' }
  | { id: number; cmd: 'key'; client: string; keyType: KeyType }
  /**
   * Stores a connection (placeholder credentials, never checked) to each provider, or to every
   * provider of the catalog, for the user `userId` of the named client; answers the provider ids.
   */
  | { id: number; cmd: 'connect'; client: string; userId: string; providers: string[] | 'all' }
  | { id: number; cmd: 'reload' }
  | { id: number; cmd: 'sessions' }
  /** `cpu`: V8's sampling CPU profiler; `heap`: its sampling heap profiler, collected objects included. */
  | { id: number; cmd: 'profile-start'; kind: ProfileKind }
  | { id: number; cmd: 'profile-stop'; file: string }
  | { id: number; cmd: 'exit' };

export type ProfileKind = 'cpu' | 'heap';

/** Distributes Omit over the union, so each command keeps its own fields. */
export type BenchCommandInput = BenchCommand extends infer C
  ? C extends { id: number }
    ? Omit<C, 'id'>
    : never
  : never;

export interface BenchReply {
  type: 'reply';
  id: number;
  ok: boolean;
  result: unknown;
}

export interface GatewayReady {
  type: 'ready';
  url: string;
  /** Milliseconds from process start until the gateway's modules were imported. */
  importMs: number;
  /** Gateway.create: store, migrations, keys, catalog load. */
  createMs: number;
  /** listen(): the HTTP server bound, timers started. */
  listenMs: number;
  tools: number;
  providers: number;
}

/** What catalog.ts reports for one cold build. */
export interface CatalogProbe {
  type: 'catalog';
  ms: number;
  providers: number;
  tools: number;
  failed: string[];
  /** Resident set before the build and at its peak (bytes). */
  rssBefore: number;
  rssPeak: number;
  heapUsedAfter: number;
  /** The largest tool inputSchema, serialised (bytes). */
  maxInputBytes: number;
}

/** What corpus.ts reports for each document, one line each, as it goes. */
export interface DocumentProbe {
  type: 'document';
  file: string;
  ms: number;
  /** Operations of the document: the tools plus those skipped with a finding. */
  operations: number;
  tools: number;
  /** The first error finding's code when the provider does not load. */
  error?: string;
  maxInputBytes: number;
  /** The process's peak resident set so far (bytes). */
  rssPeak: number;
}

/** Tool search timed over one catalog (context.ts). Milliseconds. */
export interface SearchTimes {
  tools: number;
  /** Building the index (ToolIndex.of on a fresh snapshot). */
  indexMs: number;
  /** Medians over the passes of each pass's p50 and p95 over the retrieval set's requests. */
  p50: number;
  p95: number;
}

/** What context.ts reports: search latency over the bundled and a synthetic catalog, and recall. */
export interface SearchProbe {
  type: 'search';
  requests: number;
  passes: number;
  bundled: SearchTimes;
  synthetic: SearchTimes;
  /** recall@k of the retrieval set over the bundled catalog, and its misses. */
  recall: number;
  misses: Miss[];
  /** The same of the held-out set (test/fixtures/retrieval/held-out.yaml). */
  heldOut: { requests: number; recall: number; misses: Miss[] };
}

/** What a window of load measured (lib/load.ts, runWindow); list.ts sends its windows to run.ts. */
export interface WindowResult {
  requests: number;
  seconds: number;
  /** Requests per second. */
  rps: number;
  /** Latencies in milliseconds. */
  p50: number;
  p99: number;
  /** Server CPU per request, microseconds. */
  cpuPerRequestUs: number;
  /** Fraction of one core the load generator itself used (near 1: the client side is the limit). */
  generatorBusy: number;
  /** Cores used meanwhile by processes outside the benchmark (a shared machine's noise). */
  background: number;
  /** How many more times the window was measured because other processes were busy (lib/load.ts). */
  remeasured?: number;
  errors: number;
  firstError?: string;
}

/** One list for tools/list's load generator (list.ts) to load: listTarget's arguments, and its name in the report. */
export interface ListSpec {
  name: string;
  url: string;
  pid: number;
  key: string;
  query: string;
  transport: 'modern' | 'legacy';
  size: number;
}

/** What list.ts runs: its lists in interleaved rounds of one window each, one client. */
export interface ListPlan {
  lists: ListSpec[];
  rounds: number;
  windowMs: number;
  settleMs: number;
  /** The benchmark's processes: their CPU is not other processes' load (WindowResult.background). */
  benchPids: number[];
}

/** Each round's windows by list name (one window per round: one client). */
export type ListRounds = Record<string, WindowResult[]>[];
