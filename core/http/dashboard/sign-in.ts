import type { FastifyInstance, FastifyReply } from 'fastify';
import { html, page } from '../html.js';
import { csrfInput, SIGN_IN_COOKIE } from './csrf.js';
import { sendDashboardDocument, type Dashboard } from './layout.js';
import { randomToken, setCookie, type CookieScope, type DashboardSessions } from './session.js';
import type { SignInThrottle } from '../throttle.js';

export interface SignInDeps {
  sessions: DashboardSessions;
  throttle: SignInThrottle;
  cookies: CookieScope;
}

// The sign-in form's token lives an hour: long enough to find the password, short enough to expire.
const SIGN_IN_TOKEN_SECONDS = 3_600;

// Where to go after signing in: a dashboard page asked for before, never another site.
function landing(root: string, next: unknown): string {
  return typeof next === 'string' &&
    next.startsWith(`${root}/`) &&
    !next.startsWith(`${root}//`) &&
    !/[\\\s]/.test(next)
    ? next
    : `${root}/keys`;
}

function signInPage(
  dashboard: Dashboard,
  reply: FastifyReply,
  status: number,
  token: string,
  options: { next?: string; error?: string; notice?: string } = {},
): FastifyReply {
  const { root } = dashboard;
  return sendDashboardDocument(
    reply,
    status,
    page(
      'Sign in · Toolgate',
      html`<h1>Toolgate dashboard</h1>
        <p class="muted">Sign in with the admin password.</p>
        ${options.notice ? html`<p class="ok" role="status">${options.notice}</p>` : ''}
        ${options.error ? html`<div class="error" role="alert">${options.error}</div>` : ''}
        <form method="post" action="${root}/sign-in">
          ${csrfInput(token)}
          <input type="hidden" name="next" value="${options.next ?? ''}" />
          <label for="password">Admin password</label>
          <input
            id="password"
            name="password"
            type="password"
            autocomplete="current-password"
            required
            autofocus
          />
          <button type="submit">Sign in</button>
        </form>
        <p class="muted">
          The password was printed once when the gateway first started. Lost it? Set a new one on the server
          with <code>toolgate admin set-password</code>.
        </p>`,
    ),
  );
}

/**
 * Sign-in and sign-out. A sign-in form comes with its own double-submit token (see csrf.ts); a
 * successful sign-in starts a fresh session (a new id, never one the browser brought), and
 * signing out deletes the session server-side, not just the cookie.
 */
export function signInRoutes(dash: FastifyInstance, dashboard: Dashboard, deps: SignInDeps): void {
  const { root } = dashboard;

  dash.get<{ Querystring: { next?: string; signed_out?: string } }>(
    '/sign-in',
    { config: { signIn: true } },
    async (request, reply) => {
      if (request.dashboardSession) return reply.redirect(landing(root, request.query.next), 303);
      const token = randomToken();
      void reply.header('set-cookie', setCookie(SIGN_IN_COOKIE, token, SIGN_IN_TOKEN_SECONDS, deps.cookies));
      return signInPage(dashboard, reply, 200, token, {
        ...(request.query.next ? { next: request.query.next } : {}),
        ...(request.query.signed_out ? { notice: 'You are signed out.' } : {}),
      });
    },
  );

  dash.post<{ Body: { password?: string; next?: string; _csrf: string } }>(
    '/sign-in',
    { config: { signIn: true } },
    async (request, reply) => {
      const { password, next, _csrf: token } = request.body;
      const outcome = await deps.throttle.attempt(request.ip, typeof password === 'string' ? password : '');
      if (outcome.ok) {
        await deps.sessions.create(reply);
        void reply.header('set-cookie', setCookie(SIGN_IN_COOKIE, '', 0, deps.cookies));
        return reply.redirect(landing(root, next), 303);
      }
      const retry = typeof next === 'string' && next !== '' ? { next } : {};
      if (outcome.reason === 'locked') {
        void reply.header('retry-after', String(outcome.retryAfterSeconds));
        return signInPage(dashboard, reply, 429, token, {
          ...retry,
          error: `Too many attempts, try again in ${outcome.retryAfterSeconds} seconds.`,
        });
      }
      return signInPage(dashboard, reply, outcome.reason === 'unset' ? 503 : 401, token, {
        ...retry,
        error:
          outcome.reason === 'unset'
            ? 'No admin password is set yet. Set one on the server with `toolgate admin set-password`.'
            : 'Wrong password.',
      });
    },
  );

  dash.post('/sign-out', async (request, reply) => {
    if (request.dashboardSession) await deps.sessions.destroy(request.dashboardSession, reply);
    return reply.redirect(`${root}/sign-in?signed_out=1`, 303);
  });
}
