import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AgentApp, FrontDoor, FrontDoorAccount } from '../auth/front-door/index.js';
import { IdentityProviders, IdpSignInError } from '../auth/identity-providers.js';
import type { KeyService } from '../auth/key-service.js';
import { resolveScope } from '../auth/scope.js';
import { GatewayError } from '../errors.js';
import type { ApiKeyRecord, IdentityProviderRecord, IdentityProviderStore } from '../store/types.js';
import type { Scope } from '../domain.js';
import { escapeHtml, html, htmlDocument, page, sendPage, whoFor, type Html } from './html.js';
import type { SignInThrottle, Verdict } from './throttle.js';

/** A key sign-in's result: the key and scope, or why that key cannot have the identifiers asked for. */
type SignedIn = { key: ApiKeyRecord; scope: Scope } | GatewayError;

export interface FrontDoorRoutesDeps {
  frontDoor: FrontDoor;
  keys: KeyService;
  keyRecords: { get(id: string): Promise<ApiKeyRecord | undefined> };
  /** Key sign-ins, counted and throttled like the dashboard's password (their own count). */
  throttle: SignInThrottle;
  /** Sign-in through a client's own identity provider. */
  identityProviders: IdentityProviders;
  idpRecords: IdentityProviderStore;
}

/** oidc-provider's own endpoints, handed the raw request before Fastify reads a body. */
const AUTHORIZATION_SERVER_PATHS = [
  '/authorize',
  '/authorize/:uid',
  '/token',
  '/register',
  '/register/:clientId',
  '/revoke',
  '/jwks',
  '/.well-known/openid-configuration',
  '/.well-known/oauth-authorization-server',
];

/** Dynamic registrations one address may make per hour (RFC 7591 registration is unauthenticated). */
const REGISTRATIONS_PER_HOUR = 20;

/**
 * Counts registrations per source address over the last hour, in this process. Registration
 * creates a stored client, so an unauthenticated caller must not create them without bound; spread
 * over several processes the bound is per process, still a bound.
 */
class RegistrationLimit {
  private readonly seen = new Map<string, number[]>();

  /** Seconds to wait, or 0 when this registration may go ahead (and is counted). */
  take(source: string, now = Date.now()): number {
    const hourAgo = now - 3_600_000;
    const times = (this.seen.get(source) ?? []).filter((t) => t > hourAgo);
    if (times.length >= REGISTRATIONS_PER_HOUR) return Math.ceil((times[0]! - hourAgo) / 1_000);
    times.push(now);
    this.seen.set(source, times);
    if (this.seen.size > 10_000) this.seen.delete(this.seen.keys().next().value!);
    return 0;
  }
}

function appHeader(app: AgentApp): Html {
  const name = app.name ?? app.redirectHost;
  const described = app.documentHost ? html`described by <code>${app.documentHost}</code> · ` : '';
  return html`<div class="brand">
      ${app.logo?.startsWith('https://') ? html`<img src="${app.logo}" alt="" />` : ''}<strong
        >${name}</strong
      >
    </div>
    <p class="muted">
      ${app.uri ? html`${app.uri} · ` : ''}${described}returns you to <code>${app.redirectHost}</code>
    </p>`;
}

/** A form of one button posting `action` to the interaction's page. */
function actionButton(uid: string, action: string, label: string, kind?: 'secondary'): Html {
  return html`<form method="post" action="/signin/${uid}">
    <input type="hidden" name="action" value="${action}" />
    <button type="submit" ${kind ? html`class="${kind}"` : ''}>${label}</button>
  </form>`;
}

