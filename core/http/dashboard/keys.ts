import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { keyHint } from '../../auth/keys.js';
import type { IdentityProviderInput } from '../../admin/identity-providers.js';
import type { CreatedKey, KeyTestResult } from '../../admin/operations.js';
import type { ApiKeyRecord } from '../../store/types.js';
import { html, whoFor, type Html } from '../html.js';
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
} from './layout.js';
import type { KeyType } from '../../domain.js';

const TYPE_CHOICES: readonly (readonly [KeyType, string])[] = [
  ['solo', 'Solo: one developer, one user'],
  ['client', 'Client: a company with many users (?user_id=)'],
  ['platform', 'Platform: organizations and their users (?org_id=&user_id=)'],
];

const MODE_HELP: Record<KeyType, string> = {
  solo: 'A solo key: every request acts for the one user of this key. Paste the configuration as it is.',
  client:
    "A client key: replace USER_ID with your user's id (any stable string, such as a database id). Each user_id has its own private connections.",
  platform:
    'A platform key: replace ORG_ID and USER_ID with the organization and user ids of your system. Each (org_id, user_id) pair has its own private connections; an organization can bring its own OAuth apps (Organizations).',
};

interface KeysPageState {
  errors?: FieldErrors;
  /** What the operator typed into a refused form (never a key). */
  values?: Partial<Record<'name' | 'client' | 'type', string>>;
  notice?: string;
}

function testKeyForm(request: FastifyRequest, root: string, error?: string): Html {
  return form(
    request,
    `${root}/keys/test`,
    html`<div class="row">
      ${field({
        name: 'key',
        label: 'API key',
        hint: 'Sent once to this gateway’s /mcp/ for a tools/list; never stored or logged.',
        type: 'password',
        error,
        required: true,
        placeholder: 'toolgate_…',
        attributes: html`autocomplete="off" spellcheck="false"`,
      })}
      <div class="actions"><button type="submit">Test key</button></div>
    </div>`,
  );
}

/**
 * Clients and API keys (SPEC.md: Dashboard → API Keys → Create key): create a client, create a key
 * and see it once, list keys without their values, revoke with a confirmation, and test a key with
 * a real tools/list.
 */
