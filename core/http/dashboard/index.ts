import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import type { Lock } from '../../coordination/lock.js';
import { GatewayError } from '../../errors.js';
import type { Store } from '../../store/types.js';
import type { AdminOperations } from '../../admin/operations.js';
import { html, page } from '../html.js';
import { activityRoutes } from './activity.js';
import { catalogRoutes } from './catalog.js';
import { connectionsRoutes } from './connections.js';
import { csrfMatches, expectedToken } from './csrf.js';
import { keysRoutes } from './keys.js';
import { sendDashboardDocument, type Dashboard } from './layout.js';
import { organizationsRoutes } from './organizations.js';
import { policiesRoutes } from './policies.js';
import { reportsRoutes } from './reports.js';
import { DashboardSessions } from './session.js';
import { signInRoutes } from './sign-in.js';
import { SignInThrottle } from '../throttle.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A dashboard route reachable without a session: the sign-in form and its POST. */
    signIn?: boolean;
  }
}

export interface DashboardDeps {
  config: Config;
  store: Store;
  ops: AdminOperations;
  /** Serialises sign-in attempts across the processes of the deployment. */
  lock: Lock;
  /** The host check of /mcp/ (DNS-rebinding protection), applied to the dashboard too. */
  guardHost: (request: FastifyRequest) => void;
}

function problemPage(
  reply: FastifyReply,
  root: string,
  status: number,
  title: string,
  message: string,
): FastifyReply {
  return sendDashboardDocument(
    reply,
    status,
    page(
      `${title} · Toolgate`,
      html`<h1>${title}</h1>
        <p>${message}</p>
        <p><a href="${root}/keys">Back to the dashboard</a></p>`,
    ),
  );
}

/**
 * `/dashboard`: the operator's pages (issue 6), server-rendered, as one encapsulated plugin with
 * its own hooks and error pages. Every route but sign-in needs a session; every POST needs the
 * CSRF token of its session. The pages act through AdminOperations, like the admin API.
 */
export function dashboardRoutes(app: FastifyInstance, deps: DashboardDeps): void {
  const base = new URL(deps.config.baseUrl);
  // Behind a proxy that serves the gateway under a path, links and cookies carry that path.
  const basePath = base.pathname.replace(/\/+$/, '');
  const root = `${basePath}/dashboard`;
  const cookies = { path: root, secure: base.protocol === 'https:' };
  const sessions = new DashboardSessions(deps.store, cookies);
  const throttle = new SignInThrottle(deps.store, deps.lock, deps.config.signInWindowMs);
  const dashboard: Dashboard = {
    ops: deps.ops,
    root,
    baseUrl: deps.config.baseUrl,
    manifestsDir: deps.config.manifestsDir,
  };

  app.register(
    (dash, _options, done) => {
      dash.addHook('onRequest', async (request, reply) => {
        deps.guardHost(request);
        const session = await sessions.find(request);
        if (session) request.dashboardSession = session;
        if (session || request.routeOptions.config.signIn) return;
        if (request.method === 'GET' || request.method === 'HEAD') {
          const next = encodeURIComponent(`${basePath}${request.url}`);
          return reply.redirect(`${root}/sign-in?next=${next}`, 303);
        }
        return problemPage(
          reply,
          root,
          403,
          'Signed out',
          'Your dashboard session has ended. Sign in again, then repeat what you were doing.',
        );
      });

      dash.addHook('preHandler', async (request, reply) => {
        if (request.method !== 'POST') return;
        if (csrfMatches(request, expectedToken(request, request.routeOptions.config.signIn === true))) return;
        request.log.info(
          { code: 'TG_DASHBOARD_CSRF_REFUSED' },
          'dashboard form refused: missing or wrong CSRF token',
        );
        return problemPage(
          reply,
          root,
          403,
          'Form expired',
          'This form was refused: it did not carry the token of your session, so it may not come from this dashboard. Go back, reload the page and submit it again.',
        );
      });

      dash.setErrorHandler((error, request, reply) => {
        if (error instanceof GatewayError) {
          request.log.info({ code: error.code, status: error.status }, 'dashboard request refused');
          return problemPage(reply, root, error.status, 'Not possible', error.message);
        }
        const status = (error as { statusCode?: number }).statusCode;
        if (status !== undefined && status >= 400 && status < 500) {
          return problemPage(
            reply,
            root,
            status,
            'Not possible',
            'The request could not be read. Go back and try again.',
          );
        }
        request.log.error({ err: error, code: 'TG_ERR_INTERNAL' }, 'dashboard request failed');
        return problemPage(
          reply,
          root,
          500,
          'Something went wrong',
          `The gateway failed to handle this page. The log has the details under request id ${request.id}.`,
        );
      });

      dash.setNotFoundHandler((_request, reply) =>
        problemPage(reply, root, 404, 'Page not found', 'There is no dashboard page here.'),
      );

      dash.get('/', (_request, reply) => reply.redirect(`${root}/keys`, 303));
      signInRoutes(dash, dashboard, { sessions, throttle, cookies });
      keysRoutes(dash, dashboard);
      organizationsRoutes(dash, dashboard);
      policiesRoutes(dash, dashboard);
      reportsRoutes(dash, dashboard);
      catalogRoutes(dash, dashboard);
      connectionsRoutes(dash, dashboard);
      activityRoutes(dash, dashboard);
      done();
    },
    { prefix: '/dashboard' },
  );
}