function signInPage(uid: string, app: AgentApp, error?: string): string {
  return page(
    'Sign in · Toolgate',
    html`${appHeader(app)}
      <h1>Sign in to Toolgate</h1>
      <p>
        ${app.name ?? 'An MCP client'} asks to use this Toolgate gateway. Sign in with a Toolgate API key.
      </p>
      ${error ? html`<div class="error" role="alert">${error}</div>` : ''}
      <form method="post" action="/signin/${uid}">
        <input type="hidden" name="action" value="key" />
        <label for="key">API key <span class="hint">toolgate_…, as the operator gave it to you</span></label>
        <input id="key" name="key" type="password" autocomplete="off" required autofocus />
        <label for="user_id"
          >user_id
          <span class="hint">with a client or platform key: the user the access acts for</span></label
        >
        <input id="user_id" name="user_id" autocomplete="off" />
        <label for="org_id"
          >org_id <span class="hint">with a platform key: that user's organization</span></label
        >
        <input id="org_id" name="org_id" autocomplete="off" />
        <button type="submit">Continue</button>
      </form>
      <p class="muted">The key is checked here and never given to ${app.name ?? 'the client'}.</p>
      <h2>Sign in through your organization</h2>
      <form method="post" action="/signin/${uid}">
        <input type="hidden" name="action" value="idp" />
        <label for="idp"
          >Sign-in name
          <span class="hint">the short name your organization gave you, such as acme</span></label
        >
        <input id="idp" name="idp" autocomplete="organization" spellcheck="false" />
        <button type="submit">Continue to your organization</button>
      </form>
      ${actionButton(uid, 'deny', 'Cancel', 'secondary')}`,
  );
}

/**
 * On the way to the identity provider. A page that sends the browser on (meta refresh, and a link)
 * rather than a redirect of the form's POST: CSP form-action governs that redirect, and the sign-in
 * page cannot name the identity provider's origin in advance without publishing every client's.
 */
function leavingPage(idp: IdentityProviderRecord, to: URL): string {
  return htmlDocument(
    `Continue to ${idp.displayName} · Toolgate`,
    html`<main>
      <h1>Continue to ${idp.displayName}</h1>
      <p>You are being sent to <code>${to.host}</code> to sign in.</p>
      <p><a href="${to.href}">Continue to ${idp.displayName}</a></p>
    </main>`,
    { head: `<meta http-equiv="refresh" content="0;url=${escapeHtml(to.href)}">` },
  );
}

/** A sign-in through an identity provider that cannot go on; with the way back to the sign-in page while it lasts. */
function idpFailedPage(message: string, uid?: string): string {
  return page(
    'Sign-in failed · Toolgate',
    html`<h1>Signing in through your organization failed</h1>
      <div class="error" role="alert">${message}</div>
      <p class="muted">Nothing was signed in or stored.</p>
      ${uid ? html`<p><a href="/signin/${uid}">Back to the sign-in page</a></p>` : ''}`,
  );
}

const IDP_ANSWER_GONE = idpFailedPage(
  'This answer from your organization’s sign-in was used already, has expired (after ten minutes) or was never asked for. Start again from your MCP client.',
);

function consentPage(uid: string, app: AgentApp, key: ApiKeyRecord, account: FrontDoorAccount): string {
  const scope = { clientId: key.clientId, orgId: account.orgId, userId: account.userId };
  return page(
    'Allow access · Toolgate',
    html`${appHeader(app)}
      <h1>Allow ${app.name ?? 'this client'} to use Toolgate?</h1>
      ${account.via === 'idp' ? html`<p class="muted">You signed in through your organization.</p>` : ''}
      <p>
        It will act as <strong>${key.clientName}</strong> (key ${key.hint}) for ${whoFor(scope)}: list and
        call the tools of the providers connected there, and connect or disconnect providers.
      </p>
      <p class="muted">
        It gets a token of its own, never the key. Revoke it at any time in the dashboard (API keys,
        authorized applications), or by revoking the key.
      </p>
      ${actionButton(uid, 'approve', 'Allow')} ${actionButton(uid, 'deny', 'Deny', 'secondary')}`,
  );
}

/** What a browser is shown when an authorization-server step fails (oidc-provider's renderError). */
export function frontDoorErrorPage(out: {
  error?: string | undefined;
  error_description?: string | undefined;
}): string {
  return page(
    'Sign-in failed · Toolgate',
    html`<h1>This sign-in cannot go on</h1>
      <p>${out.error_description ?? 'The request could not be completed.'}</p>
      <p class="muted">
        Start again from your MCP client: it opens a fresh sign-in page.
        ${out.error ? html`<code>${out.error}</code>` : ''}
      </p>`,
  );
}

