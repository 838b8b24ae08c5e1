/**
 * A real OAuth 2 authorization server (oidc-provider 8.8.1) and a protected resource API, both on
 * loopback, standing in for an OAuth2 provider in tests; plus `approveConsent` / `denyConsent`, which
 * drive the provider's login and consent pages in real headless Chromium.
 *
 * Configuration choices (oidc-provider 8.x), and why:
 * - API scopes (`read`, `write`, `options.scopes`) are Resource Server scopes, not OIDC scopes.
 *   `features.resourceIndicators` is on with `defaultResource` = the resource API's URL, so a client
 *   that sends no `resource` parameter (the gateway does not) still gets an opaque access token bound
 *   to the API (`aud` = resourceUrl) carrying those scopes. `useGrantedResource` returns true so the
 *   binding holds even when `openid` is requested too (otherwise oidc-provider issues a
 *   userinfo-only token then). Consequence: the token response's `scope` lists the API scopes only
 *   (e.g. "read write"); `openid` and `offline_access` are never echoed there.
 * - `offline_access` is dropped by oidc-provider unless the request also says `prompt=consent`; so
 *   `issueRefreshToken` issues a refresh token for every authorization_code grant of a client that
 *   may refresh, regardless of scopes. Refresh tokens rotate (`rotateRefreshToken: true`); replaying
 *   a rotated one answers invalid_grant AND revokes the whole grant (oidc-provider's reuse
 *   detection, as many real providers do). Tokens never expire with the browser session
 *   (`expiresWithSession: false`), and expire exactly on time (`clockTolerance: 0`).
 * - PKCE is optional but validated when sent (S256 only).
 * - Login and consent pages are oidc-provider's devInteractions (login: any name and any password;
 *   consent: "Continue"; both pages: "[ Cancel ]" → error=access_denied at the redirect_uri).
 * - Storage is an in-memory adapter private to each server (oidc-provider's own memory adapter is a
 *   module-wide LRU shared by every provider in the process), which lets the test revoke grants and
 *   expire access tokens. Signing keys (EC P-256, id tokens in ES256), cookie keys, TTLs, account
 *   lookup, error page and policies are all set explicitly, so oidc-provider prints none of its
 *   "development-only" notices; the one it prints for devInteractions is filtered at construction.
 * - Token and revocation requests are recorded before oidc-provider sees them: the form body is read
 *   in full, parsed for the record, and replayed to oidc-provider as a fresh IncomingMessage (no
 *   pre-parsed `req.body`, which oidc-provider would warn about).
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider, { errors, type Adapter, type AdapterPayload, type Configuration } from 'oidc-provider';
import type { Page, Request } from 'playwright-core';

export interface OAuthTestClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  /** How the client authenticates at the token, revocation and introspection endpoints. */
  token_endpoint_auth_method?: 'client_secret_basic' | 'client_secret_post';
}

export interface AuthServerOptions {
  clients: OAuthTestClient[];
  /** API scopes beyond `read` and `write` that clients may request. */
  scopes?: string[];
  /**
   * Access-token lifetime in seconds (default 60). Expiry has one-second granularity (exp = issued-at
   * second + TTL), so a token with TTL n lives between n-1 and n seconds: use 2 or more where a test
   * must use the token before it expires.
   */
  accessTokenTtlSeconds?: number;
  /** Refresh-token lifetime in seconds (default 14 days). */
  refreshTokenTtlSeconds?: number;
  /** Dynamic Client Registration (RFC 7591) at `${issuer}/reg`, open to anyone (default off). */
  registration?: boolean;
  /** More resource indicators (RFC 8707) the server issues tokens for, besides `resourceUrl`. */
  resources?: string[];
}

export interface TokenRequestRecord {
  /** `grant_type` of the form body as sent ('authorization_code', 'refresh_token', ...). */
  grant_type: string | undefined;
  /** Client id from the Basic header or the body. */
  client_id: string | undefined;
  /** Date.now() when the request arrived (before any hold). */
  at: number;
  /** HTTP status answered; undefined while the request is held or in progress, or after a reset. */
  status: number | undefined;
  /** OAuth error code answered by oidc-provider (invalid_grant, invalid_client, ...), if any. */
  error: string | undefined;
  /** True when failNextTokenRequests answered it instead of oidc-provider. */
  injected: boolean;
}

