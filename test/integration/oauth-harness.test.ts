// Self-test of the OAuth 2 test harness (test/helpers/oauth-server.ts): a real authorization server,
// a real resource API and real Chromium, exercised the way the gateway will use them.
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openBrowser } from '../helpers/browser.js';
import {
  approveConsent,
  denyConsent,
  pkcePair,
  startAuthServer,
  type AuthServer,
  type OAuthTestClient,
} from '../helpers/oauth-server.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

type Browser = Awaited<ReturnType<typeof openBrowser>>;

interface TokenAnswer {
  status: number;
  body: Record<string, unknown>;
}

let browser: Browser;
let catcher: Receiver;
let server: AuthServer;
let basicClient: OAuthTestClient;
let postClient: OAuthTestClient;

beforeAll(async () => {
  // Fails (never skips) without Chromium: openBrowser throws.
  [browser, catcher] = await Promise.all([openBrowser(), startReceiver()]);
  basicClient = {
    client_id: 'gateway-basic',
    client_secret: 'basic-secret-1234567890',
    redirect_uris: [`${catcher.url}/oauth/callback`],
  };
  postClient = {
    client_id: 'gateway-post',
    client_secret: 'post-secret-1234567890',
    redirect_uris: [`${catcher.url}/oauth/callback`],
    token_endpoint_auth_method: 'client_secret_post',
  };
  server = await startAuthServer({ clients: [basicClient, postClient], accessTokenTtlSeconds: 30 });
});

afterAll(async () => {
  await Promise.all([browser?.close(), server?.close(), catcher?.close()]);
});

beforeEach(async () => {
  // A fresh provider session each time: sign-in and consent pages always show.
  await browser.context.clearCookies();
  server.setGrantableScopes(undefined);
  server.setAccessTokenTtl(30);
});

function authorizationUrl(client: OAuthTestClient, params: Record<string, string> = {}) {
  const pkce = pkcePair();
  const state = `state-${Math.random().toString(36).slice(2)}`;
  const url = new URL(server.authorizationUrl);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: client.redirect_uris[0] ?? '',
    scope: 'read write offline_access',
    state,
    code_challenge: pkce.challenge,
    code_challenge_method: 'S256',
    ...params,
  }).toString();
  return { url: url.href, state, verifier: pkce.verifier };
}