const SIGN_IN_GONE = page(
  'Sign-in expired',
  html`<h1>This sign-in has expired</h1>
    <p>Start again from your MCP client: it opens a fresh sign-in page.</p>`,
);

/**
 * Lets oidc-provider answer on the raw response (a redirect, a JSON document): Fastify stays out of
 * it from here on, so a failure is answered here too.
 */
async function handOver(
  request: FastifyRequest,
  reply: FastifyReply,
  work: () => Promise<void>,
): Promise<void> {
  void reply.hijack();
  try {
    await work();
  } catch (error) {
    request.log.error({ err: error, code: 'TG_ERR_INTERNAL' }, 'front door failed');
    if (!reply.raw.headersSent) reply.raw.writeHead(500, { 'content-type': 'text/plain' });
    reply.raw.end('The sign-in failed. Start again from your MCP client.');
  }
}

function hasState(request: FastifyRequest): boolean {
  const state = new URL(request.raw.url ?? '/', 'http://x').searchParams.get('state');
  return state !== null && state !== '';
}

/** A form value as one string ('' when absent). */
function field(body: unknown, name: string): string {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value.trim() : '';
}

/**
 * The OAuth front door's routes (issue 14): protected-resource metadata, the authorization server's
 * endpoints (oidc-provider, mounted at the base URL), and the sign-in and consent pages a person
 * sees in the browser. A sign-in page takes an API key in a form, never in a URL.
 */