export interface RevocationRequestRecord {
  token: string | undefined;
  token_type_hint: string | undefined;
  client_id: string | undefined;
  at: number;
  status: number | undefined;
}

export interface ResourceRequestRecord {
  method: string;
  path: string;
  authorization: string | undefined;
  status: number;
  at: number;
}

/** What an injected token-endpoint failure looks like. */
export type TokenFailure = number | 'reset' | { status: number; body: Record<string, unknown> };

export interface AuthServer {
  /** http://127.0.0.1:<port> */
  issuer: string;
  /** `${issuer}/auth` */
  authorizationUrl: string;
  /** `${issuer}/token` */
  tokenUrl: string;
  /** `${issuer}/token/revocation` */
  revocationUrl: string;
  /** `${issuer}/token/introspection` */
  introspectionUrl: string;
  /** The protected API (second loopback server): GET /me, GET /items. */
  resourceUrl: string;
  /** The oidc-provider instance, for anything the helpers below do not cover. */
  provider: Provider;
  /** Every token endpoint request so far, in arrival order (a copy). */
  tokenRequests(): TokenRequestRecord[];
  /** Resolves once at least `count` token requests have arrived (held ones included). */
  waitForTokenRequests(count: number): Promise<void>;
  /** Query parameters of every GET to the authorization endpoint, with arrival time. */
  authorizationRequests(): { params: Record<string, string>; at: number }[];
  /** Every revocation endpoint request so far. */
  revocationRequests(): RevocationRequestRecord[];
  /** Forgets a dynamically registered client: its id then answers invalid_client everywhere. */
  forgetClient(clientId: string): Promise<void>;
  /** Every Dynamic Client Registration request so far (its JSON body). */
  registrationRequests(): Record<string, unknown>[];
  /** Every request to the resource API so far. */
  resourceRequests(): ResourceRequestRecord[];
  /** Destroys every grant with its tokens: refresh → invalid_grant, /me → 401. Returns the count. */
  revokeAll(): number;
  /** Same, for one account's grants only. */
  revokeGrantsOf(accountId: string): number;
  /** Marks every access token issued so far as expired (refresh tokens stay valid). Returns the count. */
  expireAccessTokens(): number;
  /**
   * Restricts the API scopes consent can grant (and later token responses carry) to `scopes`;
   * undefined restores all. Requested scopes outside the set are silently not granted, so the token
   * response's `scope` shows fewer scopes than asked for.
   */
  setGrantableScopes(scopes: string[] | undefined): void;
  /** Access-token lifetime for tokens issued from now on. */
  setAccessTokenTtl(seconds: number): void;
  /** The next `n` token requests are answered with `failure` (default 503) instead of being handled. */
  failNextTokenRequests(n: number, failure?: TokenFailure): void;
  /** Holds every token request from now on until the returned function is called. */
  holdTokenRequests(): () => void;
  close(): Promise<void>;
}

const BASE_API_SCOPES = ['read', 'write'];

