import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client';
import { createHash, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';

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
 * or platform key needs), then approves on the consent page; resolves once the browser is on its
 * way to the client's redirect URI. Returns the consent page's text, for what it promised.
 */
export async function signInWithKey(
  page: Page,
  authorizationUrl: string | URL,
  form: { key: string; userId?: string; orgId?: string },
): Promise<string> {
  await page.goto(String(authorizationUrl));
  await page.fill('#key', form.key);
  if (form.userId) await page.fill('#user_id', form.userId);
  if (form.orgId) await page.fill('#org_id', form.orgId);
  await page.click('button[type=submit]:not(.secondary)');
  await page.waitForSelector('button:has-text("Allow")');
  const consent = await page.innerText('main');
  await page.click('button:has-text("Allow")');
  return consent;
}

/** A PKCE pair (S256), as an OAuth client makes it. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}