export function frontDoorRoutes(app: FastifyInstance, deps: FrontDoorRoutesDeps): void {
  const { frontDoor } = deps;
  const registrations = new RegistrationLimit();

  for (const path of [
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-protected-resource/mcp',
    '/.well-known/oauth-protected-resource/mcp/',
  ]) {
    app.get(path, async (_request, reply) =>
      reply
        .header('access-control-allow-origin', '*')
        .header('cache-control', 'public, max-age=3600')
        .send(frontDoor.protectedResourceMetadata()),
    );
  }

  void app.register((server, _options, done) => {
    // oidc-provider reads each body itself: here the stream is left unread.
    server.removeAllContentTypeParsers();
    server.addContentTypeParser('*', (_request, _payload, parsed) => parsed(null));
    const serve = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
      if (request.method === 'POST' && request.routeOptions.url === '/register') {
        const wait = registrations.take(request.ip);
        if (wait > 0) {
          return reply
            .code(429)
            .header('retry-after', String(wait))
            .send({
              error: 'invalid_request',
              error_description: `Too many client registrations from this address: try again in ${wait} seconds.`,
            });
        }
      }
      // OAuth 2.1 leaves `state` to the client once PKCE is used; MCP clients send it, and a request
      // without one is refused here, before anything is stored, rather than answered without it.
      if (request.method === 'GET' && request.routeOptions.url === '/authorize' && !hasState(request)) {
        return sendPage(
          reply,
          400,
          frontDoorErrorPage({
            error: 'invalid_request',
            error_description:
              'The authorization request has no state parameter: MCP clients send one to tie the answer to their request.',
          }),
        );
      }
      // RFC 8414 metadata is the same document as OpenID discovery.
      if (request.routeOptions.url === '/.well-known/oauth-authorization-server')
        request.raw.url = '/.well-known/openid-configuration';
      return handOver(request, reply, () => frontDoor.handle(request.raw, reply.raw));
    };
    for (const path of AUTHORIZATION_SERVER_PATHS) server.all(path, serve);
    done();
  });

  /** The interaction's page: sign-in (with `error` when the last try failed, answered `status`) or consent. */
  const show = async (
    request: FastifyRequest,
    reply: FastifyReply,
    error?: string,
    status = error ? 401 : 200,
  ): Promise<FastifyReply> => {
    const interaction = await frontDoor.interaction(request.raw, reply.raw);
    const options = { formTargets: [interaction.redirectOrigin] };
    if (interaction.prompt === 'login')
      return sendPage(reply, status, signInPage(interaction.uid, interaction.app, error), options);
    const key = interaction.account && (await deps.keyRecords.get(interaction.account.keyId));
    if (!key || !interaction.account) return sendPage(reply, 410, SIGN_IN_GONE);
    return sendPage(
      reply,
      200,
      consentPage(interaction.uid, interaction.app, key, interaction.account),
      options,
    );
  };

  /** A throttled sign-in (too many wrong keys or names from this address): 429, as the dashboard's. */
  const tooMany = (request: FastifyRequest, reply: FastifyReply, seconds: number): Promise<FastifyReply> => {
    void reply.header('retry-after', String(seconds));
    return show(request, reply, `Too many attempts: try again in ${seconds} seconds.`, 429);
  };

  app.get<{ Params: { uid: string } }>('/signin/:uid', async (request, reply) => {
    try {
      return await show(request, reply);
    } catch {
      return sendPage(reply, 410, SIGN_IN_GONE);
    }
  });

  app.post<{ Params: { uid: string } }>('/signin/:uid', async (request, reply) => {
    let interaction;
    try {
      interaction = await frontDoor.interaction(request.raw, reply.raw);
    } catch {
      return sendPage(reply, 410, SIGN_IN_GONE);
    }
    const action = field(request.body, 'action');
    if (action === 'deny') {
      return handOver(request, reply, () =>
        frontDoor.deny(request.raw, reply.raw, 'The person declined to sign in.'),
      );
    }
    if (action === 'approve' && interaction.prompt === 'consent' && interaction.account) {
      const key = await deps.keyRecords.get(interaction.account.keyId);
      if (!key || key.revokedAt !== null) return sendPage(reply, 410, SIGN_IN_GONE);
      return handOver(request, reply, () => frontDoor.approve(request.raw, reply.raw, key));
    }
    if (action === 'idp' && interaction.prompt === 'login') return startIdp(request, reply, interaction.uid);
    if (action !== 'key' || interaction.prompt !== 'login') return show(request, reply);
    const outcome = await deps.throttle.guard(request.ip, async (): Promise<Verdict<SignedIn>> => {
      try {
        const key = await deps.keys.verify(field(request.body, 'key'));
        const asked = {
          user_id: field(request.body, 'user_id') || undefined,
          org_id: field(request.body, 'org_id') || undefined,
        };
        const { scope } = resolveScope(key, asked);
        return { ok: true, value: { key, scope } };
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        // A key that exists but does not fit the identifiers is no guess: said as it is, not counted.
        if (error.status === 401) return { ok: false, reason: 'wrong' };
        return { ok: true, value: error };
      }
    });
    if (!outcome.ok) {
      if (outcome.reason === 'locked') {
        return tooMany(request, reply, outcome.retryAfterSeconds);
      }
      return show(request, reply, 'That API key is not valid: check that the whole key was copied.');
    }
    if (outcome.value instanceof GatewayError) return show(request, reply, outcome.value.message);
    const { key, scope } = outcome.value;
    const account = { keyId: key.id, orgId: scope.orgId, userId: scope.userId, via: 'key' as const };
    return handOver(request, reply, () => frontDoor.signedIn(request.raw, reply.raw, account));
  });

  /** POST action=idp: the sign-in name looked up (guesses throttled like keys), the issuer discovered, on to it. */
  const startIdp = async (
    request: FastifyRequest,
    reply: FastifyReply,
    uid: string,
  ): Promise<FastifyReply> => {
    const name = field(request.body, 'idp').toLowerCase();
    const outcome = await deps.throttle.guard(
      request.ip,
      async (): Promise<Verdict<IdentityProviderRecord>> => {
        const idp = name === '' ? undefined : await deps.idpRecords.getByName(name);
        return idp ? { ok: true, value: idp } : { ok: false, reason: 'wrong' };
      },
    );
    if (!outcome.ok) {
      if (outcome.reason === 'locked') {
        return tooMany(request, reply, outcome.retryAfterSeconds);
      }
      return show(
        request,
        reply,
        name === ''
          ? 'Enter the sign-in name of your organization.'
          : `No organization signs in here as “${name}”: check the sign-in name your organization gave you.`,
      );
    }
    const idp = outcome.value;
    const key = await deps.keyRecords.get(idp.keyId);
    if (!key || key.revokedAt !== null)
      return show(
        request,
        reply,
        `${idp.displayName} no longer has access to this gateway: ask its administrator.`,
      );
    try {
      return sendPage(reply, 200, leavingPage(idp, await deps.identityProviders.start(idp, uid)));
    } catch (error) {
      if (!(error instanceof IdpSignInError)) throw error;
      request.log.info({ code: 'TG_IDP_SIGN_IN_FAILED', idp: idp.name }, error.message);
      return show(request, reply, error.message);
    }
  };

  // The identity provider's answer. The interaction's cookie is scoped to /signin/<uid>, so the answer
  // is passed on there: signing in then needs the browser that started, never only the answer's URL.
  app.get('/signin/idp/callback', async (request, reply) => {
    const query = callbackQuery(request);
    const pending = await deps.identityProviders.pending(query.get('state') ?? '');
    if (!pending) return sendPage(reply, 400, IDP_ANSWER_GONE);
    return reply
      .code(303)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .redirect(`/signin/${encodeURIComponent(pending.uid)}/idp?${query.toString()}`);
  });

  app.get<{ Params: { uid: string } }>('/signin/:uid/idp', async (request, reply) => {
    const query = callbackQuery(request);
    const pending = await deps.identityProviders.pending(query.get('state') ?? '');
    if (!pending || pending.uid !== request.params.uid) return sendPage(reply, 400, IDP_ANSWER_GONE);
    let interaction;
    try {
      interaction = await frontDoor.interaction(request.raw, reply.raw);
    } catch {
      return sendPage(reply, 410, SIGN_IN_GONE);
    }
    if (interaction.uid !== pending.uid || interaction.prompt !== 'login')
      return sendPage(reply, 400, IDP_ANSWER_GONE);
    if (!(await deps.identityProviders.consume(pending))) return sendPage(reply, 400, IDP_ANSWER_GONE);
    const failed = (status: number, message: string): FastifyReply => {
      request.log.info({ code: 'TG_IDP_SIGN_IN_FAILED', keyId: pending.keyId }, message);
      return sendPage(reply, status, idpFailedPage(message, pending.uid));
    };
    const idp = await deps.idpRecords.getByKey(pending.keyId);
    if (!idp || idp.updatedAt !== pending.idpUpdatedAt)
      return failed(
        410,
        'Your organization’s sign-in was removed or changed on this gateway while you were signing in. Sign in again.',
      );
    const key = await deps.keyRecords.get(idp.keyId);
    if (!key || key.revokedAt !== null)
      return failed(403, `${idp.displayName} no longer has access to this gateway: ask its administrator.`);
    let scope: Scope;
    try {
      const claims = await deps.identityProviders.finish(idp, pending, query);
      const userId = IdentityProviders.claim(idp, claims, idp.userClaim, 'user_id');
      const orgId =
        idp.orgClaim === null ? undefined : IdentityProviders.claim(idp, claims, idp.orgClaim, 'org_id');
      scope = resolveScope(key, { user_id: userId, ...(orgId === undefined ? {} : { org_id: orgId }) }).scope;
    } catch (error) {
      if (error instanceof IdpSignInError) return failed(502, error.message);
      if (error instanceof GatewayError)
        return failed(
          400,
          `Your organization’s sign-in gave an identity this gateway cannot use: ${error.message}`,
        );
      throw error;
    }
    const account = { keyId: key.id, orgId: scope.orgId, userId: scope.userId, via: 'idp' as const };
    return handOver(request, reply, () => frontDoor.signedIn(request.raw, reply.raw, account));
  });
}

/** The query of the identity provider's answer, as it came. */
function callbackQuery(request: FastifyRequest): URLSearchParams {
  const url = request.raw.url ?? '';
  const at = url.indexOf('?');
  return new URLSearchParams(at === -1 ? '' : url.slice(at + 1));
}
