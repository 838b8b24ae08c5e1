/**
 * Charts of the dashboard, drawn on the server as inline SVG: no script, nothing fetched, so the
 * dashboard's Content-Security-Policy stays as it is. Each chart is an `<svg role="img">` whose
 * label says what it shows, followed by an HTML legend.
 */
import { html, type Html } from '../html.js';

/** One coloured series: a value per bucket (null: nothing to draw there). */
export interface ChartSeries {
  name: string;
  values: readonly (number | null)[];
}

export interface ChartOptions {
  /** What the chart shows, for screen readers and as the SVG's title. */
  label: string;
  /** Each bucket's label on the x axis (some are left out when they would crowd). */
  buckets: readonly string[];
  series: readonly ChartSeries[];
  /** How a value on the y axis reads (`12`, `40 %`, `3.1 ms`). */
  format: (value: number) => string;
  /** The y axis starts at 0 and reaches at least this (a rate's axis: 1). */
  minMax?: number;
  /** Drawing units across (the text keeps its size): 720 for a full-width card, less for a narrower one. */
  width?: number;
}

export const PALETTE = [
  '#2563eb',
  '#16a34a',
  '#d97706',
  '#9333ea',
  '#dc2626',
  '#0891b2',
  '#db2777',
  '#64748b',
];

const HEIGHT = 200;
const PAD = { left: 64, right: 12, top: 12, bottom: 26 };
const PLOT_H = HEIGHT - PAD.top - PAD.bottom;

/** The width of a chart and of its plot area. */
function widths(options: ChartOptions): { width: number; plot: number } {
  const width = options.width ?? 720;
  return { width, plot: width - PAD.left - PAD.right };
}
const GRID_LINES = 4;
const MAX_X_LABELS = 8;

/** A round axis maximum at or above `value`: 1, 2 or 5 times a power of ten. */
function niceMax(value: number): number {
  if (value <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return ([1, 2, 5, 10].find((step) => step * power >= value) ?? 10) * power;
}

const round = (n: number): string => String(Math.round(n * 10) / 10);

/** The frame every chart shares: grid lines with their values, bucket labels, and the marks. */
function frame(options: ChartOptions, max: number, marks: Html): Html {
  const { width, plot } = widths(options);
  const grid = Array.from({ length: GRID_LINES + 1 }, (_, i) => {
    const value = (max * i) / GRID_LINES;
    const y = round(PAD.top + PLOT_H - (PLOT_H * i) / GRID_LINES);
    return html`<line x1="${PAD.left}" x2="${width - PAD.right}" y1="${y}" y2="${y}" stroke="#e5e7eb" />
      <text x="${PAD.left - 8}" y="${y}" dy="4" text-anchor="end">${options.format(value)}</text>`;
  });
  const step = Math.max(1, Math.ceil((options.buckets.length * 720) / width / MAX_X_LABELS));
  const slot = plot / options.buckets.length;
  const labels = options.buckets.map((label, i) =>
    i % step === 0
      ? html`<text x="${round(PAD.left + slot * i + slot / 2)}" y="${HEIGHT - 8}" text-anchor="middle"
          >${label}</text
        >`
      : html``,
  );
  return html`<svg
    class="chart"
    viewBox="0 0 ${width} ${HEIGHT}"
    role="img"
    aria-label="${options.label}"
    font-size="11"
    fill="#6b7280"
  >
    <title>${options.label}</title>
    ${grid}${labels}${marks}
  </svg>`;
}

function legend(series: readonly ChartSeries[], colours: readonly string[]): Html {
  return html`<ul class="legend">
    ${series.map(
      (s, i) =>
        html`<li>
          <span class="swatch" style="background:${colours[i % colours.length]}"></span>${s.name}
        </li>`,
    )}
  </ul>`;
}

/** Bars per bucket, the series stacked (calls per provider). */
export function stackedBars(options: ChartOptions): Html {
  const totals = options.buckets.map((_, i) =>
    options.series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0),
  );
  const max = niceMax(Math.max(options.minMax ?? 0, ...totals));
  const slot = widths(options).plot / options.buckets.length;
  const bar = Math.max(1, slot * 0.7);
  const marks = options.buckets.map((_, i) => {
    let base = 0;
    return options.series.map((s, k) => {
      const value = s.values[i] ?? 0;
      if (value === 0) return html``;
      const y = PAD.top + PLOT_H - (PLOT_H * (base + value)) / max;
      base += value;
      return html`<rect
        x="${round(PAD.left + slot * i + (slot - bar) / 2)}"
        y="${round(y)}"
        width="${round(bar)}"
        height="${round((PLOT_H * value) / max)}"
        fill="${PALETTE[k % PALETTE.length]}"
        ><title>${s.name}: ${options.format(value)}</title></rect
      >`;
    });
  });
  return html`${frame(options, max, html`${marks}`)}${legend(options.series, PALETTE)}`;
}

/** A line per series through the middle of each bucket, broken where a bucket has no value. */
export function lines(options: ChartOptions, colours: readonly string[] = PALETTE): Html {
  const present = options.series.flatMap((s) => s.values.filter((v): v is number => v !== null));
  const max = niceMax(Math.max(options.minMax ?? 0, ...present));
  const slot = widths(options).plot / options.buckets.length;
  const point = (i: number, value: number): [string, string] => [
    round(PAD.left + slot * i + slot / 2),
    round(PAD.top + PLOT_H - (PLOT_H * value) / max),
  ];
  const marks = options.series.map((s, k) => {
    const colour = colours[k % colours.length]!;
    const runs: string[][] = [[]];
    s.values.forEach((value, i) => {
      if (value === null) runs.push([]);
      else runs[runs.length - 1]!.push(point(i, value).join(','));
    });
    const dots = s.values.map((value, i) => {
      if (value === null) return html``;
      const [x, y] = point(i, value);
      return html`<circle cx="${x}" cy="${y}" r="3" fill="${colour}"
        ><title>${s.name}: ${options.format(value)}</title></circle
      >`;
    });
    return html`${runs
      .filter((run) => run.length > 1)
      .map(
        (run) => html`<polyline points="${run.join(' ')}" fill="none" stroke="${colour}" stroke-width="2" />`,
      )}${dots}`;
  });
  return html`${frame(options, max, html`${marks}`)}${legend(options.series, colours)}`;
}
