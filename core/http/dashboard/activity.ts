import type { FastifyInstance } from 'fastify';
import { auditWho, milliseconds, type Activity, type AuditQuery } from '../../admin/audit.js';
import { html, type Html } from '../html.js';
import { lines, PALETTE, stackedBars, type ChartSeries } from './charts.js';
import { attempt, badge, errorsOf, field, sectionPage, table, time, type Dashboard } from './layout.js';

/** The windows the page offers: label, hours, buckets (5 minutes, 1 hour, 6 hours). */
const RANGES = {
  '1h': { label: 'Last hour', hours: 1, buckets: 12 },
  '24h': { label: 'Last 24 hours', hours: 24, buckets: 24 },
  '7d': { label: 'Last 7 days', hours: 168, buckets: 28 },
} as const;
type Range = keyof typeof RANGES;

/** Drawing units across a chart in a half-width card (charts.ts): its text as large as a full one's. */
const HALF_WIDTH = 420;

/** Providers drawn in colours of their own; the rest add up to "other providers". */
const SHOWN_PROVIDERS = PALETTE.length - 1;

const FILTERS = [
  ['client', 'Client', 'name'],
  ['org', 'Organization', 'org_id'],
  ['user', 'User', 'user_id'],
  ['provider', 'Provider', 'provider id'],
] as const;

type Query = Partial<Record<'range' | (typeof FILTERS)[number][0], string>>;

const STYLE = `
.stats{display:grid;grid-template-columns:repeat(4,minmax(0,1fr));gap:16px;margin:0 0 20px}@media(max-width:800px){.stats{grid-template-columns:repeat(2,minmax(0,1fr))}}
.stat{background:#fff;border:1px solid var(--line);border-radius:12px;padding:14px 18px}.stat b{display:block;font-size:24px}.stat span{color:var(--muted);font-size:13px}
svg.chart{width:100%;height:auto;display:block}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;list-style:none;padding:0;margin:8px 0 0;font-size:13px;color:var(--muted)}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px;vertical-align:middle}
td.message{max-width:460px;overflow-wrap:anywhere}`;

function bucketLabel(iso: string, range: Range): string {
  return range === '7d' ? `${iso.slice(5, 10)} ${iso.slice(11, 16)}` : iso.slice(11, 16);
}

/** Calls per provider, the busiest first, the others summed into one series. */
function providerSeries(activity: Activity): ChartSeries[] {
  const shown = activity.series.slice(0, SHOWN_PROVIDERS);
  const rest = activity.series.slice(SHOWN_PROVIDERS);
  const series: ChartSeries[] = shown.map((s) => ({ name: s.provider, values: s.counts }));
  if (rest.length > 0)
    series.push({
      name: `${rest.length} other providers`,
      values: activity.bucketStarts.map((_, i) => rest.reduce((sum, s) => sum + s.counts[i]!, 0)),
    });
  return series;
}

const percent = (rate: number): string => `${Math.round(rate * 1000) / 10} %`;

function outcomeBadge(outcome: string): Html {
  return badge(outcome === 'error' ? 'warn' : 'bad', outcome);
}

/**
 * The Activity page (issue 18): the tool calls of the audit trail over a window, per provider, with
 * their error rate, latency percentiles and recent failures, filtered by client, organization, user
 * and provider. Charts are SVG drawn here (charts.ts): the page has no script.
 */
