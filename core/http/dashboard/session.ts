import { createHash, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Store } from '../../store/types.js';

// How long a dashboard sign-in lasts; signing in again starts a new session.
const SESSION_TTL_MS = 12 * 60 * 60_000;
const SESSION_COOKIE = 'toolgate_dashboard';

/** A signed-in operator's session: the hash of its cookie's id (the id itself is never stored). */
export interface DashboardSession {
  idHash: string;
  csrfToken: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the dashboard's onRequest hook when the request carries a live session cookie. */
    dashboardSession?: DashboardSession;
  }
}

/** The cookies of a request; the first of a repeated name wins (the most specific path comes first). */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    const name = part.slice(0, eq).trim();
    if (eq > 0 && !cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}

export interface CookieScope {
  /** The dashboard's path: the cookie is never sent to /mcp/ or anywhere else. */
  path: string;
  /** Secure when the base URL is https. */
  secure: boolean;
}

/** A Set-Cookie value, always HttpOnly and SameSite=Strict; a max age of 0 deletes the cookie. */
export function setCookie(name: string, value: string, maxAgeSeconds: number, scope: CookieScope): string {
  return `${name}=${value}; Path=${scope.path}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Strict${scope.secure ? '; Secure' : ''}`;
}

/** 256 random bits, URL-safe: session ids and form tokens. */
export function randomToken(): string {
  return randomBytes(32).toString('base64url');
}

function hashId(id: string): string {
  return createHash('sha256').update(id).digest('hex');
}

/**
 * Dashboard sessions, kept server-side: the cookie holds a random id, the store only its SHA-256
 * (a copy of the database signs nobody in) with an absolute expiry and the session's CSRF token.
 */
export class DashboardSessions {
  constructor(
    private readonly store: Store,
    private readonly scope: CookieScope,
  ) {}

  async create(reply: FastifyReply): Promise<void> {
    const id = randomToken();
    const now = Date.now();
    await this.store.dashboard.createSession(hashId(id), {
      csrfToken: randomToken(),
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + SESSION_TTL_MS).toISOString(),
    });
    void reply.header('set-cookie', setCookie(SESSION_COOKIE, id, SESSION_TTL_MS / 1_000, this.scope));
  }

  async find(request: FastifyRequest): Promise<DashboardSession | undefined> {
    const id = parseCookies(request.headers.cookie).get(SESSION_COOKIE);
    if (!id) return undefined;
    const idHash = hashId(id);
    const record = await this.store.dashboard.getSession(idHash, new Date().toISOString());
    return record && { idHash, csrfToken: record.csrfToken };
  }

  async destroy(session: DashboardSession, reply: FastifyReply): Promise<void> {
    await this.store.dashboard.deleteSession(session.idHash);
    void reply.header('set-cookie', setCookie(SESSION_COOKIE, '', 0, this.scope));
  }
}
