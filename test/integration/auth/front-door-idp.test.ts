import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { IdentityProviderInput } from '../../../core/admin/identity-providers.js';
import type { Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser } from '../../helpers/browser.js';
import { connect } from '../../helpers/clients.js';
import { callbackServer, frontDoorRecords, pkce, type CallbackServer } from '../../helpers/front-door.js';
import { freePort } from '../../helpers/gateway.js';
import { approveConsent, startAuthServer, type AuthServer } from '../../helpers/oauth-server.js';
import { petshopApi, startPetshop, type PetshopGateway } from '../../helpers/petshop.js';

const PET_KEY = 'ps_idpdoor1';
const IDP_SECRET = 'idp-client-secret-7f3a9c1e';
let shop: PetshopGateway;
let idp: AuthServer;
let callback: CallbackServer;
let browser: Awaited<ReturnType<typeof openBrowser>>;
let keyId: string;

beforeAll(async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  idp = await startAuthServer({
    clients: [
      { client_id: 'toolgate-gw', client_secret: IDP_SECRET, redirect_uris: [`${base}/signin/idp/callback`] },
    ],
  });
  shop = await startPetshop(petshopApi({ keys: [PET_KEY], body: { email: 'idp@door.test', items: [] } }), {
    env: () => ({ TOOLGATE_PORT: String(port), TOOLGATE_BASE_URL: base }),
  });
  callback = await callbackServer();
  browser = await openBrowser();
  keyId = await keyWithIdp('acme', { display_name: 'Acme Corp' });
});
afterAll(async () => {
  await browser?.close();
  await callback?.close();
  await shop?.close();
  await idp?.close();
});

const base = (): string => shop.tg.url;
const ops = () => shop.tg.gateway.operations.identityProviders;

/** A new client key whose people sign in as `name` through the test identity provider (unless overridden). */
async function keyWithIdp(name: string, overrides: IdentityProviderInput = {}): Promise<string> {
  const { id } = await shop.tg.key('client', `${name}-co`);
  await ops().set({
    key: id,
    name,
    issuer: idp.issuer,
    client_id: 'toolgate-gw',
    client_secret: IDP_SECRET,
    ...overrides,
  });
  return id;
}

/** The error the page in the browser shows, once it shows one. */
async function shownError(): Promise<string> {
  await browser.page.waitForSelector('.error');
  return browser.page.innerText('.error');
}

/** Front-door records of identity-provider sign-ins under way, counted in the database itself. */
const pendingSignIns = (): number => frontDoorRecords(shop.tg.dataDir).IdpSignIn ?? 0;

/** An agent application's authorization, opened in Chromium up to the front door's sign-in page. */
async function openSignIn(): Promise<{ clientId: string; verifier: string }> {
  // A fresh browser: the identity provider would otherwise sign the last person in again.
  await browser.context.clearCookies();
  const response = await fetch(`${base()}/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'IdP Agent',
      redirect_uris: [callback.url],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
    }),
  });
  const clientId = ((await response.json()) as { client_id: string }).client_id;
  const { verifier, challenge } = pkce();
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: callback.url,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'st-idp',
    resource: `${base()}/mcp`,
    scope: 'mcp offline_access',
  });
  await browser.page.goto(`${base()}/authorize?${query.toString()}`);
  await browser.page.waitForSelector('#idp');
  return { clientId, verifier };
}

/** Types the sign-in name and submits that form. */
async function submitName(name: string): Promise<void> {
  await browser.page.fill('#idp', name);
  await browser.page.click('form:has(input[value="idp"]) button');
}

/**
 * Signs in at the identity provider named `name` as `login` (its login page takes any name, which
 * becomes `sub`), `meanwhile` done once the browser is on its way there; resolves with the URL of
 * its answer to the gateway.
 */
async function throughIdp(
  name: string,
  login: string,
  meanwhile: () => Promise<unknown> = () => Promise.resolve(),
): Promise<string> {
  const page = browser.page;
  const authorization = new Promise<string>((resolve) => {
    const onRequest = (request: Request): void => {
      if (!request.url().startsWith(`${idp.issuer}/auth?`)) return;
      page.off('request', onRequest);
      resolve(request.url());
    };
    page.on('request', onRequest);
  });
  await submitName(name);
  const url = await authorization;
  await meanwhile();
  return approveConsent(page, url, { login });
}

/** The whole flow: sign in through the identity provider as `login`, approve, get the token. */
async function signInThroughIdp(login: string): Promise<{ access: string; answer: string }> {
  const { clientId, verifier } = await openSignIn();
  const answer = await throughIdp('acme', login);
  await browser.page.waitForSelector('button:has-text("Allow")');
  const consent = await browser.page.innerText('main');
  expect(consent).toContain(`user ${login}`);
  expect(consent).toContain('You signed in through your organization');
  await browser.page.click('button:has-text("Allow")');
  const redirect = await callback.next();
  const response = await fetch(`${base()}/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: redirect.get('code') ?? '',
      redirect_uri: callback.url,
      client_id: clientId,
      code_verifier: verifier,
    }),
  });
  expect(response.status).toBe(200);
  return { access: String(((await response.json()) as { access_token: string }).access_token), answer };
}

