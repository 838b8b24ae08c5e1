import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  callbackServer,
  FormBrowser,
  frontDoorRecords,
  HandClient,
  pkce,
  signInByForm,
  type CallbackServer,
} from '../../helpers/front-door.js';
import { CIMD_MAX_BYTES } from '../../../core/auth/front-door/cimd.js';
import { documentAnswer, startCimdGateway, type CimdGateway } from '../../helpers/cimd.js';
import { connect } from '../../helpers/clients.js';
import { freePort, postMcp, startGateway, type TestGateway } from '../../helpers/gateway.js';

let tg: TestGateway;
let callback: CallbackServer;

beforeAll(async () => {
  // Links and metadata name the base URL: the gateway gets its port up front.
  const port = await freePort();
  tg = await startGateway({ TOOLGATE_PORT: String(port), TOOLGATE_BASE_URL: `http://127.0.0.1:${port}` });
  callback = await callbackServer();
});
afterAll(async () => {
  await callback?.close();
  await tg?.close();
});

const base = (): string => tg.url;
const client = (): HandClient => new HandClient(base(), callback);

/** GETs an authorization URL as a browser would, without following where it sends the person. */
function authorize(url: string): Promise<Response> {
  return fetch(url, { redirect: 'manual' });
}

/** Asserts that `attempt` answers a page (not a redirect) with `status` and `text`, storing nothing. */
async function refusedWithPage(
  attempt: () => Promise<Response>,
  status: number,
  text: string | RegExp,
  dataDir = tg.dataDir,
) {
  const records = (): Record<string, number> => frontDoorRecords(dataDir);
  const before = records();
  const response = await attempt();
  const body = await response.text();
  expect(response.status, body).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^text\/html/);
  expect(response.headers.get('location')).toBeNull();
  expect(body).toMatch(text);
  expect(records()).toEqual(before);
}

/** Asserts that the authorization is refused by an RFC 6749 4.1.2.1 redirect with `error`, storing nothing. */
async function refusedByRedirect(url: string, error: string, description: RegExp) {
  const records = (): Record<string, number> => frontDoorRecords(tg.dataDir);
  const before = records();
  const response = await authorize(url);
  expect(response.status).toBe(303);
  const to = new URL(response.headers.get('location')!);
  expect(`${to.origin}${to.pathname}`).toBe(callback.url);
  expect(to.searchParams.get('error')).toBe(error);
  expect(to.searchParams.get('error_description')).toMatch(description);
  expect(to.searchParams.get('state')).toBe('st-1');
  expect(to.searchParams.get('iss')).toBe(base());
  expect(records()).toEqual(before);
}

/** A registered client's sign-in with a key up to the code: what the token endpoint is given. */
async function codeFor(key: string, userId?: string) {
  const hand = client();
  const clientId = await hand.register();
  const { verifier, challenge } = pkce();
  const redirect = await signInByForm(base(), hand.authorizeUrl(clientId, challenge), {
    key,
    ...(userId ? { userId } : {}),
  });
  const code = redirect.get('code');
  expect(code, redirect.toString()).toBeTruthy();
  return { hand, clientId, verifier, code: code! };
}

/** A finished sign-in: the tokens the client holds. */
async function tokensFor(key: string, userId?: string) {
  const { hand, clientId, verifier, code } = await codeFor(key, userId);
  const tokens = await hand.token({
    grant_type: 'authorization_code',
    code,
    redirect_uri: callback.url,
    client_id: clientId,
    code_verifier: verifier,
  });
  expect(tokens.status, JSON.stringify(tokens.body)).toBe(200);
  return {
    hand,
    clientId,
    access: String(tokens.body.access_token),
    refresh: String(tokens.body.refresh_token),
  };
}

/** A token at /mcp/ refused as a client sees it: 401, TG_ERR_TOKEN_INVALID, the invalid_token challenge. */
async function expectRefused(token: string): Promise<void> {
  const response = await postMcp(tg.mcpUrl(), '', {}, { authorization: `Bearer ${token}`, 'x-api-key': '' });
  expect(response.status).toBe(401);
  expect(((await response.json()) as { error: { code: string } }).error.code).toBe('TG_ERR_TOKEN_INVALID');
  expect(response.headers.get('www-authenticate')).toBe(
    `Bearer resource_metadata="${base()}/.well-known/oauth-protected-resource", error="invalid_token"`,
  );
}