/** Starts the authorization server and the resource API on 127.0.0.1, ephemeral ports. */
export async function startAuthServer(options: AuthServerOptions): Promise<AuthServer> {
  let accessTokenTtl = options.accessTokenTtlSeconds ?? 60;
  const apiScopes = [...new Set([...BASE_API_SCOPES, ...(options.scopes ?? [])])];
  let grantable: string[] | undefined;

  const store = new MemoryStore();
  const tokenLog: TokenRequestRecord[] = [];
  const tokenWaiters: { count: number; resolve: () => void }[] = [];
  const authorizationLog: { params: Record<string, string>; at: number }[] = [];
  const revocationLog: RevocationRequestRecord[] = [];
  const registrationLog: Record<string, unknown>[] = [];
  const resourceLog: ResourceRequestRecord[] = [];
  const failures: TokenFailure[] = [];
  let hold: Promise<void> | undefined;
  const byRequest = new WeakMap<IncomingMessage, TokenRequestRecord>();

  let dispatch: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => {
    res.writeHead(503).end();
  };
  const opServer = createServer((req, res) => dispatch(req, res));
  const issuer = await listen(opServer);
  const resourceServer = createServer((req, res) => {
    serveResource(req, res).catch((error: unknown) => {
      console.error('oauth test server: resource API failed', error);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  const resourceUrl = await listen(resourceServer);

  const signingKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'jwk' });
  const configuration: Configuration = {
    adapter: (name: string) => store.adapterFor(name),
    clients: options.clients.map((client) => ({
      client_id: client.client_id,
      client_secret: client.client_secret,
      redirect_uris: client.redirect_uris,
      token_endpoint_auth_method: client.token_endpoint_auth_method ?? 'client_secret_basic',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    })),
    clientDefaults: { id_token_signed_response_alg: 'ES256' },
    jwks: { keys: [{ ...signingKey, kid: 'test-es256', use: 'sig', alg: 'ES256' }] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    scopes: ['openid', 'offline_access'],
    claims: { openid: ['sub'], email: ['email'] },
    responseTypes: ['code'],
    // Expiry is exact: the default 15 s tolerance would keep a 1 s access token usable for 16 s.
    clockTolerance: 0,
    pkce: { required: () => false, methods: ['S256'] },
    features: {
      devInteractions: { enabled: true },
      revocation: { enabled: true },
      registration: { enabled: options.registration === true },
      introspection: { enabled: true, allowedPolicy: () => true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx, _client, oneOf) => oneOf ?? resourceUrl,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator) => {
          if (resourceIndicator !== resourceUrl && !options.resources?.includes(resourceIndicator))
            throw new errors.InvalidTarget();
          return {
            scope: (grantable ? apiScopes.filter((s) => grantable?.includes(s)) : apiScopes).join(' '),
            accessTokenFormat: 'opaque',
            accessTokenTTL: accessTokenTtl,
          };
        },
      },
    },
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    expiresWithSession: () => false,
    clientBasedCORS: () => false,
    ttl: {
      AccessToken: () => accessTokenTtl,
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: options.refreshTokenTtlSeconds ?? 14 * 24 * 3600,
      Interaction: 3600,
      Session: 14 * 24 * 3600,
      Grant: 14 * 24 * 3600,
    },
    findAccount: (_ctx, sub) => ({
      accountId: sub,
      claims: () => ({ sub, email: `${sub}@example.test` }),
    }),
    renderError: (ctx, out) => {
      ctx.type = 'html';
      ctx.body =
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>oops! something went wrong</title></head>' +
        `<body><h1>oops! something went wrong</h1>${Object.entries(out)
          .map(
            ([key, value]) => `<pre><strong>${escapeHtml(key)}</strong>: ${escapeHtml(String(value))}</pre>`,
          )
          .join('')}</body></html>`;
    },
  };
  const provider = withoutDevInteractionsWarning(() => new Provider(issuer, configuration));
  provider.on('server_error', (_ctx, error) => console.error('oauth test server: server_error', error));
  provider.on('grant.error', (ctx, error) => {
    const entry = byRequest.get(ctx.req);
    if (entry) entry.error = (error as { error?: string }).error ?? 'server_error';
  });
  const handle = provider.callback();

  dispatch = (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    if (req.method === 'GET' && url.pathname === '/auth') {
      authorizationLog.push({ params: Object.fromEntries(url.searchParams), at: Date.now() });
    }
    if (req.method === 'POST' && url.pathname === '/reg') {
      readBody(req)
        .then((body) => {
          registrationLog.push(JSON.parse(body.toString('utf8')) as Record<string, unknown>);
          void handle(replay(req, body), res);
        })
        .catch(() => req.socket.destroy());
      return;
    }
    if (req.method === 'POST' && (url.pathname === '/token' || url.pathname === '/token/revocation')) {
      // Only a client that gives up mid-body makes this fail; its connection is gone already.
      handleForm(req, res, url.pathname).catch(() => req.socket.destroy());
      return;
    }
    void handle(req, res);
  };

  async function handleForm(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const at = Date.now();
    const body = await readBody(req);
    const form = new URLSearchParams(body.toString('utf8'));
    const clientId = basicClientId(req.headers.authorization) ?? form.get('client_id') ?? undefined;
    if (path === '/token/revocation') {
      const entry: RevocationRequestRecord = {
        token: form.get('token') ?? undefined,
        token_type_hint: form.get('token_type_hint') ?? undefined,
        client_id: clientId,
        at,
        status: undefined,
      };
      revocationLog.push(entry);
      res.on('finish', () => (entry.status = res.statusCode));
      void handle(replay(req, body), res);
      return;
    }

    const entry: TokenRequestRecord = {
      grant_type: form.get('grant_type') ?? undefined,
      client_id: clientId,
      at,
      status: undefined,
      error: undefined,
      injected: false,
    };
    tokenLog.push(entry);
    for (const waiter of tokenWaiters.filter((w) => tokenLog.length >= w.count)) {
      tokenWaiters.splice(tokenWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    res.on('finish', () => (entry.status = res.statusCode));
    const failure = failures.shift();
    if (hold) await hold;

    if (failure === undefined) {
      const replayed = replay(req, body);
      byRequest.set(replayed, entry);
      void handle(replayed, res);
      return;
    }
    entry.injected = true;
    if (failure === 'reset') {
      req.socket.destroy();
      return;
    }
    const status = typeof failure === 'number' ? failure : failure.status;
    const answer =
      typeof failure === 'number'
        ? {
            error: status >= 500 ? 'temporarily_unavailable' : 'invalid_request',
            error_description: 'failure injected by the test',
          }
        : failure.body;
    entry.error = typeof answer.error === 'string' ? answer.error : undefined;
    res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(answer));
  }

  async function serveResource(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', resourceUrl).pathname;
    const authorization = req.headers.authorization;
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      resourceLog.push({ method: req.method ?? '', path, authorization, status, at: Date.now() });
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    req.resume();
    if (req.method !== 'GET' || (path !== '/me' && path !== '/items')) {
      answer(404, { error: 'not_found' });
      return;
    }
    const match = /^Bearer\s+(\S+)$/i.exec(authorization ?? '');
    const token = match?.[1] ? await provider.AccessToken.find(match[1]) : undefined;
    const grant = token ? await provider.Grant.find(token.grantId) : undefined;
    const audience = token ? [token.aud].flat() : [];
    if (!token || !grant || !audience.includes(resourceUrl)) {
      answer(
        401,
        { error: 'invalid_token' },
        {
          'www-authenticate': match
            ? 'Bearer error="invalid_token", error_description="the access token is invalid, expired or revoked"'
            : 'Bearer',
        },
      );
      return;
    }
    if (path === '/me') {
      answer(200, { sub: token.accountId, email: `${token.accountId}@example.test` });
      return;
    }
    if (!(token.scope ?? '').split(' ').includes('read')) {
      answer(
        403,
        { error: 'insufficient_scope' },
        { 'www-authenticate': 'Bearer error="insufficient_scope", scope="read"' },
      );
      return;
    }
    answer(200, {
      items: [
        { id: 'item-1', name: 'First item', owner: token.accountId },
        { id: 'item-2', name: 'Second item', owner: token.accountId },
      ],
    });
  }

  return {
    issuer,
    authorizationUrl: `${issuer}/auth`,
    tokenUrl: `${issuer}/token`,
    revocationUrl: `${issuer}/token/revocation`,
    introspectionUrl: `${issuer}/token/introspection`,
    resourceUrl,
    provider,
    tokenRequests: () => tokenLog.map((entry) => ({ ...entry })),
    waitForTokenRequests(count) {
      if (tokenLog.length >= count) return Promise.resolve();
      return new Promise((resolve) => tokenWaiters.push({ count, resolve }));
    },
    authorizationRequests: () => authorizationLog.map((entry) => ({ ...entry })),
    revocationRequests: () => revocationLog.map((entry) => ({ ...entry })),
    registrationRequests: () => registrationLog.map((entry) => ({ ...entry })),
    forgetClient: (clientId) => store.adapterFor('Client').destroy(clientId),
    resourceRequests: () => resourceLog.map((entry) => ({ ...entry })),
    revokeAll: () => store.revokeGrants(() => true),
    revokeGrantsOf: (accountId) => store.revokeGrants((grant) => grant.accountId === accountId),
    expireAccessTokens: () => store.expire('AccessToken'),
    setGrantableScopes(scopes) {
      grantable = scopes;
    },
    setAccessTokenTtl(seconds) {
      accessTokenTtl = seconds;
    },
    failNextTokenRequests(n, failure = 503) {
      for (let i = 0; i < n; i++) failures.push(failure);
    },
    holdTokenRequests() {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      hold = gate;
      return () => {
        if (hold === gate) hold = undefined;
        release();
      };
    },
    async close() {
      await Promise.all([stop(opServer), stop(resourceServer)]);
    },
  };
}

export interface ConsentOptions {
  /** The login typed on the provider's sign-in page; it becomes the account id (`sub`). */
  login: string;
  /** Any password works; default 'password'. */
  password?: string;
  /** Overall limit in milliseconds (default 15 000). */
  timeoutMs?: number;
}

/** The one-time consent link (`/oauth/start/<token>`) in a tool result's text; throws without one. */
export function consentLinkIn(text: string): string {
  const link = /http:\/\/\S+\/oauth\/start\/[A-Za-z0-9_-]+/.exec(text)?.[0];
  if (!link) throw new Error(`no consent link in: ${text}`);
  return link;
}

/**
 * Opens `url` (an authorization URL, or any URL that redirects to one, such as the gateway's
 * `/oauth/start/<token>` link) in `page`, signs in as `options.login` if asked, approves consent if
 * asked, and resolves with the URL the provider redirected the browser to (the redirect_uri with
 * `code` and `state`, or with `error` if the provider refused). The redirect target need not be
 * reachable; when it answers, this resolves once its page (after its own redirects) has loaded.
 */
export function approveConsent(page: Page, url: string, options: ConsentOptions): Promise<string> {
  return driveAuthorization(page, url, options, 'approve');
}

/**
 * Like approveConsent, but clicks "[ Cancel ]" on the consent page: the provider redirects to the
 * redirect_uri with error=access_denied. Throws if the provider never shows a consent page (the
 * account already granted everything asked for; clear the browser's cookies or use prompt=consent).
 */
export function denyConsent(page: Page, url: string, options: ConsentOptions): Promise<string> {
  return driveAuthorization(page, url, options, 'deny');
}

async function driveAuthorization(
  page: Page,
  url: string,
  options: ConsentOptions,
  decision: 'approve' | 'deny',
): Promise<string> {
  const deadline = Date.now() + (options.timeoutMs ?? 15_000);
  let redirectUri: URL | undefined;
  let providerOrigin: string | undefined;
  let arrival: Request | undefined;
  let onArrival: (() => void) | undefined;
  const arrived = new Promise<void>((resolve) => (onArrival = resolve));

  const onRequest = (request: Request) => {
    if (arrival || !request.isNavigationRequest() || request.frame() !== page.mainFrame()) return;
    const target = new URL(request.url());
    const redirect = target.searchParams.get('redirect_uri');
    if (redirect && target.searchParams.has('client_id') && target.searchParams.has('response_type')) {
      redirectUri = new URL(redirect);
      providerOrigin = target.origin;
      return;
    }
    if (redirectUri && target.origin === redirectUri.origin && target.pathname === redirectUri.pathname) {
      arrival = request;
      onArrival?.();
    }
  };

  let lastError: unknown;
  const remaining = () => {
    const left = deadline - Date.now();
    if (left <= 0) {
      throw new Error(`authorization in the browser timed out at ${page.url()}`, { cause: lastError });
    }
    return left;
  };
  // Runs `action`, then resolves on the next page load, the arrival at the redirect_uri, or after
  // `capMs` (default: the deadline).
  const settle = async (action: () => Promise<unknown>, capMs?: number) => {
    let onLoad: (() => void) | undefined;
    const loaded = new Promise<void>((resolve) => (onLoad = resolve));
    const listener = () => onLoad?.();
    page.on('domcontentloaded', listener);
    let timer: NodeJS.Timeout | undefined;
    const wait = Math.min(remaining(), capMs ?? Infinity);
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, wait)));
    try {
      // A navigation that ends on an unreachable redirect_uri rejects: the arrival is what counts.
      await Promise.race([
        action().catch((error: unknown) => {
          lastError = error;
        }),
        arrived,
      ]);
      await Promise.race([loaded, arrived, timeout]);
    } finally {
      clearTimeout(timer);
      page.off('domcontentloaded', listener);
    }
  };

  page.on('request', onRequest);
  try {
    let consentShown = false;
    await settle(() => page.goto(url, { waitUntil: 'domcontentloaded', timeout: remaining() }));
    while (!arrival) {
      remaining();
      const screen = await currentScreen(page);
      if (screen === 'start') {
        // The gateway's own start page: continue to the provider.
        await settle(() =>
          page.click('form[action*="/oauth/start/"] button[type="submit"]', { timeout: remaining() }),
        );
      } else if (screen === 'login') {
        await page.fill('input[name="login"]', options.login, { timeout: remaining() });
        await page.fill('input[name="password"]', options.password ?? 'password', { timeout: remaining() });
        await settle(() => page.click('button[type="submit"]', { timeout: remaining() }));
      } else if (screen === 'consent') {
        consentShown = true;
        const target = decision === 'approve' ? 'button[type="submit"]' : 'a[href$="/abort"]';
        await settle(() => page.click(target, { timeout: remaining() }));
      } else if (screen === 'error') {
        const text = await page.locator('body').innerText();
        throw new Error(`the authorization server showed an error page:\n${text}`);
      } else {
        // Perhaps between pages (a navigation in flight): give it a moment, then give up.
        const before = page.url();
        await settle(() => Promise.resolve(), 2_000);
        if (!arrival && page.url() === before && (await currentScreen(page)) === 'other') {
          const text = await page
            .locator('body')
            .innerText()
            .catch(() => '');
          throw new Error(`stuck at ${before}: neither a sign-in nor a consent page\n${text}`);
        }
      }
    }
    if (decision === 'deny' && !consentShown) {
      throw new Error('the authorization server never showed a consent page, so consent could not be denied');
    }
    const response = await arrival.response();
    if (response && providerOrigin) {
      const from = providerOrigin;
      await page.waitForURL((current) => current.origin !== from, {
        waitUntil: 'domcontentloaded',
        timeout: remaining(),
      });
    }
    return arrival.url();
  } finally {
    page.off('request', onRequest);
  }
}

