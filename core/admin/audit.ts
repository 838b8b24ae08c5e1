/**
 * The audit trail as the operator reads it (issue 18): `toolgate audit list|export` and the
 * dashboard's Activity page. Filters are checked here, once for both; the figures of the Activity
 * page (calls per provider over time, error rate, latency percentiles) are worked out here from the
 * entries of the window, so that both store dialects need nothing but a plain SELECT.
 */
import { AUDIT_EVENTS, AUDIT_OUTCOMES } from '../store/types.js';
import type { AuditFilter, AuditOutcome, AuditRecord, AuditStore } from '../store/types.js';
import { InputError, line } from './input.js';

/** What an operator gives (command-line options, query parameters): strings, all optional. */
export interface AuditQuery {
  since?: unknown;
  until?: unknown;
  client?: unknown;
  org?: unknown;
  user?: unknown;
  provider?: unknown;
  outcome?: unknown;
  event?: unknown;
  limit?: unknown;
}

const DEFAULT_LIMIT = 100;
/** Most entries one read returns; also what `toolgate audit export` reads when given no --limit. */
export const MAX_AUDIT_LIMIT = 100_000;
const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** A time as an operator writes it: ISO 8601 (`2026-11-24T10:00:00Z`, `2026-11-24`) or an age (`90m`, `24h`, `7d`). */
function time(value: unknown, field: string, now: number): string | undefined {
  const text = line(value, field, `--${field}`, 40, true);
  if (text === '') return undefined;
  const age = /^(\d{1,6})([mhd])$/.exec(text);
  if (age) return new Date(now - Number(age[1]) * UNITS[age[2]!]!).toISOString();
  const parsed = Date.parse(text);
  if (Number.isNaN(parsed))
    throw new InputError(
      field,
      `--${field} "${text}" is not a time: give an ISO time (2026-11-24T10:00:00Z, 2026-11-24) or an age (90m, 24h, 7d).`,
    );
  return new Date(parsed).toISOString();
}

function oneOf<T extends string>(value: unknown, field: string, allowed: readonly T[]): T | undefined {
  const text = line(value, field, `--${field}`, 40, true);
  if (text === '') return undefined;
  if (!(allowed as readonly string[]).includes(text))
    throw new InputError(field, `--${field} is one of ${allowed.join(', ')}; got "${text}".`);
  return text as T;
}

/** Checks an operator's filter; refuses (InputError, naming the field and what to give) what it cannot read. */
export function auditFilter(query: AuditQuery, defaultLimit = DEFAULT_LIMIT, now = Date.now()): AuditFilter {
  const filter: AuditFilter = { limit: defaultLimit };
  const since = time(query.since, 'since', now);
  const until = time(query.until, 'until', now);
  if (since !== undefined) filter.since = since;
  if (until !== undefined) filter.until = until;
  for (const [field, label] of [
    ['client', 'the client name'],
    ['org', 'the org_id'],
    ['user', 'the user_id'],
    ['provider', 'the provider id'],
  ] as const) {
    const text = line(query[field], field, label, 256, true);
    if (text !== '') filter[field] = text;
  }
  const outcome = oneOf(query.outcome, 'outcome', AUDIT_OUTCOMES);
  if (outcome !== undefined) filter.outcome = outcome;
  const event = oneOf(query.event, 'event', AUDIT_EVENTS);
  if (event !== undefined) filter.event = event;
  const limit = line(query.limit, 'limit', '--limit', 10, true);
  if (limit !== '') {
    const n = Number(limit);
    if (!Number.isInteger(n) || n < 1 || n > MAX_AUDIT_LIMIT)
      throw new InputError(
        'limit',
        `--limit is a whole number from 1 to ${MAX_AUDIT_LIMIT}; got "${limit}".`,
      );
    filter.limit = n;
  }
  return filter;
}

/** Who an entry is about, as `client/org/user` (the parts it has). */
export function auditWho(record: AuditRecord): string {
  return [record.clientName ?? record.clientId ?? '-', record.orgId, record.userId]
    .filter((part) => part !== null)
    .join('/');
}

/** Microseconds as milliseconds to read: `0.42 ms`, `17 ms`, `1,204 ms`. */
export function milliseconds(us: number): string {
  const ms = us / 1_000;
  if (ms === 0) return '0 ms';
  return `${ms < 10 ? ms.toFixed(2) : Math.round(ms).toLocaleString('en-US')} ms`;
}

