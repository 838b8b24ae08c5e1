/**
 * The benchmark's output: a table on stdout and scripts/bench/results.json, written with a stable
 * key order (insertion order, fixed by the code) and rounded values, so the committed file diffs
 * cleanly between runs.
 */
import { writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import { median } from './load.js';

export interface Target {
  op: '<=' | '>=';
  value: number;
}

export interface Metric {
  label: string;
  /** The median of the samples (rounds, repeats), or the one measurement. */
  value: number;
  /** The lowest and highest sample, when there was more than one. */
  range?: [number, number];
  unit: string;
  target: Target | null;
  /** Met only when every sample meets the target (the whole range passes). */
  pass: boolean | null;
  /** How it was measured, when the label does not say it all. */
  note?: string;
  /**
   * What the value depends on beyond the code and the machine, such as how many calls callgrind
   * counted after how long a warm-up (a quick run counts fewer, and less warmed up): figures of
   * different bases are not compared for regressions.
   */
  basis?: string;
}

/** Three significant digits: enough for a benchmark, stable enough to diff. */
export function round(value: number): number {
  if (!Number.isFinite(value) || value === 0) return Number.isFinite(value) ? value : NaN;
  const digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(value))));
  return Number(value.toFixed(Math.min(digits, 6)));
}

function meets(value: number, target: Target): boolean {
  return target.op === '<=' ? value <= target.value : value >= target.value;
}

export class Metrics {
  readonly all = new Map<string, Metric>();

  /**
   * One figure: a measurement, or the samples of its rounds or repeats (reported as their median
   * and range, and passing a target only when all of them do); `about` gives its note and basis
   * (Metric).
   */
  add(
    id: string,
    label: string,
    samples: number | readonly number[],
    unit: string,
    target?: Target,
    about: { note?: string | undefined; basis?: string } = {},
  ): void {
    const { note, basis } = about;
    const finite = (typeof samples === 'number' ? [samples] : samples).filter(Number.isFinite);
    const value = median(finite);
    const range: [number, number] | undefined =
      finite.length > 1 ? [round(Math.min(...finite)), round(Math.max(...finite))] : undefined;
    this.all.set(id, {
      label,
      value: round(value),
      ...(range ? { range } : {}),
      unit,
      target: target ?? null,
      // A targeted figure that could not be measured is no pass.
      pass: target === undefined ? null : finite.length > 0 && finite.every((v) => meets(v, target)),
      ...(note !== undefined ? { note } : {}),
      ...(basis !== undefined ? { basis } : {}),
    });
  }
}

function pad(text: string, width: number, right = false): string {
  return right ? text.padStart(width) : text.padEnd(width);
}

/** Prints rows as an aligned text table (first column left-aligned, the others right-aligned). */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => pad(c, widths[i]!, i > 0)).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** `median unit`, with the range after it when there were several samples. */
export function formatMetric(m: Pick<Metric, 'value' | 'range' | 'unit'>): string {
  if (!Number.isFinite(m.value)) return 'n/a';
  return `${round(m.value)} ${m.unit}${m.range ? ` (${m.range[0]}–${m.range[1]})` : ''}`;
}

export function formatTarget(m: Pick<Metric, 'target' | 'unit'>): string {
  return m.target ? `${m.target.op === '<=' ? '≤' : '≥'} ${m.target.value} ${m.unit}` : '';
}

export function formatPass(m: Pick<Metric, 'pass'>): string {
  return m.pass === null ? '' : m.pass ? 'pass' : 'MISS';
}

export function metricsTable(metrics: Metrics): string {
  const rows = [...metrics.all.values()].map((m) => [
    m.label,
    formatMetric(m),
    formatTarget(m),
    formatPass(m),
  ]);
  return table(['metric', 'median (range)', 'target', ''], rows);
}

/** Which way a metric improves: from its target, else from its unit; undefined when neither tells. */
export function better(m: Pick<Metric, 'target' | 'unit'>): 'lower' | 'higher' | undefined {
  if (m.target) return m.target.op === '<=' ? 'lower' : 'higher';
  if (['µs', 'ms', 's', 'B', 'KB', 'MB', 'tokens', 'k instructions'].includes(m.unit)) return 'lower';
  if (m.unit === 'req/s') return 'higher';
  return undefined;
}

/** Relative spread of a metric's samples: (highest − lowest) ÷ median, 0 for one sample. */
function spread(m: Pick<Metric, 'value' | 'range'>): number {
  return m.range && m.value !== 0 ? Math.abs((m.range[1] - m.range[0]) / m.value) : 0;
}

/**
 * The metrics that got worse than in `before` (a previous results file's metrics) beyond the noise
 * band: the larger of `floor` and either run's own relative spread. A metric measured on another
 * basis than before (a quick run's callgrind count against a full run's) is not compared.
 */
export function regressions(
  before: Record<string, Metric>,
  after: Metrics,
  floor = 0.1,
): { id: string; before: Metric; after: Metric; change: number }[] {
  const found: { id: string; before: Metric; after: Metric; change: number }[] = [];
  for (const [id, now] of after.all) {
    const then = before[id];
    const direction = better(now);
    if (
      !then ||
      !direction ||
      then.unit !== now.unit ||
      then.basis !== now.basis ||
      !(then.value > 0) ||
      !Number.isFinite(now.value)
    )
      continue;
    const change = now.value / then.value - 1;
    const band = Math.max(floor, spread(then), spread(now));
    if (direction === 'lower' ? change > band : -change > band)
      found.push({ id, before: then, after: now, change });
  }
  return found;
}

/** Writes the results file formatted as the repo's prettier would, so `prettier --check` stays clean. */
export async function writeResults(file: string, results: unknown): Promise<void> {
  const options = (await resolveConfig(file)) ?? {};
  writeFileSync(file, await format(JSON.stringify(results), { ...options, filepath: file }));
}