async function currentScreen(page: Page): Promise<'start' | 'login' | 'consent' | 'error' | 'other'> {
  try {
    return await page.evaluate(() => {
      const doc = (
        globalThis as unknown as { document: { querySelector(selector: string): unknown; title: string } }
      ).document;
      if (doc.querySelector('form[action*="/oauth/start/"]')) return 'start';
      if (doc.querySelector('form input[name="prompt"][value="login"]')) return 'login';
      if (doc.querySelector('form input[name="prompt"][value="consent"]')) return 'consent';
      if (doc.title === 'oops! something went wrong') return 'error';
      return 'other';
    });
  } catch {
    return 'other'; // the page navigated while we looked
  }
}

/** An oidc-provider adapter over one Map per server; tokens reference their grant by `grantId`. */
class MemoryStore {
  private readonly entries = new Map<string, { model: string; payload: AdapterPayload; expiresAt: number }>();
  private readonly sessionUids = new Map<string, string>();
  private readonly userCodes = new Map<string, string>();

  adapterFor(model: string): Adapter {
    const key = (id: string) => `${model}:${id}`;
    const find = (id: string | undefined) => (id === undefined ? undefined : this.get(key(id)));
    return {
      upsert: (id, payload, expiresIn) => {
        this.entries.set(key(id), {
          model,
          payload: { ...payload },
          expiresAt: Date.now() + expiresIn * 1000,
        });
        if (model === 'Session' && payload.uid) this.sessionUids.set(payload.uid, id);
        if (payload.userCode) this.userCodes.set(payload.userCode, id);
        return Promise.resolve();
      },
      find: (id) => Promise.resolve(find(id)),
      findByUid: (uid) => Promise.resolve(find(this.sessionUids.get(uid))),
      findByUserCode: (userCode) => Promise.resolve(find(this.userCodes.get(userCode))),
      consume: (id) => {
        const entry = this.entries.get(key(id));
        if (entry) entry.payload.consumed = Math.floor(Date.now() / 1000);
        return Promise.resolve();
      },
      destroy: (id) => {
        this.entries.delete(key(id));
        return Promise.resolve();
      },
      revokeByGrantId: (grantId) => {
        for (const [k, entry] of this.entries) {
          if (entry.model === model && entry.payload.grantId === grantId) this.entries.delete(k);
        }
        return Promise.resolve();
      },
    };
  }

