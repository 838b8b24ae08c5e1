/**
 * The benchmark's output: a table on stdout and scripts/bench/results.json, written with a stable
 * key order (insertion order, fixed by the code) and rounded values, so the committed file diffs
 * cleanly between runs.
 */
import { writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';

export interface Target {
  op: '<=' | '>=';
  value: number;
}

export interface Metric {
  label: string;
  value: number;
  unit: string;
  target: Target | null;
  pass: boolean | null;
  /** How it was measured, when the label does not say it all. */
  note?: string;
}

/** Three significant digits: enough for a benchmark, stable enough to diff. */
export function round(value: number): number {
  if (!Number.isFinite(value) || value === 0) return Number.isFinite(value) ? value : NaN;
  const digits = Math.max(0, 2 - Math.floor(Math.log10(Math.abs(value))));
  return Number(value.toFixed(Math.min(digits, 6)));
}

export class Metrics {
  readonly all = new Map<string, Metric>();

  add(id: string, label: string, value: number, unit: string, target?: Target, note?: string): void {
    const pass =
      target === undefined || !Number.isFinite(value)
        ? null
        : target.op === '<='
          ? value <= target.value
          : value >= target.value;
    this.all.set(id, {
      label,
      value: round(value),
      unit,
      target: target ?? null,
      pass,
      ...(note !== undefined ? { note } : {}),
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

export function formatValue(value: number, unit: string): string {
  if (!Number.isFinite(value)) return 'n/a';
  return `${round(value)} ${unit}`;
}

export function metricsTable(metrics: Metrics): string {
  const rows = [...metrics.all.values()].map((m) => [
    m.label,
    formatValue(m.value, m.unit),
    m.target ? `${m.target.op === '<=' ? '≤' : '≥'} ${m.target.value} ${m.unit}` : '',
    m.pass === null ? '' : m.pass ? 'pass' : 'MISS',
  ]);
  return table(['metric', 'value', 'target', ''], rows);
}

/** Writes the results file formatted as the repo's prettier would, so `prettier --check` stays clean. */
export async function writeResults(file: string, results: unknown): Promise<void> {
  const options = (await resolveConfig(file)) ?? {};
  writeFileSync(file, await format(JSON.stringify(results), { ...options, filepath: file }));
}
