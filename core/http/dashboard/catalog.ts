import { basename } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CatalogReport } from '../../catalog/index.js';
import type { ProviderState } from '../../admin/operations.js';
import { html, type Html } from '../html.js';
import { badge, count, findingsBlock, form, sectionPage, table, time, type Dashboard } from './layout.js';

const STATE_BADGE: Record<ProviderState, Html> = {
  loaded: badge('ok', 'loaded'),
  stale: badge('warn', 'stale: last good version'),
  failed: badge('bad', 'failed'),
};

// The hash is a version for the operator's eye: 12 hex digits tell versions apart.
function shortHash(hash: string): string {
  return hash.replace(/^sha256:/, '').slice(0, 12);
}

function reportCard(report: CatalogReport): Html {
  const lines = (
    [
      ['Added', report.added],
      ['Changed', report.changed],
      ['Removed', report.removed],
      ['Failing, last good version kept', report.keptOld],
      ['Failed', report.failed],
    ] as const
  ).filter(([, ids]) => ids.length > 0);
  const findings = Object.values(report.findings).flat();
  const failing = report.keptOld.length + report.failed.length > 0;
  return html`<section class="card" aria-label="Reload report">
    <h2>
      Reload report ${failing ? badge('bad', 'manifests failing') : badge('ok', 'all loaded')}
      <span class="muted">version ${report.version}${report.swapped ? '' : ' (unchanged)'}</span>
    </h2>
    ${
      lines.length > 0
        ? html`<dl class="meta">
            ${lines.map(
              ([label, ids]) =>
                html`<dt>${label}</dt>
                  <dd>${ids.join(', ')}</dd>`,
            )}
          </dl>`
        : html`<p>Nothing changed: every manifest is as it was.</p>`
    }
    ${findingsBlock(findings)}
  </section>`;
}

/**
 * The catalog: every provider with its state (loaded, stale: failing now but serving its last good
 * version, failed), version hash and counts, its findings, each provider's tools by category, and
 * a reload that shows its report.
 */
export function catalogRoutes(dash: FastifyInstance, dashboard: Dashboard): void {
  const { root, ops } = dashboard;
  const page = sectionPage(dashboard, 'catalog');

  function catalogPage(request: FastifyRequest, reply: FastifyReply, report?: CatalogReport): FastifyReply {
    const status = ops.catalog();
    const rows = status.providers.map(
      ({ id, entry, state, findings }) =>
        html`<tr>
          <td>
            ${
              entry
                ? html`<a href="${root}/catalog/${id}">${entry.displayName}</a>
                    <div class="muted"><code>${id}</code></div>`
                : html`<code>${id}</code>`
            }
          </td>
          <td>${STATE_BADGE[state]}</td>
          <td>${entry?.auth.kind ?? ''}</td>
          <td>
            ${entry ? html`<code title="${entry.contentHash}">${shortHash(entry.contentHash)}</code>` : ''}
          </td>
          <td>${entry?.tools.length ?? ''}</td>
          <td>${entry?.categories.length ?? ''}</td>
          <td>${findings.length > 0 ? findings.length : ''}</td>
        </tr>`,
    );
    const troubled = status.providers.filter((p) => p.state !== 'loaded');
    return page(
      request,
      reply,
      'Catalog',
      html`<h1>Catalog</h1>
        <p class="lead">
          Version ${status.version}, built ${time(status.loadedAt)} from
          <code>${dashboard.manifestsDir}</code>. A reload builds the next version aside and swaps it in only
          where manifests are valid: a broken manifest keeps its last good version serving.
        </p>
        ${form(request, `${root}/catalog/reload`, html`<button type="submit">Reload catalog</button>`, html`class="toolbar"`)}
        ${report ? reportCard(report) : ''}
        ${troubled.map(
          (p) =>
            html`<section class="card">
              <h2>${p.entry?.displayName ?? p.id} ${STATE_BADGE[p.state]}</h2>
              <p class="muted">
                ${
                  p.state === 'stale'
                    ? 'Its manifest fails now; the last good version keeps serving until it is fixed.'
                    : 'Its manifest fails and no earlier version exists: its tools are not available.'
                }
              </p>
              ${findingsBlock(p.findings)}
            </section>`,
        )}
        <section class="card">
          <h2>Providers</h2>
          ${table(
            ['Provider', 'Status', 'Auth', 'Version', 'Tools', 'Categories', 'Findings'],
            rows,
            html`<strong>No providers</strong>Put manifests (<code>&lt;id&gt;.yaml</code>) in
              <code>${dashboard.manifestsDir}</code>, then reload.`,
          )}
        </section>`,
    );
  }

  dash.get('/catalog', (request, reply) => catalogPage(request, reply));

  dash.post('/catalog/reload', async (request, reply) =>
    catalogPage(request, reply, await ops.reloadCatalog()),
  );

  dash.get<{ Params: { id: string } }>('/catalog/:id', (request, reply) => {
    const { entry, state, findings } = ops.provider(request.params.id);
    if (!entry) return catalogPage(request, reply);
    const tools = new Map(entry.tools.map((t) => [t.name, t]));
    return page(
      request,
      reply,
      entry.displayName,
      html`<p><a href="${root}/catalog">← Catalog</a></p>
        <h1>${entry.displayName} ${STATE_BADGE[state]}</h1>
        <p class="lead">${entry.description}</p>
        <section class="card">
          <dl class="meta">
            <dt>Id</dt>
            <dd><code>${entry.id}</code></dd>
            <dt>Authentication</dt>
            <dd>${entry.auth.kind}</dd>
            <dt>Version</dt>
            <dd><code>${entry.contentHash}</code></dd>
            <dt>Manifest</dt>
            <dd><code>${basename(entry.file)}</code></dd>
            ${
              entry.plugin
                ? html`<dt>Plugin</dt>
                    <dd><code>${entry.plugin}</code></dd>`
                : ''
            }
            ${
              entry.docsUrl
                ? html`<dt>Documentation</dt>
                    <dd>${entry.docsUrl}</dd>`
                : ''
            }
            ${
              entry.limits
                ? html`<dt>Limits</dt>
                    <dd>${entry.limits}</dd>`
                : ''
            }
            <dt>Tools</dt>
            <dd>
              ${count(entry.tools.length, 'tool')} in
              ${count(entry.categories.length, 'category', 'categories')}
            </dd>
          </dl>
          ${findingsBlock(findings)}
        </section>
        ${entry.categories.map(
          (category) =>
            html`<section class="card">
              <h2>${category.title} <span class="muted">${count(category.tools.length, 'tool')}</span></h2>
              ${category.description ? html`<p class="muted">${category.description}</p>` : ''}
              ${table(
                ['Tool', 'Description'],
                category.tools.map(
                  (name) =>
                    html`<tr>
                      <td><code>${name}</code></td>
                      <td>${(tools.get(name)?.description ?? '').split('\n', 1)[0]}</td>
                    </tr>`,
                ),
                html`No tools in this category.`,
              )}
            </section>`,
        )}`,
    );
  });
}
