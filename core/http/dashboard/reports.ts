import type { FastifyInstance } from 'fastify';
import { html } from '../html.js';
import { badge, form, notice, sectionPage, table, time, type Dashboard } from './layout.js';

const FILTERS = [
  ['open', 'Open'],
  ['resolved', 'Resolved'],
  ['all', 'All'],
] as const;

type Filter = (typeof FILTERS)[number][0];

/** Problem reports filed with `report_problem`, newest first; the operator marks them resolved. */
export function reportsRoutes(dash: FastifyInstance, dashboard: Dashboard): void {
  const { root, ops } = dashboard;
  const page = sectionPage(dashboard, 'reports');

  dash.get<{ Querystring: { status?: string; resolved?: string } }>('/reports', async (request, reply) => {
    const filter: Filter = FILTERS.some(([id]) => id === request.query.status)
      ? (request.query.status as Filter)
      : 'open';
    const reports = await ops.reports(filter === 'all' ? undefined : filter);
    const rows = reports.map(
      (r) =>
        html`<tr>
          <td>${time(r.createdAt)}</td>
          <td>
            ${r.clientName}${r.scope.orgId !== null ? html`<br /><span class="muted">org_id</span> <code>${r.scope.orgId}</code>` : ''}${
              r.scope.userId !== null
                ? html`<br /><span class="muted">user_id</span> <code>${r.scope.userId}</code>`
                : ''
            }
          </td>
          <td>
            ${r.provider ?? html`<span class="muted">—</span>`}${r.tool ? html`<br /><code>${r.tool}</code>` : ''}
          </td>
          <td>
            <strong>${r.summary}</strong>${r.details ? html`<pre>${r.details}</pre>` : ''}
            <div class="muted"><code>${r.id}</code></div>
          </td>
          <td>
            ${
              r.resolvedAt === null
                ? html`${badge('warn', 'open')}
                  ${form(request, `${root}/reports/${r.id}/resolve`, html`<button type="submit" class="secondary">Mark resolved</button>`)}`
                : html`${badge('ok', 'resolved')}<br />${time(r.resolvedAt)}`
            }
          </td>
        </tr>`,
    );
    // The notice names a report only if it really is resolved: a crafted link cannot claim otherwise.
    const resolved = (await ops.reports('resolved')).find((r) => r.id === request.query.resolved)?.id;
    return page(
      request,
      reply,
      'Problem reports',
      html`<h1>Problem reports</h1>
        <p class="lead">What agents reported with the <code>report_problem</code> tool, newest first.</p>
        ${notice(resolved ? `Report ${resolved} is marked resolved.` : undefined)}
        <nav class="tabs" aria-label="Filter">
          ${FILTERS.map(
            ([id, label]) =>
              html`<a href="${root}/reports?status=${id}" ${id === filter ? html` aria-current="page"` : ''}
                >${label}</a
              >`,
          )}
        </nav>
        <section class="card">
          ${table(
            ['Filed', 'Scope', 'Provider / tool', 'Report', 'Status'],
            rows,
            filter === 'open'
              ? html`<strong>No open reports</strong>Agents file reports with the
                  <code>report_problem</code> tool; they appear here.`
              : html`<strong>No reports here</strong>Reports filed with <code>report_problem</code> appear
                  under Open until you mark them resolved.`,
          )}
        </section>`,
    );
  });

  dash.post<{ Params: { id: string } }>('/reports/:id/resolve', async (request, reply) => {
    await ops.resolveReport(request.params.id);
    return reply.redirect(
      `${root}/reports?status=open&resolved=${encodeURIComponent(request.params.id)}`,
      303,
    );
  });
}