export function keysRoutes(dash: FastifyInstance, dashboard: Dashboard): void {
  const { root, ops } = dashboard;
  const page = sectionPage(dashboard, 'keys');

  async function keysPage(
    request: FastifyRequest,
    reply: FastifyReply,
    state: KeysPageState = {},
    status = 200,
  ): Promise<FastifyReply> {
    const [clients, keys] = await Promise.all([ops.clients(), ops.keys()]);
    const errors = state.errors ?? {};
    const values = state.values ?? {};
    const clientRows = clients.map(
      (c) =>
        html`<tr>
          <td><strong>${c.name}</strong></td>
          <td>${time(c.createdAt)}</td>
          <td>${c.activeKeys}</td>
          <td>${c.revokedKeys}</td>
          <td>
            <a class="button" href="${root}/policies?client=${encodeURIComponent(c.name)}">Tool policy</a>
          </td>
        </tr>`,
    );
    const keyRows = keys.map(
      (k) =>
        html`<tr>
          <td><code>${k.id}</code></td>
          <td><code>${k.hint}</code></td>
          <td>${k.clientName}</td>
          <td>${k.type}</td>
          <td>${time(k.createdAt)}</td>
          <td>${time(k.lastUsedAt)}</td>
          <td>
            ${k.revokedAt === null ? badge('ok', 'active') : html`${badge('off', 'revoked')} ${time(k.revokedAt)}`}
          </td>
          <td>
            <a class="button" href="${root}/keys/${k.id}">Applications</a>
            ${k.revokedAt === null ? html`<a class="button" href="${root}/keys/${k.id}/revoke">Revoke…</a>` : ''}
          </td>
        </tr>`,
    );
    return page(
      request,
      reply,
      'API keys',
      html`<h1>API keys</h1>
        <p class="lead">
          Clients hold keys; a key is shown once, when it is created, and stored only as a hash. Revoke a lost
          key and create a new one: connections belong to the client, so nothing is lost.
        </p>
        ${notice(state.notice)}
        <section class="card">
          <h2>Clients</h2>
          ${table(
            ['Name', 'Created', 'Active keys', 'Revoked keys', ''],
            clientRows,
            html`<strong>No clients yet</strong>A client is whoever holds keys: a developer, a company or a
              platform. Create the first one below.`,
          )}
          <h2 class="sub">Create a client</h2>
          ${form(
            request,
            `${root}/clients`,
            html`<div class="row">
              ${field({
                name: 'name',
                label: 'Name',
                hint: 'Unique, for you to recognise it, such as the company’s name.',
                value: values.name,
                error: errors.name,
                required: true,
                attributes: html`maxlength="100"`,
              })}
              <div class="actions"><button type="submit">Create client</button></div>
            </div>`,
          )}
        </section>
        <section class="card">
          <h2>Create a key</h2>
          ${
            clients.length === 0
              ? html`<div class="empty">
                  <strong>Create a client first</strong>Every key belongs to a client.
                </div>`
              : form(
                  request,
                  `${root}/keys`,
                  html`<div class="row">
                    ${select({
                      name: 'client',
                      label: 'Client',
                      choices: clients.map((c) => [c.name, c.name] as const),
                      value: values.client,
                      error: errors.client,
                    })}
                    ${select({
                      name: 'type',
                      label: 'Type',
                      choices: TYPE_CHOICES,
                      value: values.type,
                      error: errors.type,
                    })}
                    <div class="actions"><button type="submit">Create key</button></div>
                  </div>`,
                )
          }
        </section>
        <section class="card">
          <h2>Keys</h2>
          ${table(
            ['ID', 'Key', 'Client', 'Type', 'Created', 'Last used', 'Status', ''],
            keyRows,
            html`<strong>No keys yet</strong>Create one above; it is shown once, with the configuration to
              paste into an MCP client.`,
          )}
        </section>
        <section class="card">
          <h2>Test a key</h2>
          <p class="muted">Runs a tools/list against this gateway with the key and shows what it returns.</p>
          ${testKeyForm(request, root, errors.key)}
        </section>`,
      { status },
    );
  }

  function createdPage(request: FastifyRequest, reply: FastifyReply, created: CreatedKey): FastifyReply {
    const { key, record, config } = created;
    return page(
      request,
      reply,
      'Key created',
      html`<h1>Key created</h1>
        <p class="lead">
          ${record.type} key <code>${record.id}</code> for client <strong>${record.clientName}</strong>.
        </p>
        <div class="warning" role="alert">
          Copy the key now: this is the only time it is shown. Toolgate keeps only a hash of it.
        </div>
        <section class="card">
          <h2>API key</h2>
          <div class="secret">
            <code id="key-value">${key}</code>
            <button type="button" class="secondary" data-copy="key-value">Copy</button>
          </div>
          <h2 class="sub">MCP client configuration</h2>
          <p class="muted">${MODE_HELP[record.type]}</p>
          <pre id="key-config">${JSON.stringify(config, null, 2)}</pre>
          <button type="button" class="secondary" data-copy="key-config">Copy configuration</button>
        </section>
        <section class="card">
          <h2>Test this key</h2>
          <p class="muted">
            Runs a tools/list against this gateway with the new key, in a new tab, so this page and the key
            stay here.
          </p>
          ${form(
            request,
            `${root}/keys/test`,
            html`<input type="hidden" name="key" value="${key}" /><button type="submit">
                Test this key
              </button>`,
            html`target="_blank"`,
          )}
        </section>
        <p><a href="${root}/keys">Back to API keys</a></p>`,
      { copy: true },
    );
  }

  function testResultPage(
    request: FastifyRequest,
    reply: FastifyReply,
    hint: string,
    result: KeyTestResult,
  ): FastifyReply {
    return page(
      request,
      reply,
      'Key test',
      html`<h1>Key test</h1>
        <p class="lead">tools/list with <code>${hint}</code> against this gateway’s /mcp/ (solo scope).</p>
        <section class="card">
          ${
            result.ok
              ? html`<h2 class="ok">The key works: ${count(result.tools.length, 'tool')}</h2>
                  <ul class="tools">
                    ${result.tools.map((name) => html`<li><code>${name}</code></li>`)}
                  </ul>
                  <p class="muted">
                    The system tools are always there; a provider’s tools appear once a user of the key
                    connects it.
                  </p>`
              : html`<h2>The gateway refused the key</h2>
                  <div class="error" role="alert"><code>${result.code}</code> ${result.message}</div>`
          }
        </section>
        <section class="card">
          <h2>Test another key</h2>
          ${testKeyForm(request, root)}
        </section>
        <p><a href="${root}/keys">Back to API keys</a></p>`,
    );
  }

  dash.get<{ Querystring: { client?: string; revoked?: string } }>('/keys', async (request, reply) => {
    const { client, revoked } = request.query;
    if (revoked !== undefined) {
      const key = (await ops.keys()).find((k) => k.id === revoked && k.revokedAt !== null);
      if (key) {
        return keysPage(request, reply, {
          notice: `Key ${key.id} (${key.hint}) is revoked: requests with it are refused from now on, open sessions included.`,
        });
      }
    }
    if (client !== undefined && (await ops.clients()).some((c) => c.name === client)) {
      return keysPage(request, reply, {
        notice: `Client “${client}” created. Create its first key below.`,
        values: { client },
      });
    }
    return keysPage(request, reply);
  });

  dash.post<{ Body: { name?: string } }>('/clients', async (request, reply) => {
    const outcome = await attempt(() => ops.createClient(request.body.name));
    if ('error' in outcome) {
      return keysPage(
        request,
        reply,
        { errors: errorsOf(outcome.error), values: { name: request.body.name ?? '' } },
        400,
      );
    }
    return reply.redirect(`${root}/keys?client=${encodeURIComponent(outcome.value.name)}`, 303);
  });

  dash.post<{ Body: { client?: string; type?: string } }>('/keys', async (request, reply) => {
    const { client, type } = request.body;
    const outcome = await attempt(() => ops.createKey(client, type));
    if ('error' in outcome) {
      return keysPage(
        request,
        reply,
        { errors: errorsOf(outcome.error), values: { client: client ?? '', type: type ?? '' } },
        400,
      );
    }
    return createdPage(request, reply, outcome.value);
  });

  dash.post<{ Body: { key?: string } }>('/keys/test', async (request, reply) => {
    const outcome = await attempt(() => ops.testKey(request.body.key));
    if ('error' in outcome) return keysPage(request, reply, { errors: errorsOf(outcome.error) }, 400);
    return testResultPage(request, reply, keyHint((request.body.key ?? '').trim()), outcome.value);
  });

  dash.get<{ Params: { id: string }; Querystring: { revoked?: string } }>(
    '/keys/:id',
    async (request, reply) => {
      const key = await ops.key(request.params.id);
      const grants = await ops.grantsOfKey(key.id);
      const idp = key.type === 'solo' ? undefined : await ops.identityProviders.ofKey(key.id);
      const rows = grants.map(
        (g) =>
          html`<tr>
            <td>
              <strong>${g.appName ?? g.appId}</strong><br /><span class="muted">${g.appUri ?? ''}</span>
            </td>
            <td>${g.scope.userId === null ? 'the key’s one user (solo)' : whoFor(g.scope)}</td>
            <td>${g.via === 'idp' ? 'identity provider' : 'API key'}</td>
            <td>${time(g.createdAt)}</td>
            <td>${time(g.lastUsedAt)}</td>
            <td>
              ${g.revokedAt === null ? badge('ok', 'active') : html`${badge('off', 'revoked')} ${time(g.revokedAt)}`}
            </td>
            <td>
              ${
                g.revokedAt === null
                  ? form(
                      request,
                      `${root}/keys/${key.id}/applications/${encodeURIComponent(g.grantId)}/revoke`,
                      html`<button type="submit" class="danger">Revoke</button>`,
                    )
                  : ''
              }
            </td>
          </tr>`,
      );
      return page(
        request,
        reply,
        `Key ${key.id}`,
        html`<h1>Key ${key.id}</h1>
          <p class="lead">
            ${key.type} key <code>${key.hint}</code> of <strong>${key.clientName}</strong>, created
            ${time(key.createdAt)}${key.revokedAt !== null ? html`, revoked ${time(key.revokedAt)}` : ''}.
          </p>
          ${notice(request.query.revoked !== undefined ? 'The application’s access is revoked: its tokens are refused from now on, open streams included.' : undefined)}
          <section class="card">
            <h2>Authorized applications</h2>
            <p class="muted">
              MCP clients that cannot send this key (Claude.ai, ChatGPT and other OAuth connectors) sign in
              through the gateway’s front door and get tokens of their own that act as this key. Revoking one
              here, or revoking the key, ends its access at once.
            </p>
            ${table(
              ['Application', 'Acts for', 'Signed in with', 'Authorized', 'Last used', 'Status', ''],
              rows,
              html`<strong>None yet</strong>An application appears here once someone signs in with this key on
                the front door.`,
            )}
          </section>
          ${
            key.type === 'solo'
              ? ''
              : html`<section class="card">
                  <h2>Identity provider</h2>
                  <p class="muted">
                    ${
                      idp
                        ? html`People sign in on the front door through
                            <strong>${idp.displayName}</strong> (sign-in name <code>${idp.name}</code>) and
                            act as this key, user_id from its <code>${idp.userClaim}</code> claim.`
                        : 'Let people sign in on the front door through the client’s own OpenID Connect provider, user_id proven by its claims.'
                    }
                  </p>
                  <a class="button" href="${root}/keys/${key.id}/identity-provider"
                    >${idp ? 'Change or remove…' : 'Set up…'}</a
                  >
                </section>`
          }
          <p><a href="${root}/keys">Back to API keys</a></p>`,
      );
    },
  );

  dash.post<{ Params: { id: string; grant: string } }>(
    '/keys/:id/applications/:grant/revoke',
    async (request, reply) => {
      await ops.revokeGrant(request.params.id, request.params.grant);
      return reply.redirect(`${root}/keys/${encodeURIComponent(request.params.id)}?revoked=1`, 303);
    },
  );

  /**
   * A key's identity provider (issue 14): people sign in at the front door through it and act as
   * this key, user_id (and org_id) from its claims. The client secret is write-only.
   */
  async function idpPage(
    request: FastifyRequest,
    reply: FastifyReply,
    key: ApiKeyRecord,
    state: { errors?: FieldErrors; values?: IdentityProviderInput; notice?: string } = {},
    status = 200,
  ): Promise<FastifyReply> {
    const idp = await ops.identityProviders.ofKey(key.id);
    const errors = state.errors ?? {};
    const typed = (name: keyof IdentityProviderInput, stored: string | null | undefined): string => {
      const value = state.values?.[name];
      return state.values ? (typeof value === 'string' ? value : '') : (stored ?? '');
    };
    return page(
      request,
      reply,
      'Identity provider',
      html`<h1>Identity provider of key ${key.id}</h1>
        <p class="lead">
          People of <strong>${key.clientName}</strong> sign in at the front door (OAuth clients such as
          Claude.ai) through its own OpenID Connect provider, and act as this ${key.type} key: their
          user_id${key.type === 'platform' ? ' (and org_id)' : ''} comes from the ID token’s claims, proven
          rather than typed. Register <code>${ops.identityProviders.redirectUri}</code> as the redirect URI.
        </p>
        ${notice(state.notice)}
        <section class="card">
          <h2>
            ${idp ? html`${idp.displayName} ${badge('ok', 'set')}` : html`Not set ${badge('off', 'off')}`}
          </h2>
          ${
            idp
              ? html`<p class="muted">
                  Sign-in name <code>${idp.name}</code>, issuer <code>${idp.issuer}</code>, client id
                  <code>${idp.oauthClientId}</code>, updated ${time(idp.updatedAt)}. The secret is never
                  shown: leave it empty to keep it.
                </p>`
              : ''
          }
          ${form(
            request,
            `${root}/keys/${key.id}/identity-provider`,
            html`<div class="row">
                ${field({
                  name: 'name',
                  label: 'Sign-in name',
                  hint: 'What people type on the sign-in page: lowercase letters, digits and -.',
                  value: typed('name', idp?.name),
                  error: errors.name,
                  required: true,
                  attributes: html`maxlength="40" spellcheck="false"`,
                })}
                ${field({
                  name: 'display_name',
                  label: 'Display name',
                  hint: 'Shown on the way there, such as the company’s name.',
                  value: typed('display_name', idp?.displayName),
                  error: errors.display_name,
                })}
              </div>
              <div class="row">
                ${field({
                  name: 'issuer',
                  label: 'Issuer URL',
                  hint: 'As the provider names itself; its /.well-known/openid-configuration is read.',
                  value: typed('issuer', idp?.issuer),
                  error: errors.issuer,
                  required: true,
                  placeholder: 'https://login.example.com',
                })}
              </div>
              <div class="row">
                ${field({
                  name: 'client_id',
                  label: 'Client id',
                  value: typed('client_id', idp?.oauthClientId),
                  error: errors.client_id,
                  required: true,
                  attributes: html`autocomplete="off" spellcheck="false"`,
                })}
                ${field({
                  name: 'client_secret',
                  label: 'Client secret',
                  hint: idp
                    ? 'Write-only. Leave empty to keep the stored secret; a new issuer or client id needs its secret.'
                    : 'Write-only: stored encrypted, never shown again.',
                  type: 'password',
                  error: errors.client_secret,
                  required: !idp,
                  placeholder: idp ? '•••••••• (stored)' : '',
                  attributes: html`autocomplete="new-password"`,
                })}
              </div>
              <div class="row">
                ${field({
                  name: 'user_claim',
                  label: 'user_id claim',
                  hint: 'The ID token claim that gives user_id.',
                  value: typed('user_claim', idp?.userClaim ?? 'sub'),
                  error: errors.user_claim,
                })}
                ${
                  key.type === 'platform'
                    ? field({
                        name: 'org_claim',
                        label: 'org_id claim',
                        hint: 'Optional: the claim that gives org_id.',
                        value: typed('org_claim', idp?.orgClaim),
                        error: errors.org_claim,
                      })
                    : ''
                }
                <div class="actions"><button type="submit">Save</button></div>
              </div>`,
          )}
          ${
            idp
              ? form(
                  request,
                  `${root}/keys/${key.id}/identity-provider/remove`,
                  html`<div class="actions">
                    <button type="submit" class="danger">Remove identity provider</button>
                  </div>`,
                )
              : ''
          }
        </section>
        <p><a href="${root}/keys/${key.id}">Back to key ${key.id}</a></p>`,
      { status },
    );
  }

  dash.get<{ Params: { id: string }; Querystring: { saved?: string; removed?: string } }>(
    '/keys/:id/identity-provider',
    async (request, reply) => {
      const key = await ops.key(request.params.id);
      const { saved, removed } = request.query;
      const text =
        saved !== undefined
          ? 'Saved: people can sign in through it from now on.'
          : removed !== undefined
            ? 'Removed: sign-ins through it end, tokens already granted stay until revoked.'
            : undefined;
      return idpPage(request, reply, key, text ? { notice: text } : {});
    },
  );

  dash.post<{ Params: { id: string }; Body: IdentityProviderInput }>(
    '/keys/:id/identity-provider',
    async (request, reply) => {
      const key = await ops.key(request.params.id);
      const input = { ...request.body, key: key.id };
      const outcome = await attempt(() => ops.identityProviders.set(input));
      if ('error' in outcome) {
        // What was typed comes back, the secret never.
        const values = { ...request.body, client_secret: '' };
        return idpPage(request, reply, key, { errors: errorsOf(outcome.error), values }, 400);
      }
      return reply.redirect(`${root}/keys/${key.id}/identity-provider?saved`, 303);
    },
  );

  dash.post<{ Params: { id: string } }>('/keys/:id/identity-provider/remove', async (request, reply) => {
    const key = await ops.key(request.params.id);
    const idp = await ops.identityProviders.ofKey(key.id);
    if (idp) await ops.identityProviders.remove(idp.name);
    return reply.redirect(`${root}/keys/${key.id}/identity-provider?removed`, 303);
  });

  dash.get<{ Params: { id: string } }>('/keys/:id/revoke', async (request, reply) => {
    const key = await ops.key(request.params.id);
    return page(
      request,
      reply,
      'Revoke key',
      html`<h1>Revoke key ${key.id}?</h1>
        <section class="card">
          <dl class="meta">
            <dt>Key</dt>
            <dd><code>${key.hint}</code></dd>
            <dt>Client</dt>
            <dd>${key.clientName}</dd>
            <dt>Type</dt>
            <dd>${key.type}</dd>
            <dt>Created</dt>
            <dd>${time(key.createdAt)}</dd>
            <dt>Last used</dt>
            <dd>${time(key.lastUsedAt)}</dd>
          </dl>
          ${
            key.revokedAt !== null
              ? html`<p>This key was revoked ${time(key.revokedAt)}.</p>
                  <a class="button" href="${root}/keys">Back to API keys</a>`
              : html`<p>
                    Every request with this key is refused from the next one on, and its open sessions are
                    closed now. This cannot be undone: if ${key.clientName} still needs access, create a new
                    key for it. Its users’ connections are kept.
                  </p>
                  ${form(
                    request,
                    `${root}/keys/${key.id}/revoke`,
                    html`<div class="row">
                      <div class="actions"><button type="submit" class="danger">Revoke key</button></div>
                      <div class="actions"><a class="button" href="${root}/keys">Cancel</a></div>
                    </div>`,
                  )}`
          }
        </section>`,
    );
  });

  dash.post<{ Params: { id: string } }>('/keys/:id/revoke', async (request, reply) => {
    const key = await ops.revokeKey(request.params.id);
    return reply.redirect(`${root}/keys?revoked=${encodeURIComponent(key.id)}`, 303);
  });
}