/** A token at /mcp/ working: an MCP client lists the tools with it. */
async function expectWorks(token: string): Promise<void> {
  const client = await connect('2026-07-28', tg.mcpUrl(), { authorization: `Bearer ${token}` });
  try {
    expect(await client.listToolNames()).toContain('list_providers');
  } finally {
    await client.close();
  }
}

describe('an authorization request the front door refuses, storing nothing', () => {
  it('names an unknown client: a page, since there is no redirect URI to trust', async () => {
    const { challenge } = pkce();
    await refusedWithPage(
      () => authorize(client().authorizeUrl('tgc_neverRegistered', challenge)),
      400,
      /not registered with this gateway/,
    );
  });

  it('asks for a redirect URI the registered client did not register exactly', async () => {
    const hand = client();
    const clientId = await hand.register();
    const { challenge } = pkce();
    for (const redirect of [
      `${callback.url}/x`,
      `${callback.url}?next=1`,
      callback.url.replace('127.0.0.1', 'localhost'),
    ]) {
      await refusedWithPage(
        () => authorize(hand.authorizeUrl(clientId, challenge, { redirect_uri: redirect })),
        400,
        /redirect_uri did not match any of the client&#39;s registered redirect_uris/,
      );
    }
  });

  it('has no state: a page saying MCP clients send one', async () => {
    const hand = client();
    const clientId = await hand.register();
    const url = new URL(hand.authorizeUrl(clientId, pkce().challenge));
    url.searchParams.delete('state');
    await refusedWithPage(() => authorize(url.href), 400, /no state parameter/);
  });

  it('has no PKCE challenge, or a plain one: invalid_request back to the client', async () => {
    const hand = client();
    const clientId = await hand.register();
    const without = new URL(hand.authorizeUrl(clientId, 'x'));
    without.searchParams.delete('code_challenge');
    without.searchParams.delete('code_challenge_method');
    await refusedByRedirect(without.href, 'invalid_request', /requires PKCE/);
    const { verifier } = pkce();
    await refusedByRedirect(
      hand.authorizeUrl(clientId, verifier, { code_challenge_method: 'plain' }),
      'invalid_request',
      /code_challenge_method/,
    );
  });
});

describe('the token endpoint', () => {
  it('refuses a wrong PKCE verifier, and a missing one, with invalid_grant; the right one then still gets the tokens', async () => {
    const { key } = await tg.key('solo');
    const { hand, clientId, verifier, code } = await codeFor(key);
    const exchange = (codeVerifier?: string) =>
      hand.token({
        grant_type: 'authorization_code',
        code,
        redirect_uri: callback.url,
        client_id: clientId,
        ...(codeVerifier === undefined ? {} : { code_verifier: codeVerifier }),
      });
    expect(await exchange(pkce().verifier)).toMatchObject({
      status: 400,
      body: { error: 'invalid_grant' },
    });
    expect(await exchange()).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    expect((await exchange(verifier)).status).toBe(200);
  });

  it('refuses a code used twice, and revokes the tokens its first use gave (RFC 6749 4.1.2)', async () => {
    const { key } = await tg.key('solo');
    const { hand, clientId, verifier, code } = await codeFor(key);
    const form = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: callback.url,
      client_id: clientId,
      code_verifier: verifier,
    };
    const first = await hand.token(form);
    expect(first.status).toBe(200);
    const access = String(first.body.access_token);
    await expectWorks(access);

    expect(await hand.token(form)).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    await expectRefused(access);
    const refreshed = await hand.token({
      grant_type: 'refresh_token',
      refresh_token: String(first.body.refresh_token),
      client_id: clientId,
    });
    expect(refreshed).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });
});

