import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import Database from 'better-sqlite3';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';

/**
 * Where an OAuth client's browser lands after the front door: a loopback server standing in for
 * the client's redirect URI, handing each arrival's query to the test.
 */
export interface CallbackServer {
  /** http://127.0.0.1:<port>/callback */
  url: string;
  /** The query of the next arrival (or of one that came already). */
  next(): Promise<URLSearchParams>;
  close(): Promise<void>;
}

export async function callbackServer(): Promise<CallbackServer> {
  const arrived: URLSearchParams[] = [];
  const waiting: ((params: URLSearchParams) => void)[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    // The browser also asks for /favicon.ico: only the redirect URI counts.
    if (url.pathname !== '/callback') return void res.writeHead(404).end();
    const params = url.searchParams;
    res.writeHead(200, { 'content-type': 'text/plain' }).end('Signed in. You can close this window.');
    const waiter = waiting.shift();
    if (waiter) waiter(params);
    else arrived.push(params);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    next: () => {
      const first = arrived.shift();
      return first ? Promise.resolve(first) : new Promise((resolve) => waiting.push(resolve));
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * The v2 SDK's OAuth seam, kept in memory as a client application would keep it on disk: what the
 * SDK registers, the tokens it gets, and the authorization URL it would open in a browser.
 */
export class MemoryOAuthProvider implements OAuthClientProvider {
  client: StoredOAuthClientInformation | undefined;
  stored: StoredOAuthTokens | undefined;
  verifier = '';
  discovery: unknown;
  /** Set by the SDK when the person must sign in: the test opens it in Chromium. */
  authorizationUrl: URL | undefined;

  /** A Client ID Metadata Document URL: the SDK uses it as client_id when the server supports them. */
  clientMetadataUrl?: string;

  constructor(
    private readonly redirect: string,
    options: { clientMetadataUrl?: string; name?: string } = {},
  ) {
    if (options.clientMetadataUrl) this.clientMetadataUrl = options.clientMetadataUrl;
    this.name = options.name ?? 'Test Agent';
  }

  private readonly name: string;

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  /** The front door requires `state` (CSRF protection on the client's side, RFC 6749 10.12). */
  state(): string {
    return randomBytes(16).toString('base64url');
  }
  clientInformation(): StoredOAuthClientInformation | undefined {
    return this.client;
  }
  saveClientInformation(info: StoredOAuthClientInformation): void {
    this.client = info;
  }
  tokens(): StoredOAuthTokens | undefined {
    return this.stored;
  }
  saveTokens(tokens: StoredOAuthTokens): void {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
  saveDiscoveryState(state: unknown): void {
    this.discovery = state;
  }
  discoveryState(): never {
    return this.discovery as never;
  }
}

/**
 * Signs in on the front door's page in the browser with an API key (and the identifiers a client
 * or platform key needs), then approves on the consent page (after `onConsent` looked at it);
 * resolves once the browser is on its way to the client's redirect URI. Returns the consent page's
 * text, for what it promised.
 */
export async function signInWithKey(
  page: Page,
  authorizationUrl: string | URL,
  form: { key: string; userId?: string; orgId?: string },
  onConsent: (page: Page) => Promise<void> = () => Promise.resolve(),
): Promise<string> {
  await page.goto(String(authorizationUrl));
  await page.fill('#key', form.key);
  if (form.userId) await page.fill('#user_id', form.userId);
  if (form.orgId) await page.fill('#org_id', form.orgId);
  await page.click('button[type=submit]:not(.secondary)');
  await page.waitForSelector('button:has-text("Allow")');
  const consent = await page.innerText('main');
  await onConsent(page);
  await page.click('button:has-text("Allow")');
  return consent;
}

/** A PKCE pair (S256), as an OAuth client makes it. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** What a finished sign-in gave the client, and what the person saw. */
export interface HandSignIn {
  clientId: string;
  access: string;
  refresh: string;
  /** The consent page's text. */
  consent: string;
  /** The query the browser brought to the redirect URI. */
  redirect: URLSearchParams;
}

/**
 * An OAuth client written out by hand, step by step as RFC 7591, 6749 and 7636 say, so tests see
 * each request and answer of the front door: register, authorize (the person signs in in Chromium),
 * exchange the code, refresh.
 */
export class HandClient {
  constructor(
    readonly base: string,
    readonly callback: CallbackServer,
    readonly name = 'Raw Agent',
  ) {}

  /** Registers a public client by dynamic registration, as mcp-remote and older clients do. */
  async register(): Promise<string> {
    const response = await fetch(`${this.base}/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        client_name: this.name,
        redirect_uris: [this.callback.url],
        grant_types: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_method: 'none',
      }),
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { client_id: string }).client_id;
  }

  authorizeUrl(clientId: string, challenge: string, extra: Record<string, string> = {}): string {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: this.callback.url,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state: 'st-1',
      resource: `${this.base}/mcp`,
      scope: 'mcp offline_access',
      ...extra,
    });
    return `${this.base}/authorize?${query.toString()}`;
  }

  async token(form: Record<string, string>): Promise<{ status: number; body: Record<string, unknown> }> {
    const response = await fetch(`${this.base}/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  /** The whole flow: register, sign in and approve in the browser, exchange the code. */
  async signIn(page: Page, form: { key: string; userId?: string; orgId?: string }): Promise<HandSignIn> {
    const clientId = await this.register();
    const { verifier, challenge } = pkce();
    const consent = await signInWithKey(page, this.authorizeUrl(clientId, challenge), form);
    const redirect = await this.callback.next();
    const code = redirect.get('code');
    expect(code, redirect.toString()).toBeTruthy();
    const tokens = await this.token({
      grant_type: 'authorization_code',
      code: code!,
      redirect_uri: this.callback.url,
      client_id: clientId,
      code_verifier: verifier,
    });
    expect(tokens.status).toBe(200);
    return {
      clientId,
      access: String(tokens.body.access_token),
      refresh: String(tokens.body.refresh_token),
      consent,
      redirect,
    };
  }
}

/** Where the answer to a request sent the person: a page of the gateway, or a redirect out of it. */
export interface Arrival {
  /** The last answer from the gateway (a page, or the redirect out). */
  response: Response;
  /** Its text (empty for a redirect out). */
  text: string;
  /** Where the gateway sent the person when it redirected to another origin (the client's redirect URI). */
  leftTo: URL | undefined;
}

/**
 * A person on the front door's pages without a browser: every request a browser would make (GET the
 * authorization URL, POST the sign-in and consent forms, follow the gateway's redirects), the
 * cookies the gateway sets kept and sent back. Redirects out of the gateway are reported, not followed.
 */
export class FormBrowser {
  private readonly cookies = new Map<string, string>();
  /** The page the person is on (a /signin/<uid> page once the authorization asked for one). */
  at: URL | undefined;

  constructor(readonly base: string) {}

  /** Opens a URL, as typing it in. */
  open(url: string | URL): Promise<Arrival> {
    return this.go(new URL(url), 'GET');
  }

  /** Submits a form of the page the person is on (the sign-in and consent pages post to themselves). */
  submit(fields: Record<string, string>): Promise<Arrival> {
    if (!this.at) throw new Error('open a page before submitting a form');
    return this.go(this.at, 'POST', new URLSearchParams(fields));
  }

  private async go(url: URL, method: 'GET' | 'POST', form?: URLSearchParams): Promise<Arrival> {
    for (let hops = 0; hops < 10; hops++) {
      const response = await fetch(url, {
        method,
        redirect: 'manual',
        headers: {
          cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '),
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(form ? { body: form } : {}),
      });
      for (const cookie of response.headers.getSetCookie()) {
        const [pair = ''] = cookie.split(';');
        const at = pair.indexOf('=');
        this.cookies.set(pair.slice(0, at), pair.slice(at + 1));
      }
      const location = response.headers.get('location');
      if (response.status < 300 || response.status >= 400 || !location) {
        this.at = url;
        return { response, text: await response.text(), leftTo: undefined };
      }
      const next = new URL(location, url);
      if (next.origin !== new URL(this.base).origin) return { response, text: '', leftTo: next };
      [url, method, form] = [next, 'GET', undefined];
    }
    throw new Error(`more than 10 redirects from ${url.href}`);
  }
}

/**
 * Signs in with a key and approves, by plain HTTP posts of the pages' forms; resolves with the query
 * the client's redirect URI receives.
 */
export async function signInByForm(
  base: string,
  authorizationUrl: string,
  form: { key: string; userId?: string; orgId?: string },
): Promise<URLSearchParams> {
  const person = new FormBrowser(base);
  const signIn = await person.open(authorizationUrl);
  expect(signIn.text, signIn.text).toContain('Sign in to Toolgate');
  const consent = await person.submit({
    action: 'key',
    key: form.key,
    user_id: form.userId ?? '',
    org_id: form.orgId ?? '',
  });
  expect(consent.text, consent.text).toContain('Allow');
  const approved = await person.submit({ action: 'approve' });
  expect(approved.leftTo, approved.text).toBeDefined();
  return approved.leftTo!.searchParams;
}

/** The authorization server's records in a gateway's SQLite database, counted by model. */
export function frontDoorRecords(dataDir: string): Record<string, number> {
  const db = new Database(join(dataDir, 'toolgate.db'), { readonly: true });
  try {
    const rows = db.prepare('SELECT model, COUNT(*) AS n FROM auth_server_records GROUP BY model').all() as {
      model: string;
      n: number;
    }[];
    return Object.fromEntries(rows.map((row) => [row.model, row.n]));
  } finally {
    db.close();
  }
}
