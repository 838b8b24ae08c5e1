import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { html, type Html } from '../html.js';
import { parseCookies } from './session.js';

// CSRF protection: every dashboard form carries a synchronizer token bound to the session (stored with it),
// and every POST is refused unless it sends that token back. The sign-in form, which has no session yet,
// uses a double-submit token instead: a random value in a SameSite=Strict cookie that the form must repeat.
const CSRF_FIELD = '_csrf';
export const SIGN_IN_COOKIE = 'toolgate_signin';

/** The hidden field every dashboard form includes. */
export function csrfInput(token: string): Html {
  return html`<input type="hidden" name="${CSRF_FIELD}" value="${token}" />`;
}

/** The token a POST must carry: the session's, or before sign-in the sign-in cookie's. */
export function expectedToken(request: FastifyRequest, signIn: boolean): string | undefined {
  return signIn
    ? parseCookies(request.headers.cookie).get(SIGN_IN_COOKIE)
    : request.dashboardSession?.csrfToken;
}

/** Whether the posted form carries the expected token (constant-time). */
export function csrfMatches(request: FastifyRequest, expected: string | undefined): boolean {
  const body = request.body as Record<string, unknown> | undefined;
  const given = body?.[CSRF_FIELD];
  if (expected === undefined || typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