describe('revocation', () => {
  it('of the key a token signed in with: its tokens are refused with invalid_token, and cannot be refreshed', async () => {
    const { key, id } = await tg.key('client');
    const { hand, clientId, access, refresh } = await tokensFor(key, 'dora');
    await expectWorks(access);
    expect(await tg.gateway.keys.revoke(id)).toBe(true);
    await expectRefused(access);
    expect(
      await hand.token({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
  });

  it('of an access token at /revoke (RFC 7009): that token stops working, the refresh token goes on', async () => {
    const { key } = await tg.key('solo');
    const { hand, clientId, access, refresh } = await tokensFor(key);
    expect(await revoke(clientId, access, 'access_token')).toBe(200);
    await expectRefused(access);
    const refreshed = await hand.token({
      grant_type: 'refresh_token',
      refresh_token: refresh,
      client_id: clientId,
    });
    expect(refreshed.status).toBe(200);
    await expectWorks(String(refreshed.body.access_token));
    // Unknown and already revoked tokens are answered the same (RFC 7009 2.2).
    expect(await revoke(clientId, access, 'access_token')).toBe(200);
  });

  it('of a refresh token at /revoke: the whole grant ends, its access token with it', async () => {
    const { key } = await tg.key('solo');
    const { hand, clientId, access, refresh } = await tokensFor(key);
    expect(await revoke(clientId, refresh, 'refresh_token')).toBe(200);
    expect(
      await hand.token({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId }),
    ).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    await expectRefused(access);
  });
});

async function revoke(clientId: string, token: string, hint: string): Promise<number> {
  const response = await fetch(`${base()}/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, token_type_hint: hint, client_id: clientId }),
  });
  return response.status;
}

describe('a Client ID Metadata Document the front door refuses, storing nothing', () => {
  let cimd: CimdGateway;
  const documentUrl = (path: string): string => `${cimd.documents.url}${path}`;
  const agent = (path: string, extra: Record<string, unknown> = {}) => ({
    client_id: documentUrl(path),
    client_name: 'Refused Agent',
    redirect_uris: [callback.url],
    token_endpoint_auth_method: 'none',
    ...extra,
  });

  beforeAll(async () => {
    cimd = await startCimdGateway((req) => {
      if (req.url === '/large.json')
        return documentAnswer(agent(req.url, { padding: 'x'.repeat(CIMD_MAX_BYTES) }));
      if (req.url === '/not-json.json')
        return { status: 200, body: '<html>a web page</html>', headers: { 'content-type': 'text/html' } };
      if (req.url === '/elsewhere.json')
        return documentAnswer(agent(req.url, { redirect_uris: ['https://elsewhere.example/callback'] }));
      return { status: 404, body: 'not found' };
    });
  });
  afterAll(async () => {
    await cimd?.close();
  });

  /** The authorization an MCP client would open with the document at `url` as its client_id. */
  const authorizeWith = (url: string) =>
    authorize(new HandClient(cimd.url, callback).authorizeUrl(url, pkce().challenge));

  it('answers a page naming what is wrong with the document', async () => {
    const closed = `https://127.0.0.1:${await freePort()}/agent.json`;
    const cases: [string, RegExp][] = [
      [closed, /could not be fetched/],
      [documentUrl('/missing.json'), /answered HTTP 404/],
      [documentUrl('/large.json'), new RegExp(`larger than ${CIMD_MAX_BYTES / 1024} KB`)],
      [documentUrl('/not-json.json'), /is not JSON/],
    ];
    for (const [url, message] of cases)
      await refusedWithPage(() => authorizeWith(url), 400, message, cimd.dataDir);
  });

  it('refuses a redirect URI the document does not list, without redirecting there', async () => {
    await refusedWithPage(
      () => authorizeWith(documentUrl('/elsewhere.json')),
      400,
      /redirect_uri/,
      cimd.dataDir,
    );
  });
});

// Last in the file: the throttle it sets off holds for every key sign-in from this address.
describe('a wrong key pasted on the sign-in page', () => {
  it('is refused with a page saying so, and after five tries even the right key waits, answered 429', async () => {
    const { key } = await tg.key('solo');
    const hand = client();
    const clientId = await hand.register();
    const person = new FormBrowser(base());
    await person.open(hand.authorizeUrl(clientId, pkce().challenge));
    const wrong = `toolgate_${'A'.repeat(43)}${'B'.repeat(6)}`;
    const before = frontDoorRecords(tg.dataDir);
    for (let attempt = 1; attempt <= 5; attempt++) {
      const refused = await person.submit({ action: 'key', key: wrong });
      expect(refused.response.status).toBe(401);
      expect(refused.text).toContain('That API key is not valid');
      expect(refused.text).toContain('Sign in to Toolgate');
    }
    const throttled = await person.submit({ action: 'key', key });
    expect(throttled.response.status).toBe(429);
    expect(Number(throttled.response.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(throttled.text).toMatch(/Too many attempts: try again in \d+ seconds/);
    expect(throttled.leftTo).toBeUndefined();
    expect(frontDoorRecords(tg.dataDir)).toEqual(before);
  });
});