async function tokenRequest(client: OAuthTestClient, form: Record<string, string>): Promise<TokenAnswer> {
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
  const body = new URLSearchParams(form);
  if (client.token_endpoint_auth_method === 'client_secret_post') {
    body.set('client_id', client.client_id);
    body.set('client_secret', client.client_secret);
  } else {
    const id = encodeURIComponent(client.client_id);
    const secret = encodeURIComponent(client.client_secret);
    headers.authorization = `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
  }
  const res = await request(server.tokenUrl, { method: 'POST', headers, body: body.toString() });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown> };
}

/** Exchanges `refreshToken` for new tokens at the token endpoint, as `client`. */
function refresh(client: OAuthTestClient, refreshToken: unknown): Promise<TokenAnswer> {
  return tokenRequest(client, { grant_type: 'refresh_token', refresh_token: String(refreshToken) });
}

async function callApi(path: string, accessToken: unknown) {
  const res = await request(`${server.resourceUrl}${path}`, {
    headers: { authorization: `Bearer ${String(accessToken)}` },
  });
  return {
    status: res.statusCode,
    headers: res.headers,
    body: (await res.body.json()) as Record<string, unknown>,
  };
}

/** Sign-in and consent in Chromium, then the code exchange. */
async function connect(client: OAuthTestClient, login: string, params: Record<string, string> = {}) {
  const auth = authorizationUrl(client, params);
  const redirected = new URL(await approveConsent(browser.page, auth.url, { login }));
  expect(redirected.searchParams.get('state')).toBe(auth.state);
  const code = redirected.searchParams.get('code');
  expect(code).toBeTruthy();
  const tokens = await tokenRequest(client, {
    grant_type: 'authorization_code',
    code: code ?? '',
    redirect_uri: client.redirect_uris[0] ?? '',
    code_verifier: auth.verifier,
  });
  expect(tokens.status).toBe(200);
  return tokens.body;
}

/** Requests that reached the callback catcher (Chromium also asks it for /favicon.ico). */
function callbacksSince(start: number) {
  return catcher.received
    .slice(start)
    .map((r) => r.url)
    .filter((url) => url.startsWith('/oauth/callback'));
}

function grantTypesSince(start: number) {
  return server
    .tokenRequests()
    .slice(start)
    .map((r) => r.grant_type);
}

describe('OAuth 2 test harness', () => {
  it('runs authorization code + PKCE in Chromium, serves /me, rotates refresh tokens', async () => {
    const before = server.tokenRequests().length;
    const callbacksBefore = catcher.received.length;
    const auth = authorizationUrl(basicClient);

    const finalUrl = await approveConsent(browser.page, auth.url, { login: 'alice' });

    const redirected = new URL(finalUrl);
    expect(redirected.origin + redirected.pathname).toBe(basicClient.redirect_uris[0]);
    expect(redirected.searchParams.get('state')).toBe(auth.state);
    const code = redirected.searchParams.get('code') ?? '';
    expect(code).not.toBe('');
    // The browser really landed on the callback, and the page shows what it answered.
    expect(callbacksSince(callbacksBefore)).toEqual([`${redirected.pathname}${redirected.search}`]);
    expect(await browser.page.locator('body').innerText()).toBe('ok');
    expect(server.authorizationRequests().at(-1)?.params).toMatchObject({
      client_id: basicClient.client_id,
      state: auth.state,
      code_challenge_method: 'S256',
    });

    // A wrong PKCE verifier is refused; the right one works (the code is still unused).
    const wrong = await tokenRequest(basicClient, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: basicClient.redirect_uris[0] ?? '',
      code_verifier: pkcePair().verifier,
    });
    expect(wrong).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    const tokens = await tokenRequest(basicClient, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: basicClient.redirect_uris[0] ?? '',
      code_verifier: auth.verifier,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body).toMatchObject({ token_type: 'Bearer', scope: 'read write', expires_in: 30 });
    expect(tokens.body.access_token).toEqual(expect.any(String));
    expect(tokens.body.refresh_token).toEqual(expect.any(String));

    const me = await callApi('/me', tokens.body.access_token);
    expect(me).toMatchObject({ status: 200, body: { sub: 'alice', email: 'alice@example.test' } });
    const items = await callApi('/items', tokens.body.access_token);
    expect(items.status).toBe(200);
    expect(items.body.items).toHaveLength(2);
    expect(server.resourceRequests().at(-1)).toMatchObject({
      method: 'GET',
      path: '/items',
      authorization: `Bearer ${String(tokens.body.access_token)}`,
      status: 200,
    });

    // Refresh rotates: a new refresh token and a new working access token.
    const refreshed = await refresh(basicClient, tokens.body.refresh_token);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body).toMatchObject({ scope: 'read write', expires_in: 30 });
    expect(refreshed.body.refresh_token).toEqual(expect.any(String));
    expect(refreshed.body.refresh_token).not.toBe(tokens.body.refresh_token);
    expect(refreshed.body.access_token).not.toBe(tokens.body.access_token);
    expect((await callApi('/me', refreshed.body.access_token)).status).toBe(200);

    // Replaying the rotated refresh token is invalid_grant and revokes the whole grant.
    const replay = await refresh(basicClient, tokens.body.refresh_token);
    expect(replay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await callApi('/me', refreshed.body.access_token)).status).toBe(401);
    const afterReplay = await refresh(basicClient, refreshed.body.refresh_token);
    expect(afterReplay).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });

    expect(grantTypesSince(before)).toEqual([
      'authorization_code',
      'authorization_code',
      'refresh_token',
      'refresh_token',
      'refresh_token',
    ]);
    expect(
      server
        .tokenRequests()
        .slice(before)
        .map((r) => [r.status, r.error ?? null, r.client_id]),
    ).toEqual([
      [400, 'invalid_grant', 'gateway-basic'],
      [200, null, 'gateway-basic'],
      [200, null, 'gateway-basic'],
      [400, 'invalid_grant', 'gateway-basic'],
      [400, 'invalid_grant', 'gateway-basic'],
    ]);
  });

  it('revokeAll and revokeGrantsOf end access and refresh; expireAccessTokens ends access only', async () => {
    const bob = await connect(basicClient, 'bob');
    await browser.context.clearCookies();
    const carol = await connect(postClient, 'carol');
    expect(carol.refresh_token).toEqual(expect.any(String));

    expect(server.expireAccessTokens()).toBeGreaterThanOrEqual(2);
    const expired = await callApi('/me', bob.access_token);
    expect(expired.status).toBe(401);
    expect(expired.body).toEqual({ error: 'invalid_token' });
    expect(expired.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    const bobAgain = await refresh(basicClient, bob.refresh_token);
    expect(bobAgain.status).toBe(200);
    expect((await callApi('/me', bobAgain.body.access_token)).status).toBe(200);

    // One account's grants only.
    expect(server.revokeGrantsOf('bob')).toBe(1);
    expect((await callApi('/me', bobAgain.body.access_token)).status).toBe(401);
    expect(await refresh(basicClient, bobAgain.body.refresh_token)).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });

    // carol (client_secret_post) is untouched until revokeAll.
    const carolAgain = await refresh(postClient, carol.refresh_token);
    expect(carolAgain.status).toBe(200);
    expect(server.revokeAll()).toBeGreaterThanOrEqual(1);
    expect((await callApi('/me', carolAgain.body.access_token)).status).toBe(401);
    expect(await refresh(postClient, carolAgain.body.refresh_token)).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });

    // Without a token: 401 with a bare challenge.
    const anonymous = await request(`${server.resourceUrl}/me`);
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers['www-authenticate']).toBe('Bearer');
    await anonymous.body.dump();
  });

  it('denyConsent lands on the redirect_uri with error=access_denied', async () => {
    const before = catcher.received.length;
    const auth = authorizationUrl(basicClient);
    const finalUrl = new URL(await denyConsent(browser.page, auth.url, { login: 'dave' }));
    expect(finalUrl.searchParams.get('error')).toBe('access_denied');
    expect(finalUrl.searchParams.get('state')).toBe(auth.state);
    expect(finalUrl.searchParams.has('code')).toBe(false);
    expect(callbacksSince(before)).toEqual([`${finalUrl.pathname}${finalUrl.search}`]);
  });

  it('grants fewer scopes than asked when told to, and lets access tokens expire on time', async () => {
    server.setGrantableScopes(['write']);
    server.setAccessTokenTtl(2);
    const tokens = await connect(basicClient, 'erin');
    expect(tokens).toMatchObject({ scope: 'write', expires_in: 2 });
    expect((await callApi('/me', tokens.access_token)).status).toBe(200);
    const items = await callApi('/items', tokens.access_token);
    expect(items.status).toBe(403);
    expect(items.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="read"');

    // No clock tolerance: expiry is a moment, not an event, so poll until it passes.
    const started = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - started < 3_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await callApi('/me', tokens.access_token)).status;
    }
    expect(status).toBe(401);
    expect(Date.now() - started).toBeLessThan(2_100);
    // The refresh token outlives it.
    const refreshed = await refresh(basicClient, tokens.refresh_token);
    expect(refreshed.body).toMatchObject({ scope: 'write', expires_in: 2 });
  });

  it('injects failures, holds requests, and approves a second time without a sign-in', async () => {
    const tokens = await connect(basicClient, 'frank');
    // Same browser session, grant still valid: the provider redirects straight back.
    const again = await approveConsent(browser.page, authorizationUrl(basicClient).url, { login: 'frank' });
    expect(new URL(again).searchParams.get('code')).toBeTruthy();

    const before = server.tokenRequests().length;
    server.failNextTokenRequests(2, 503);
    const refreshForm = { grant_type: 'refresh_token', refresh_token: String(tokens.refresh_token) };
    expect(await tokenRequest(basicClient, refreshForm)).toMatchObject({
      status: 503,
      body: { error: 'temporarily_unavailable' },
    });
    expect((await tokenRequest(basicClient, refreshForm)).status).toBe(503);

    server.failNextTokenRequests(1, 'reset');
    await expect(tokenRequest(basicClient, refreshForm)).rejects.toThrow();

    server.failNextTokenRequests(1, { status: 400, body: { error: 'invalid_grant' } });
    expect(await tokenRequest(basicClient, refreshForm)).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });

    // Held: the request arrives (and is counted) but is answered only after release.
    const release = server.holdTokenRequests();
    const pending = tokenRequest(basicClient, refreshForm);
    await server.waitForTokenRequests(before + 5);
    expect(server.tokenRequests().at(-1)).toMatchObject({ grant_type: 'refresh_token', status: undefined });
    release();
    const refreshed = await pending;
    expect(refreshed.status).toBe(200);
    expect((await callApi('/me', refreshed.body.access_token)).body).toMatchObject({ sub: 'frank' });

    expect(
      server
        .tokenRequests()
        .slice(before)
        .map((r) => [r.grant_type, r.status ?? null, r.injected]),
    ).toEqual([
      ['refresh_token', 503, true],
      ['refresh_token', 503, true],
      ['refresh_token', null, true],
      ['refresh_token', 400, true],
      ['refresh_token', 200, false],
    ]);

    // Revocation is recorded and takes effect.
    const res = await request(server.revocationUrl, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${basicClient.client_id}:${basicClient.client_secret}`).toString('base64')}`,
      },
      body: new URLSearchParams({
        token: String(refreshed.body.access_token),
        token_type_hint: 'access_token',
      }).toString(),
    });
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect(server.revocationRequests().at(-1)).toMatchObject({
      token: refreshed.body.access_token,
      token_type_hint: 'access_token',
      client_id: basicClient.client_id,
      status: 200,
    });
    expect((await callApi('/me', refreshed.body.access_token)).status).toBe(401);
  });
});