describe('sign-in through the client’s own identity provider', () => {
  it('gives two people signed in through it two separate scopes, each with its own connections', async () => {
    const alice = await signInThroughIdp('alice');
    const bob = await signInThroughIdp('bob');
    expect(alice.access).toMatch(/^tgat_/);
    expect(pendingSignIns()).toBe(0);

    const asAlice = await connect('2026-07-28', shop.tg.mcpUrl(), {
      authorization: `Bearer ${alice.access}`,
    });
    const made = await asAlice.callTool('connect_provider', {
      provider: 'petshop',
      credentials: { api_key: PET_KEY },
    });
    expect(made.isError, JSON.stringify(made.content)).toBeFalsy();
    expect(await asAlice.listToolNames()).toContain('petshop_list_pets');
    await asAlice.close();
    const asBob = await connect('2026-07-28', shop.tg.mcpUrl(), { authorization: `Bearer ${bob.access}` });
    const bobs = await asBob.listToolNames();
    expect(bobs).toContain('list_providers');
    expect(bobs).not.toContain('petshop_list_pets');
    await asBob.close();

    const grants = await shop.tg.gateway.frontDoor.grantsOfKey(keyId);
    expect(grants.map((g) => [g.via, g.scope.userId, g.scope.orgId]).sort()).toEqual([
      ['idp', 'alice', null],
      ['idp', 'bob', null],
    ]);

    // The identity provider's answer works once: replayed, it is refused and nothing changes.
    const replay = await fetch(alice.answer, { redirect: 'manual' });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('was used already');
    expect(await shop.tg.gateway.frontDoor.grantsOfKey(keyId)).toHaveLength(2);
  });

  it('refuses an unknown sign-in name on the sign-in page, nothing stored', async () => {
    await openSignIn();
    await submitName('nobody');
    expect(await shownError()).toContain('No organization signs in here as “nobody”');
    expect(pendingSignIns()).toBe(0);
  });

  it('says so when the identity provider cannot be reached, nothing stored', async () => {
    await keyWithIdp('gone', { issuer: `http://127.0.0.1:${await freePort()}` });
    await openSignIn();
    await submitName('gone');
    expect(await shownError()).toContain('could not be reached');
    expect(pendingSignIns()).toBe(0);
  });

  it('shows a clear page when the identity provider gives no claim for user_id, and signs nobody in', async () => {
    const id = await keyWithIdp('mail-co', { user_claim: 'employee_number' });
    await openSignIn();
    await throughIdp('mail-co', 'carol');
    expect(await shownError()).toContain('gave no “employee_number” claim');
    expect(await shop.tg.gateway.frontDoor.grantsOfKey(id)).toEqual([]);
    expect(pendingSignIns()).toBe(0);
  });

  it('refuses an answer with a state it never gave, and ends a sign-in whose key was revoked meanwhile', async () => {
    const forged = await fetch(`${base()}/signin/idp/callback?code=abc&state=not-ours`, {
      redirect: 'manual',
    });
    expect(forged.status).toBe(400);
    expect(await forged.text()).toContain('was never asked for');

    const id = await keyWithIdp('revoked-co');
    await openSignIn();
    await throughIdp('revoked-co', 'dave', () => shop.tg.gateway.operations.revokeKey(id));
    expect(await shownError()).toContain('no longer has access');
    expect(await shop.tg.gateway.frontDoor.grantsOfKey(id)).toEqual([]);
  });

  it('keeps the client secret sealed: never shown, never in the database in clear', async () => {
    expect(JSON.stringify(await ops().list())).not.toContain(IDP_SECRET);
    const db = new Database(join(shop.tg.dataDir, 'toolgate.db'), { readonly: true });
    try {
      const row = db.prepare('SELECT client_secret FROM identity_providers WHERE name = ?').get('acme') as {
        client_secret: string;
      };
      expect(row.client_secret).not.toContain(IDP_SECRET);
    } finally {
      db.close();
    }
    expect(shop.tg.logs.join('\n')).not.toContain(IDP_SECRET);
  });
});