  /** Deletes the grants `select` picks and every artifact minted under them. */
  revokeGrants(select: (grant: AdapterPayload) => boolean): number {
    const grantIds = new Set<string>();
    for (const [k, entry] of this.entries) {
      if (entry.model !== 'Grant' || !select(entry.payload)) continue;
      grantIds.add(k.slice('Grant:'.length));
      this.entries.delete(k);
    }
    for (const [k, entry] of this.entries) {
      if (entry.payload.grantId && grantIds.has(entry.payload.grantId)) this.entries.delete(k);
    }
    return grantIds.size;
  }

  expire(model: string): number {
    let count = 0;
    const past = Math.floor(Date.now() / 1000) - 1;
    for (const entry of this.entries.values()) {
      if (entry.model !== model) continue;
      entry.payload.exp = past;
      count++;
    }
    return count;
  }

  private get(k: string): AdapterPayload | undefined {
    const entry = this.entries.get(k);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.entries.delete(k);
      return undefined;
    }
    return { ...entry.payload };
  }
}

/** oidc-provider warns on every construction that devInteractions are development-only; we know. */
function withoutDevInteractionsWarning<T>(build: () => T): T {
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && args[0].includes('devInteractions')) return;
    warn(...args);
  };
  try {
    return build();
  } finally {
    console.warn = warn;
  }
}

/** A fresh request carrying `body`, for oidc-provider to read as if it were the original. */
function replay(original: IncomingMessage, body: Buffer): IncomingMessage {
  const copy = new IncomingMessage(original.socket);
  copy.method = original.method ?? 'POST';
  copy.url = original.url ?? '/';
  copy.httpVersion = original.httpVersion;
  copy.httpVersionMajor = original.httpVersionMajor;
  copy.httpVersionMinor = original.httpVersionMinor;
  copy.headers = original.headers;
  copy.rawHeaders = original.rawHeaders;
  copy.push(body);
  copy.push(null);
  // Otherwise IncomingMessage#_destroy (autoDestroy after 'end') takes it for an aborted upload and
  // destroys the shared socket before the response is written.
  copy.complete = true;
  return copy;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function basicClientId(header: string | undefined): string | undefined {
  const match = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    return decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
  } catch {
    return decoded.slice(0, colon);
  }
}

function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

async function listen(server: Server): Promise<string> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function stop(server: Server): Promise<void> {
  server.closeAllConnections();
  server.close();
  await once(server, 'close');
}

/** A PKCE S256 pair: send `challenge` (with code_challenge_method=S256), later `verifier`. */
export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}
