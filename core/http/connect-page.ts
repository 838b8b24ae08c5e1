import type { FastifyInstance } from 'fastify';
import type { CatalogSnapshot, ProviderEntry } from '../catalog/types.js';
import type { ConnectionService } from '../connections/service.js';
import { html, LINK_GONE, page, sendPage, whoFor, type Html } from './html.js';
import type { Scope } from '../domain.js';

export interface ConnectPageDeps {
  catalog: { readonly current: CatalogSnapshot };
  connections: ConnectionService;
}

function form(provider: ProviderEntry, scope: Scope, token: string, error?: string): string {
  const auth = provider.spec.auth;
  const secrets: Html[] = [];
  if (auth.kind === 'api_key') {
    for (const [name, field] of Object.entries(auth.credentials)) {
      secrets.push(
        html`<label for="c-${name}">${field.title}<span class="hint">${field.description ?? ''}</span></label>
          <input id="c-${name}" name="credentials.${name}" type="password" autocomplete="off" required />`,
      );
    }
  } else if (auth.kind === 'webhook_url') {
    secrets.push(
      html`<label for="c-webhook_url"
          >${auth.credential?.title ?? 'Webhook URL'}<span class="hint"
            >${auth.credential?.description ?? `A URL on ${auth.allowed_hosts.join(' or ')}`}</span
          ></label
        >
        <input
          id="c-webhook_url"
          name="credentials.webhook_url"
          type="password"
          autocomplete="off"
          required
          placeholder="https://${auth.allowed_hosts[0] ?? ''}/…"
        />`,
    );
  }
  const fields = Object.entries(provider.spec.connection_fields ?? {}).map(([name, field]) =>
    field.enum
      ? html`<label for="f-${name}"
            >${field.title ?? name}<span class="hint">${field.description ?? ''}</span></label
          >
          <select id="f-${name}" name="fields.${name}">
            ${field.enum.map((v) => html`<option${v === field.default ? html` selected` : ''}>${v}</option>`)}
          </select>`
      : html`<label for="f-${name}"
            >${field.title ?? name}<span class="hint">${field.description ?? ''}</span></label
          >
          <input id="f-${name}" name="fields.${name}" value="${field.default ?? ''}" required />`,
  );
  return page(
    `Connect ${provider.displayName}`,
    html`<div class="brand">
        ${provider.logoUrl ? html`<img src="${provider.logoUrl}" alt="" />` : ''}
        <h1>Connect ${provider.displayName}</h1>
      </div>
      <p>${provider.description}</p>
      <p class="muted">
        What you enter is checked with ${provider.displayName}, then stored encrypted for ${whoFor(scope)} and
        used only for the calls your agent makes through this gateway. It is never shown again, to anyone.
      </p>
      ${error ? html`<div class="error" role="alert">${error}</div>` : ''}
      <form method="post" action="/connect/${token}">
        ${secrets}${fields}<button type="submit">Connect ${provider.displayName}</button>
      </form>`,
  );
}

/** `{"credentials.api_key": "x", "fields.region": "eu"}` -> `{credentials: {api_key: "x"}, fields: {region: "eu"}}`. */
function nest(body: unknown): { credentials: Record<string, string>; fields: Record<string, string> } {
  const out = { credentials: {} as Record<string, string>, fields: {} as Record<string, string> };
  for (const [key, value] of Object.entries(typeof body === 'object' && body !== null ? body : {})) {
    const [group, name] = key.split('.', 2);
    if ((group === 'credentials' || group === 'fields') && name && typeof value === 'string')
      out[group][name] = value;
  }
  return out;
}

/**
 * `/connect/<token>`: the page where a user pastes a secret, so that it never passes through the
 * model (issue 4). The token is single use: taken when the form is posted; if the check fails, the
 * page comes back with the error under a fresh link, and the old one is dead.
 */
export function connectPageRoutes(app: FastifyInstance, deps: ConnectPageDeps): void {
  app.get<{ Params: { token: string } }>('/connect/:token', async (request, reply) => {
    const link = await deps.connections.peekLink(request.params.token);
    const provider =
      link?.purpose === 'credentials' ? deps.catalog.current.providers.get(link.provider) : undefined;
    if (!link || !provider) return sendPage(reply, 410, LINK_GONE);
    return sendPage(reply, 200, form(provider, link.scope, request.params.token));
  });

  app.post<{ Params: { token: string } }>('/connect/:token', async (request, reply) => {
    const link = await deps.connections.consumeLink(request.params.token);
    const provider =
      link?.purpose === 'credentials' ? deps.catalog.current.providers.get(link.provider) : undefined;
    if (!link || !provider) return sendPage(reply, 410, LINK_GONE);
    const outcome = await deps.connections.connect(link.scope, provider, nest(request.body));
    if (!outcome.ok) {
      const { token } = await deps.connections.createLink(link.scope, provider.id, 'credentials');
      return sendPage(reply, 400, form(provider, link.scope, token, outcome.message));
    }
    return sendPage(
      reply,
      200,
      page(
        `${provider.displayName} connected`,
        html`<h1 class="ok">${provider.displayName} is connected</h1>
          <p>
            ${outcome.account ? html`Connected as <strong>${outcome.account}</strong>. ` : ''}You can close
            this window and return to your agent: ${provider.displayName}'s tools are available now.
          </p>`,
      ),
    );
  });
}
