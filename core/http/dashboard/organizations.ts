import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppOwner, OAuthAppInput, OAuthAppSlot } from '../../admin/operations.js';
import { accentRule, html, type Html } from '../html.js';
import { consentStart } from '../oauth-pages.js';
import {
  attempt,
  badge,
  count,
  errorsOf,
  field,
  form,
  notice,
  select,
  sectionPage,
  table,
  time,
  type Dashboard,
  type FieldErrors,
  type FieldOptions,
} from './layout.js';

// A refused app form: which provider's form, its errors, and what was typed (never the secret).
interface Refused {
  provider: string;
  errors: FieldErrors;
  input: OAuthAppInput;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

// After a save, what changed for whom; nothing for a provider the page does not show.
function savedNotice(
  slots: readonly OAuthAppSlot[],
  owner: AppOwner,
  provider: string | undefined,
): string | undefined {
  const slot = slots.find((s) => s.provider.id === provider);
  if (!slot) return undefined;
  const whose = owner ? `${owner.orgId}’s users` : 'users without an app of their organization';
  return `Saved the ${slot.provider.displayName} app: new connections of ${whose} use it, with its branding on the consent pages.`;
}

// The query string naming an owner's app page.
function ownerQuery(owner: Pick<NonNullable<AppOwner>, 'clientName' | 'orgId'> | null): string {
  return owner === null
    ? ''
    : `?client=${encodeURIComponent(owner.clientName)}&org_id=${encodeURIComponent(owner.orgId)}`;
}

/**
 * Organizations and OAuth apps (SPEC.md: Organizations → OAuth Apps): the organizations seen under
 * each client, and per organization and OAuth2 provider its own app with a preview of the consent
 * page its users will see; the same form sets the operator's default app of each provider.
 */
export function organizationsRoutes(dash: FastifyInstance, dashboard: Dashboard): void {
  const { root, ops } = dashboard;
  const page = sectionPage(dashboard, 'organizations');

  function slotCard(request: FastifyRequest, owner: AppOwner, slot: OAuthAppSlot, refused?: Refused): Html {
    const { provider, app } = slot;
    const mine = refused?.provider === provider.id ? refused : undefined;
    const errors = mine?.errors ?? {};
    const typed = (name: keyof OAuthAppInput, stored: string | undefined): string =>
      mine ? text(mine.input[name]) : (stored ?? '');
    // A field of this provider's form: its id unique in a page of one form per provider, its error
    // after a refused save.
    const appField = (
      name: keyof OAuthAppInput,
      options: Omit<FieldOptions, 'name' | 'id' | 'error'>,
    ): Html => field({ name, id: `${provider.id}-${name}`, error: errors[name], ...options });
    const status = app
      ? badge('ok', owner ? 'own app' : 'stored app')
      : slot.fromEnvironment
        ? badge('ok', 'from the environment')
        : owner
          ? badge('off', 'uses the default app')
          : badge('warn', 'not set up');
    const branding = app?.branding ?? null;
    return html`<section class="card" id="app-${provider.id}">
      <h2>${provider.displayName} <span class="muted">${provider.id}</span> ${status}</h2>
      <div class="split">
        <div>
          ${
            app
              ? html`<p class="muted">
                  Client id <code>${app.oauthClientId}</code>, stored ${time(app.createdAt)}. The secret is
                  never shown: leave it empty to keep it.
                </p>`
              : slot.fromEnvironment
                ? html`<p class="muted">
                    Set in the environment
                    (TOOLGATE_PROVIDER_${provider.id.replace(/-/g, '_').toUpperCase()}_CLIENT_ID). An app
                    stored here takes its place.
                  </p>`
                : ''
          }
          ${form(
            request,
            `${root}/oauth-apps${ownerQuery(owner)}#app-${provider.id}`,
            html`<input type="hidden" name="provider" value="${provider.id}" />
              ${owner ? html`<input type="hidden" name="client" value="${owner.clientName}" /><input type="hidden" name="org_id" value="${owner.orgId}" />` : ''}
              <div class="stack">
                ${appField('client_id', {
                  label: 'Client id',
                  value: typed('client_id', app?.oauthClientId),
                  required: true,
                  attributes: html`autocomplete="off" spellcheck="false"`,
                })}
                ${appField('client_secret', {
                  label: 'Client secret',
                  hint: app
                    ? 'Write-only. Leave empty to keep the stored secret; a new client id needs its secret.'
                    : 'Write-only: stored encrypted, never shown again.',
                  type: 'password',
                  required: !app,
                  placeholder: app ? '•••••••• (stored)' : '',
                  attributes: html`autocomplete="new-password"`,
                })}
                ${appField('display_name', {
                  label: 'Display name',
                  hint: 'Shown on the consent pages, such as the organization’s name.',
                  value: typed('display_name', branding?.displayName),
                  attributes: html`maxlength="100"`,
                })}
                ${appField('logo_url', {
                  label: 'Logo URL',
                  hint: 'https:// only; shown 40×40.',
                  type: 'url',
                  value: typed('logo_url', branding?.logoUrl),
                  placeholder: 'https://',
                })}
                ${appField('accent_color', {
                  label: 'Accent colour',
                  hint: '#RRGGBB, used for the buttons.',
                  value: typed('accent_color', branding?.accentColor),
                  placeholder: '#4f46e5',
                  attributes: html`pattern="#[0-9a-fA-F]{6}" maxlength="7"`,
                })}
              </div>
              <button type="submit">Save ${provider.displayName} app</button>`,
          )}
        </div>
        <div>
          <p class="preview-label">Consent page preview${app ? '' : ' (no branding yet)'}</p>
          <div class="consent-preview" id="preview-${provider.id}">
            ${consentStart({
              provider,
              branding,
              scope: { clientId: owner?.clientId ?? '', orgId: owner?.orgId ?? null, userId: 'USER_ID' },
              scopes: provider.spec.auth.kind === 'oauth2' ? (provider.spec.auth.scopes?.default ?? []) : [],
            })}
          </div>
        </div>
      </div>
    </section>`;
  }

  async function appsPage(
    request: FastifyRequest,
    reply: FastifyReply,
    owner: AppOwner,
    state: { refused?: Refused; saved?: string } = {},
    status = 200,
  ): Promise<FastifyReply> {
    const slots = await ops.appSlots(owner);
    const users = owner
      ? ((await ops.organizations()).find((o) => o.clientName === owner.clientName && o.orgId === owner.orgId)
          ?.users ?? 0)
      : 0;
    const title = owner ? `Organization ${owner.orgId}` : 'Default OAuth apps';
    return page(
      request,
      reply,
      title,
      html`<p><a href="${root}/organizations">← Organizations</a></p>
        <h1>${title}</h1>
        <p class="lead">
          ${
            owner
              ? html`Under client <strong>${owner.clientName}</strong>, ${count(users, 'user')} so far. Its
                  own OAuth app is used for its users’ new connections (3-level mode), with its branding on
                  the consent pages; without one they use the default app.`
              : html`The operator’s app of each OAuth2 provider, used for every user whose organization has no
                app of its own.`
          }
          Register this redirect URI with the provider: <code>${dashboard.baseUrl}/oauth/callback</code>
        </p>
        ${notice(savedNotice(slots, owner, state.saved))}
        ${
          slots.length > 0
            ? slots.map((slot) => slotCard(request, owner, slot, state.refused))
            : html`<div class="empty">
                <strong>No provider to set up</strong>${
                  owner
                    ? 'No OAuth2 provider of the catalog lets organizations bring their own app (auth.allow_org_apps: true in its manifest).'
                    : 'The catalog has no OAuth2 provider.'
                }
              </div>`
        }`,
      {
        status,
        // Each preview in its app's accent colour, as the consent page would be.
        style: slots
          .map((s) => accentRule(`#preview-${s.provider.id}`, s.app?.branding?.accentColor))
          .join(''),
      },
    );
  }

  dash.get('/organizations', async (request, reply) => {
    const [organizations, clients, defaults] = await Promise.all([
      ops.organizations(),
      ops.clients(),
      ops.appSlots(null),
    ]);
    const rows = organizations.map(
      (o) =>
        html`<tr>
          <td>${o.clientName}</td>
          <td><code>${o.orgId}</code></td>
          <td>${o.users}</td>
          <td>${o.ownApps.length > 0 ? o.ownApps.join(', ') : html`<span class="muted">none</span>`}</td>
          <td>
            <a class="button" href="${root}/oauth-apps${ownerQuery(o)}">OAuth apps</a>
            <a class="button" href="${root}/policies${ownerQuery(o)}">Tool policy</a>
          </td>
        </tr>`,
    );
    const defaultRows = defaults.map(
      (slot) =>
        html`<tr>
          <td>${slot.provider.displayName} <span class="muted">${slot.provider.id}</span></td>
          <td>
            ${
              slot.app
                ? html`<code>${slot.app.oauthClientId}</code>`
                : slot.fromEnvironment
                  ? 'from the environment'
                  : badge('warn', 'not set up: users cannot connect it')
            }
          </td>
          <td><a class="button" href="${root}/oauth-apps#app-${slot.provider.id}">Configure</a></td>
        </tr>`,
    );
    return page(
      request,
      reply,
      'Organizations',
      html`<h1>Organizations</h1>
        <p class="lead">
          Organizations are the <code>org_id</code> values sent with platform keys (3-level mode). Each can
          bring its own OAuth app for the OAuth2 providers that allow it, so its users see its name and
          colours when they approve access.
        </p>
        <section class="card">
          <h2>Organizations seen</h2>
          ${table(
            ['Client', 'org_id', 'Users', 'Own OAuth apps', ''],
            rows,
            html`<strong>No organization yet</strong>An organization appears here once a platform key is used
              with <code>?org_id=…&amp;user_id=…</code>, or set one up below before its first request.`,
          )}
        </section>
        <section class="card">
          <h2>Set up an organization before its first request</h2>
          ${
            clients.length === 0
              ? html`<div class="empty">
                  <strong>No clients yet</strong>Create a client and a platform key under API keys first.
                </div>`
              : html`<form method="get" action="${root}/oauth-apps">
                  <div class="row">
                    ${select({ name: 'client', label: 'Client', choices: clients.map((c) => [c.name, c.name] as const) })}
                    ${field({ name: 'org_id', label: 'org_id', hint: 'As your system sends it (up to 256 characters).', required: true })}
                    <div class="actions"><button type="submit">Open its OAuth apps</button></div>
                  </div>
                </form>`
          }
        </section>
        <section class="card">
          <h2>Default OAuth apps</h2>
          ${table(
            ['Provider', 'Client id', ''],
            defaultRows,
            html`<strong>No OAuth2 provider in the catalog</strong>Add one to the manifests directory and
              reload the catalog.`,
          )}
        </section>`,
    );
  });

  dash.get<{ Querystring: { client?: string; org_id?: string; saved?: string } }>(
    '/oauth-apps',
    async (request, reply) => {
      const owner = await ops.owner(request.query.client, request.query.org_id);
      const saved = request.query.saved;
      return appsPage(request, reply, owner, saved ? { saved } : {});
    },
  );

  dash.post<{ Body: OAuthAppInput & { client?: string; org_id?: string } }>(
    '/oauth-apps',
    async (request, reply) => {
      const input = request.body;
      const owner = await ops.owner(input.client, input.org_id);
      const outcome = await attempt(() => ops.setOAuthApp(owner, input));
      if ('error' in outcome) {
        return appsPage(
          request,
          reply,
          owner,
          { refused: { provider: text(input.provider), errors: errorsOf(outcome.error), input } },
          400,
        );
      }
      const query = ownerQuery(owner);
      const saved = `saved=${encodeURIComponent(text(input.provider))}`;
      return reply.redirect(
        `${root}/oauth-apps${query ? `${query}&${saved}` : `?${saved}`}#app-${text(input.provider)}`,
        303,
      );
    },
  );
}
