import type { FastifyInstance } from 'fastify';
import type { ProviderEntry } from '../catalog/types.js';
import { CLIENT_DOCUMENT_PATH, clientDocument, type OAuthFlows } from '../connections/oauth/index.js';
import type { Config } from '../config.js';
import type { Branding } from '../store/types.js';
import { html, LINK_GONE, page, sendPage, whoFor, type Html } from './html.js';
import type { Scope } from '../domain.js';

/** The organization's name and logo above a page, when it brought its own OAuth app. */
function brandHeader(branding: Branding | null): Html {
  if (!branding?.displayName && !branding?.logoUrl) return html``;
  return html`<div class="brand">
    ${branding.logoUrl ? html`<img src="${branding.logoUrl}" alt="" />` : ''}<strong
      >${branding.displayName ?? ''}</strong
    >
  </div>`;
}

function branded(title: string, branding: Branding | null, body: Html): string {
  return page(title, html`${brandHeader(branding)}${body}`, branding?.accentColor);
}

/** What the consent start page says: which provider, for whom, with which permissions, whose brand. */
export interface ConsentStart {
  provider: ProviderEntry;
  branding: Branding | null;
  scope: Scope;
  scopes: string[];
}

/**
 * The consent start page's content, brand header included. `/oauth/start/<token>` serves it and the
 * dashboard previews it, so an operator sees exactly what users will. Without `action` (a preview)
 * the button leads nowhere.
 */
export function consentStart(info: ConsentStart, action?: string): Html {
  const { provider, branding, scopes } = info;
  const org = branding?.displayName;
  const button = html`<button type="${action ? 'submit' : 'button'}">
    Continue to ${provider.displayName}
  </button>`;
  return html`${brandHeader(branding)}
    <h1>Connect ${provider.displayName}${org ? html` for ${org}` : ''}</h1>
    <p>${provider.description}</p>
    <p>
      You will be sent to ${provider.displayName} to approve access for
      ${whoFor(info.scope)}${scopes.length > 0 ? html` with these permissions:` : '.'}
    </p>
    ${
      scopes.length > 0
        ? html`<ul>
            ${scopes.map((s) => html`<li><code>${s}</code></li>`)}
          </ul>`
        : ''
    }
    <p class="muted">
      The tokens are stored encrypted and used only for the calls your agent makes through this gateway.
    </p>
    ${action ? html`<form method="post" action="${action}">${button}</form>` : button}`;
}

/**
 * The OAuth pages: `/oauth/start/<token>` says what the user will approve and sends them to the
 * provider (the link is used up on that step, not by a mere visit); `/oauth/callback` is the one
 * redirect URI of every provider. Both carry the organization's branding when its own app is used.
 */
export function oauthRoutes(app: FastifyInstance, oauth: OAuthFlows, config: Config): void {
  // Toolgate's Client ID Metadata Document: upstream authorization servers that fetch them know
  // Toolgate by this URL (issue 17). Public by nature; cacheable for an hour.
  const document = JSON.stringify(clientDocument(config));
  app.get(CLIENT_DOCUMENT_PATH, async (_request, reply) =>
    reply
      .header('content-type', 'application/json')
      .header('cache-control', 'public, max-age=3600')
      .send(document),
  );
  app.get<{ Params: { token: string } }>('/oauth/start/:token', async (request, reply) => {
    const info = await oauth.consent.startInfo(request.params.token);
    if (!info) return sendPage(reply, 410, LINK_GONE);
    return sendPage(
      reply,
      200,
      page(
        `Connect ${info.provider.displayName}`,
        consentStart(info, `/oauth/start/${request.params.token}`),
        info.branding?.accentColor,
      ),
      // The form's answer redirects to the provider: CSP form-action must allow that origin.
      { formTargets: [info.authorizationOrigin] },
    );
  });

  app.post<{ Params: { token: string } }>('/oauth/start/:token', async (request, reply) => {
    const location = await oauth.consent.begin(request.params.token);
    if (!location) return sendPage(reply, 410, LINK_GONE);
    return reply
      .code(303)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .redirect(location);
  });

  app.get('/oauth/callback', async (request, reply) => {
    const outcome = await oauth.consent.callback(request.query as Record<string, unknown>);
    if (!outcome.ok) {
      return sendPage(
        reply,
        outcome.status,
        branded(
          outcome.title,
          outcome.branding,
          html`<h1>${outcome.title}</h1>
            <p>${outcome.message}</p>`,
        ),
      );
    }
    const name = outcome.provider.displayName;
    return sendPage(
      reply,
      200,
      branded(
        `${name} connected`,
        outcome.branding,
        html`<h1 class="ok">${name} is connected</h1>
          <p>
            ${outcome.account ? html`Connected as <strong>${outcome.account}</strong>. ` : ''}You can close
            this window and return to your agent: ${name}'s tools are available now.
          </p>`,
      ),
    );
  });
}