export function activityRoutes(dash: FastifyInstance, dashboard: Dashboard): void {
  const { root, ops } = dashboard;
  const page = sectionPage(dashboard, 'activity');

  dash.get<{ Querystring: Query }>('/activity', async (request, reply) => {
    const range: Range =
      request.query.range && request.query.range in RANGES ? (request.query.range as Range) : '24h';
    const window = RANGES[range];
    const query: AuditQuery = {};
    for (const [name] of FILTERS) query[name] = request.query[name];
    const outcome = await attempt(() => ops.activity(query, window));
    const errors = 'error' in outcome ? errorsOf(outcome.error) : {};
    const filterParams = FILTERS.flatMap(([name]) => {
      const value = request.query[name]?.trim();
      return value ? [`${name}=${encodeURIComponent(value)}`] : [];
    });
    const link = (to: Range): string => `${root}/activity?${[`range=${to}`, ...filterParams].join('&')}`;
    const filters = html`<section class="card">
      <form method="get" action="${root}/activity" class="row" aria-label="Filter activity">
        <input type="hidden" name="range" value="${range}" />
        ${FILTERS.map(([name, label, hint]) =>
          field({
            name,
            label,
            hint: `The ${hint}; empty: all`,
            value: request.query[name] ?? '',
            error: errors[name],
          }),
        )}
        <div class="actions">
          <button type="submit">Apply</button>
          ${filterParams.length > 0 ? html`<a class="button" href="${root}/activity?range=${range}">Clear</a>` : ''}
        </div>
      </form>
    </section>`;
    const heading = html`<h1>Activity</h1>
      <p class="lead">
        Tool calls recorded in the audit trail, ${window.label.toLowerCase()} (UTC). Every call and connection
        event is also in <code>toolgate audit list</code>.
      </p>
      <nav class="tabs" aria-label="Time window">
        ${Object.entries(RANGES).map(
          ([id, r]) =>
            html`<a href="${link(id as Range)}" ${id === range ? html` aria-current="page"` : ''}
              >${r.label}</a
            >`,
        )}
      </nav>
      ${filters}`;
    if ('error' in outcome) return page(request, reply, 'Activity', heading, { style: STYLE, status: 400 });
    const activity = outcome.value;
    if (activity.calls === 0)
      return page(
        request,
        reply,
        'Activity',
        html`${heading}
          <div class="empty">
            <strong>No tool calls here</strong>No call matching these filters was recorded in this window.
            Calls appear within a second of being made.
          </div>`,
        { style: STYLE },
      );
    const buckets = activity.bucketStarts.map((iso) => bucketLabel(iso, range));
    const ms = (us: number | null): string => (us === null ? '—' : milliseconds(us));
    const failureRows = activity.recentFailures.map(
      (r) =>
        html`<tr>
          <td>${time(r.at, true)}</td>
          <td><code>${auditWho(r)}</code></td>
          <td>${r.provider ?? html`<span class="muted">system</span>`}<br /><code>${r.tool ?? ''}</code></td>
          <td>
            ${outcomeBadge(r.outcome)}${r.upstreamStatus === null ? '' : html`<br /><span class="muted">HTTP ${r.upstreamStatus}</span>`}
          </td>
          <td class="message">${r.message ?? ''}</td>
        </tr>`,
    );
    return page(
      request,
      reply,
      'Activity',
      html`${heading}
        <div class="stats">
          <div class="stat"><b>${activity.calls.toLocaleString('en-US')}</b><span>tool calls</span></div>
          <div class="stat">
            <b>${percent(activity.failures / activity.calls)}</b
            ><span>failed (${activity.failures.toLocaleString('en-US')})</span>
          </div>
          <div class="stat"><b>${ms(activity.overall.p50)}</b><span>median latency (p50)</span></div>
          <div class="stat"><b>${ms(activity.overall.p95)}</b><span>p95 latency</span></div>
        </div>
        ${
          activity.truncated
            ? html`<div class="warning">
                More calls than the page reads matched: the figures cover the newest
                ${activity.calls.toLocaleString('en-US')}. Narrow the window or the filters.
              </div>`
            : ''
        }
        <section class="card">
          <h2>Calls per provider</h2>
          ${stackedBars({
            label: `Tool calls per provider, ${window.label.toLowerCase()}`,
            buckets,
            series: providerSeries(activity),
            format: (n) => n.toLocaleString('en-US'),
          })}
        </section>
        <div class="split">
          <section class="card">
            <h2>Error rate <span class="muted">calls not ok</span></h2>
            ${lines(
              {
                label: `Share of tool calls that failed, ${window.label.toLowerCase()}`,
                buckets,
                series: [{ name: 'failed calls', values: activity.errorRate }],
                format: percent,
                minMax: 0.1,
                width: HALF_WIDTH,
              },
              ['#dc2626'],
            )}
          </section>
          <section class="card">
            <h2>Latency</h2>
            ${lines(
              {
                label: `Tool call latency p50 and p95, ${window.label.toLowerCase()}`,
                buckets,
                series: [
                  { name: 'p50', values: activity.p50 },
                  { name: 'p95', values: activity.p95 },
                ],
                format: (us) => milliseconds(us),
                width: HALF_WIDTH,
              },
              ['#2563eb', '#d97706'],
            )}
          </section>
        </div>
        <section class="card">
          <h2>Recent failures <span class="muted">the message the agent got</span></h2>
          ${table(
            ['Time', 'Client / org / user', 'Provider / tool', 'Outcome', 'Message'],
            failureRows,
            html`<strong>No failures</strong>Every call in this window succeeded.`,
          )}
        </section>`,
      { style: STYLE },
    );
  });
}
