import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PolicyOwner, PolicyView } from '../../admin/policies.js';
import { SURFACE_CHOICES } from '../../domain.js';
import { html } from '../html.js';
import {
  attempt,
  errorsOf,
  field,
  form,
  notice,
  sectionPage,
  select,
  time,
  type Dashboard,
  type FieldErrors,
} from './layout.js';

type OwnerQuery = { client?: string; org_id?: string };
// What the policy form posts: text fields only.
type PolicyForm = OwnerQuery & { surface?: string; allow?: string; deny?: string };

// The query string naming an owner's policy page.
function ownerQuery(owner: PolicyOwner): string {
  const org = owner.orgId === null ? '' : `&org_id=${encodeURIComponent(owner.orgId)}`;
  return `?client=${encodeURIComponent(owner.clientName)}${org}`;
}

const listText = (entries: readonly string[] | null): string => entries?.join(', ') ?? '';

/**
 * Tool policies (issue 15): per client, and per organization of a client, which providers and tools
 * its agents see, and which tool list they are served when a request asks for none. Linked from the
 * client list (API keys) and from each organization.
 */
export function policiesRoutes(dash: FastifyInstance, dashboard: Dashboard): void {
  const { root, ops } = dashboard;
  const pages = {
    keys: sectionPage(dashboard, 'keys'),
    organizations: sectionPage(dashboard, 'organizations'),
  };

  function policyPage(
    request: FastifyRequest,
    reply: FastifyReply,
    owner: PolicyOwner,
    policy: PolicyView,
    state: { errors?: FieldErrors; input?: PolicyForm; notice?: string } = {},
    status = 200,
  ): FastifyReply {
    const errors = state.errors ?? {};
    const typed = (name: 'allow' | 'deny', stored: readonly string[] | null): string =>
      state.input ? (state.input[name] ?? '') : listText(stored);
    const whose = owner.orgId === null ? `client ${owner.clientName}` : `organization ${owner.orgId}`;
    const title = `Tool policy of ${whose}`;
    const hidden = html`<input type="hidden" name="client" value="${owner.clientName}" />${
        owner.orgId === null ? '' : html`<input type="hidden" name="org_id" value="${owner.orgId}" />`
      }`;
    const page = owner.orgId === null ? pages.keys : pages.organizations;
    return page(
      request,
      reply,
      title,
      html`<p>
          <a href="${root}/${owner.orgId === null ? 'keys' : 'organizations'}"
            >← ${owner.orgId === null ? 'API keys' : 'Organizations'}</a
          >
        </p>
        <h1>${title}</h1>
        <p class="lead">
          ${owner.orgId === null ? '' : html`Under client <strong>${owner.clientName}</strong>. `}Which
          providers and tools its agents see: a hidden tool is neither listed, found by search_tools nor
          callable, and a provider all of whose tools are hidden is not in its catalog.
          ${
            owner.orgId === null
              ? 'Each organization of the client can narrow this further.'
              : 'This narrows the client’s policy: a tool must pass both.'
          }
          Entries are provider ids or tool names, separated by commas; <code>*</code> at the end matches any
          suffix (<code>github_*</code>, <code>stripe_list_*</code>).
        </p>
        ${notice(state.notice)}
        <section class="card">
          <h2>Policy</h2>
          <p class="muted">
            ${policy.updatedAt === null ? 'None set: every tool, surface auto.' : html`Saved ${time(policy.updatedAt)}.`}
          </p>
          ${form(
            request,
            `${root}/policies`,
            html`${hidden}
              <div class="stack">
                ${select({
                  name: 'surface',
                  label: 'Tool list',
                  choices: SURFACE_CHOICES.map((s) => [s, s] as const),
                  value: state.input?.surface ?? policy.surface,
                  error: errors.surface,
                })}
                <p class="muted">
                  Served when a request has no <code>tools=</code> parameter (which always wins). auto:
                  compact above the threshold of connected
                  tools${owner.orgId === null ? '' : ', or the client’s choice'}.
                </p>
                ${field({
                  name: 'allow',
                  label: 'Allow only',
                  hint: 'Empty: every tool not denied.',
                  value: typed('allow', policy.allow),
                  error: errors.allow,
                  attributes: html`spellcheck="false" autocomplete="off"`,
                })}
                ${field({
                  name: 'deny',
                  label: 'Deny',
                  hint: 'Hidden even when allowed.',
                  value: typed('deny', policy.deny),
                  error: errors.deny,
                  attributes: html`spellcheck="false" autocomplete="off"`,
                })}
              </div>
              <button type="submit">Save policy</button>`,
          )}
          ${
            policy.updatedAt === null
              ? ''
              : form(
                  request,
                  `${root}/policies/clear`,
                  html`${hidden}<button type="submit" class="secondary">Remove policy</button>`,
                )
          }
        </section>`,
      { status },
    );
  }

  dash.get<{ Querystring: OwnerQuery & { saved?: string } }>('/policies', async (request, reply) => {
    const owner = await ops.policies.owner(request.query.client, request.query.org_id);
    const saved = request.query.saved;
    return policyPage(request, reply, owner, await ops.policies.get(owner), {
      ...(saved === undefined
        ? {}
        : {
            notice:
              saved === 'cleared' ? 'Policy removed.' : 'Policy saved: it applies from the next request.',
          }),
    });
  });

  dash.post<{ Body: PolicyForm }>('/policies', async (request, reply) => {
    const input = request.body;
    const owner = await ops.policies.owner(input.client, input.org_id);
    // Every field of the form is sent: an empty list clears it.
    const outcome = await attempt(() =>
      ops.policies.set(owner, { surface: input.surface, allow: input.allow ?? '', deny: input.deny ?? '' }),
    );
    if ('error' in outcome) {
      const policy = await ops.policies.get(owner);
      return policyPage(request, reply, owner, policy, { errors: errorsOf(outcome.error), input }, 400);
    }
    return reply.redirect(`${root}/policies${ownerQuery(owner)}&saved=1`, 303);
  });

  dash.post<{ Body: OwnerQuery }>('/policies/clear', async (request, reply) => {
    const owner = await ops.policies.owner(request.body.client, request.body.org_id);
    await ops.policies.clear(owner);
    return reply.redirect(`${root}/policies${ownerQuery(owner)}&saved=cleared`, 303);
  });
}
