import type { FastifyInstance } from 'fastify';
import type { ConnectionEvent } from '../../store/types.js';
import { html, type Html } from '../html.js';
import { badge, count, sectionPage, table, time, type Dashboard } from './layout.js';

const EVENT_BADGE: Record<ConnectionEvent, Html> = {
  connected: badge('ok', 'connected'),
  refreshed: badge('off', 'refreshed'),
  reapproval_needed: badge('warn', 're-approval needed'),
  disconnected: badge('off', 'disconnected'),
};

/**
 * The connections overview: how many users have connected each provider, and how many must
 * re-approve, per client and organization; and the recent connection events. Counts and events
 * only: a credential never reaches this page, not even masked.
 */
export function connectionsRoutes(dash: FastifyInstance, dashboard: Dashboard): void {
  const { ops } = dashboard;
  const page = sectionPage(dashboard, 'connections');

  dash.get('/connections', async (request, reply) => {
    const { rows, events } = await ops.connections();
    const total = rows.reduce((sum, r) => sum + r.connected + r.reapprovalNeeded, 0);
    const reapproval = rows.reduce((sum, r) => sum + r.reapprovalNeeded, 0);
    const names = new Map(
      [...ops.catalog().providers].map((p) => [p.id, p.entry?.displayName ?? p.id] as const),
    );
    const provider = (id: string): Html =>
      html`${names.get(id) ?? id}${names.has(id) ? '' : html` <span class="muted">(not in the catalog)</span>`}`;
    return page(
      request,
      reply,
      'Connections',
      html`<h1>Connections</h1>
        <p class="lead">
          ${count(total, 'connection')}${reapproval > 0 ? html`, ${reapproval} waiting for re-approval` : ''}.
          Credentials are private to each user and never shown here.
        </p>
        <section class="card">
          <h2>By client, organization and provider</h2>
          ${table(
            ['Client', 'Organization', 'Provider', 'Connected', 'Re-approval needed'],
            rows.map(
              (r) =>
                html`<tr>
                  <td>${r.clientName}</td>
                  <td>
                    ${r.orgId === null ? html`<span class="muted">none (solo, 2-level)</span>` : html`<code>${r.orgId}</code>`}
                  </td>
                  <td>${provider(r.provider)}</td>
                  <td>${r.connected}</td>
                  <td>${r.reapprovalNeeded > 0 ? badge('warn', String(r.reapprovalNeeded)) : '0'}</td>
                </tr>`,
            ),
            html`<strong>No connections yet</strong>Users connect providers through their agent
              (<code>connect_provider</code>); they are counted here.`,
          )}
        </section>
        <section class="card">
          <h2>Recent events <span class="muted">last ${events.length}</span></h2>
          ${table(
            ['When', 'Event', 'Provider', 'Client', 'org_id', 'user_id', 'Detail'],
            events.map(
              (e) =>
                html`<tr>
                  <td>${time(e.createdAt, true)}</td>
                  <td>${EVENT_BADGE[e.event]}</td>
                  <td>${provider(e.provider)}</td>
                  <td>${e.clientName}</td>
                  <td>${e.scope.orgId ?? ''}</td>
                  <td>${e.scope.userId ?? ''}</td>
                  <td class="muted">${e.detail ?? ''}</td>
                </tr>`,
            ),
            html`<strong>No events yet</strong>Connecting, refreshing, re-approval and disconnecting are
              recorded here.`,
          )}
        </section>`,
    );
  });
}