/** The entries as a table to read: a header line, then one entry a line, columns aligned. */
export function auditTable(records: readonly AuditRecord[]): string {
  const rows = records.map((r) => [
    r.at,
    r.event,
    auditWho(r),
    r.keyId ?? '-',
    r.provider ?? '-',
    r.tool ?? '-',
    r.outcome,
    r.latencyUs === null ? '-' : milliseconds(r.latencyUs),
    r.upstreamStatus === null ? '-' : String(r.upstreamStatus),
    // One line per entry: a message's line breaks and tabs read as spaces.
    (r.message ?? '').replace(/\s+/g, ' '),
  ]);
  const header = [
    'TIME',
    'EVENT',
    'CLIENT/ORG/USER',
    'KEY',
    'PROVIDER',
    'TOOL',
    'OUTCOME',
    'LATENCY',
    'HTTP',
    'MESSAGE',
  ];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  // The message is last and not padded: it may be long, and nothing follows it.
  return [header, ...rows]
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** One entry as a JSON line (`toolgate audit export`): the stored fields, with the client's name. */
export function auditJsonLine(record: AuditRecord): string {
  return JSON.stringify(record);
}

/** The window the Activity page charts and how finely. */
export interface ActivityWindow {
  /** The whole window, in hours (its end is now). */
  hours: number;
  /** Buckets it is cut into. */
  buckets: number;
}

/** A provider's tool calls in each bucket of the window. */
export interface ProviderSeries {
  provider: string;
  counts: number[];
}

export interface Activity {
  since: string;
  until: string;
  /** Each bucket's start (ISO time). */
  bucketStarts: string[];
  /** Calls per provider per bucket, the busiest provider first. */
  series: ProviderSeries[];
  /** Per bucket: the share of calls that did not end `ok` (null: no call). */
  errorRate: (number | null)[];
  /** Per bucket: latency percentiles in microseconds (null: no call). */
  p50: (number | null)[];
  p95: (number | null)[];
  calls: number;
  failures: number;
  /** Latency percentiles of the whole window, in microseconds (null: no call). */
  overall: { p50: number | null; p95: number | null };
  /** The calls of the window whose outcome was not ok, newest first. */
  recentFailures: AuditRecord[];
  /** Whether the window held more calls than were read (the figures cover the newest ones). */
  truncated: boolean;
}

/** Most entries read for the figures of one page: far more than a day of a busy gateway's chart needs. */
const ACTIVITY_ROWS = 50_000;
const RECENT_FAILURES = 20;

/** The `p`-th percentile (0-1) of sorted values, nearest rank. */
function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

const FAILED: ReadonlySet<AuditOutcome> = new Set(['error', 'refused', 'failed']);

/**
 * The Activity page's figures: the tool calls of the last `window.hours` matching the filter (its
 * own since/until and limit are replaced), bucketed.
 */
export async function activity(
  store: AuditStore,
  filter: AuditFilter,
  window: ActivityWindow,
  now = Date.now(),
): Promise<Activity> {
  const span = window.hours * 3_600_000;
  const width = span / window.buckets;
  const start = now - span;
  const records = await store.list({
    ...filter,
    event: 'tool_call',
    since: new Date(start).toISOString(),
    until: new Date(now + 1).toISOString(),
    limit: ACTIVITY_ROWS,
  });
  const byProvider = new Map<string, number[]>();
  const latencies: number[][] = Array.from({ length: window.buckets }, () => []);
  const failed = new Array<number>(window.buckets).fill(0);
  for (const r of records) {
    const bucket = Math.min(window.buckets - 1, Math.floor((Date.parse(r.at) - start) / width));
    if (bucket < 0) continue;
    const provider = r.provider ?? 'system tools';
    let counts = byProvider.get(provider);
    if (!counts) byProvider.set(provider, (counts = new Array<number>(window.buckets).fill(0)));
    counts[bucket]!++;
    if (r.latencyUs !== null) latencies[bucket]!.push(r.latencyUs);
    if (FAILED.has(r.outcome)) failed[bucket]!++;
  }
  const total = (counts: number[]): number => counts.reduce((a, b) => a + b, 0);
  const series = [...byProvider]
    .map(([provider, counts]) => ({ provider, counts }))
    .sort((a, b) => total(b.counts) - total(a.counts) || a.provider.localeCompare(b.provider));
  const perBucket = series.reduce(
    (sum, s) => sum.map((n, i) => n + s.counts[i]!),
    new Array<number>(window.buckets).fill(0),
  );
  for (const values of latencies) values.sort((a, b) => a - b);
  const all = latencies.flat().sort((a, b) => a - b);
  const failures = records.filter((r) => FAILED.has(r.outcome));
  return {
    since: new Date(start).toISOString(),
    until: new Date(now).toISOString(),
    bucketStarts: perBucket.map((_, i) => new Date(start + i * width).toISOString()),
    series,
    errorRate: perBucket.map((n, i) => (n === 0 ? null : failed[i]! / n)),
    p50: latencies.map((values) => percentile(values, 0.5)),
    p95: latencies.map((values) => percentile(values, 0.95)),
    calls: records.length,
    failures: failures.length,
    overall: { p50: percentile(all, 0.5), p95: percentile(all, 0.95) },
    recentFailures: failures.slice(0, RECENT_FAILURES),
    truncated: records.length === ACTIVITY_ROWS,
  };
}
