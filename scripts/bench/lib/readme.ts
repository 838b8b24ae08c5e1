/**
 * README's Performance figures, generated from a results file (scripts/bench/results.json) so that
 * no figure there is copied by hand: a full `npm run bench` rewrites the block between the markers,
 * and `npm run check` fails when the block differs from what the committed results give.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { markdownRow as row, replaceBlock } from '../../../core/admin/markdown.js';
import { formatMetric, formatPass, formatTarget, type Metric } from './report.js';

export const BEGIN =
  '<!-- bench:begin (written by npm run bench from scripts/bench/results.json: edit scripts/bench/lib/readme.ts, not this block) -->';
export const END = '<!-- bench:end -->';

export interface Results {
  command: string;
  date: string;
  machine: { node: string; cpu: string; cores: number; pinning: string };
  peer: { package: string; version: string | null };
  seconds: number;
  metrics: Record<string, Metric>;
  details: { tools_call?: Record<string, Record<string, number>> };
}

const SECTIONS: [prefix: string, title: string][] = [
  ['call.', 'tools/call'],
  ['list.', 'tools/list'],
  ['sessions.', 'Sessions and streams'],
  ['cluster.', 'PostgreSQL + Redis (ratios to SQLite in the same rounds)'],
  ['catalog.', 'Catalog'],
  ['context.', 'Context (tokens and tool search)'],
];

function callTable(variants: Record<string, Record<string, number>>): string[] {
  const lines = [
    row(['tools/call', 'req/s, 32 clients', 'server CPU per call, 32 clients', 'p50 / p99, 1 client']),
    '|---|---|---|---|',
  ];
  for (const [name, v] of Object.entries(variants)) {
    lines.push(
      row([name, String(v.rps_32), `${v.server_cpu_us_per_call_32} µs`, `${v.p50_ms_1} / ${v.p99_ms_1} ms`]),
    );
  }
  return lines;
}

/** The generated block, markers included. */
export function performanceBlock(results: Results): string {
  const metrics = Object.values(results.metrics);
  const targeted = metrics.filter((m) => m.pass !== null);
  const met = targeted.filter((m) => m.pass).length;
  const background = results.metrics['call.background_cores'];
  const lines = [
    BEGIN,
    `Latest full run: \`${results.command}\` on ${results.date.slice(0, 10)}, ${results.seconds} s; ` +
      `Node ${results.machine.node}, ${results.machine.cpu}, ${results.machine.cores} cores, ` +
      `${results.machine.pinning}.` +
      (background ? ` Other processes on the machine during tools/call: ${formatMetric(background)}.` : '') +
      ` Peer: ${results.peer.version ? `${results.peer.package} ${results.peer.version}` : 'not installed'}.` +
      ' Each figure is the median of its rounds or repeats, its range (lowest–highest) in brackets;' +
      ' a target counts as met only when the whole range meets it.',
    '',
    `**${met} of ${targeted.length} targets met.**`,
  ];
  if (results.details.tools_call) lines.push('', ...callTable(results.details.tools_call));
  for (const [prefix, title] of SECTIONS) {
    const rows = Object.entries(results.metrics).filter(([id]) => id.startsWith(prefix));
    if (rows.length === 0) continue;
    lines.push('', row([title, 'median (range)', 'target', '']), '|---|---|---|---|');
    for (const [, m] of rows) lines.push(row([m.label, formatMetric(m), formatTarget(m), formatPass(m)]));
  }
  lines.push(END);
  return lines.join('\n');
}

/** README's text with its block replaced by the one `results` give; throws when it has no block. */
export function withPerformance(readme: string, results: Results): string {
  return replaceBlock(readme, BEGIN, END, performanceBlock(results));
}

/** Rewrites README's block from the results file; with `check`, only says whether it is up to date. */
export function updateReadme(readmeFile: string, resultsFile: string, check: boolean): boolean {
  const readme = readFileSync(readmeFile, 'utf8');
  const next = withPerformance(readme, JSON.parse(readFileSync(resultsFile, 'utf8')) as Results);
  if (next === readme) return true;
  if (!check) writeFileSync(readmeFile, next);
  return false;
}
