import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, screenshot } from '../helpers/browser.js';
import { connect, type TestClient } from '../helpers/clients.js';
import { freePort, startGateway, type TestGateway } from '../helpers/gateway.js';
import {
  approveConsent,
  consentLinkIn,
  denyConsent,
  startAuthServer,
  type AuthServer,
} from '../helpers/oauth-server.js';
import { startReceiver } from '../helpers/receiver.js';
import type { Scope } from '../../core/domain.js';

/** A real-shaped OAuth2 provider whose endpoints the test points at a local authorization server. */
const MANIFEST = `# yaml-language-server: $schema=./manifest.schema.json
schema_version: 1
id: acme
display_name: Acme Cloud
description: Files and profile of an Acme Cloud account.
auth:
  kind: oauth2
  authorization_url: https://auth.acme.example/authorize
  token_url: https://auth.acme.example/token
  revocation_url: https://auth.acme.example/revoke
  scopes: { default: [read, write], separator: ' ' }
  pkce: true
  allow_org_apps: true
api:
  base_url: https://api.acme.example
identity: { tool: acme_me, pointer: /email }
tools:
  - name: acme_me
    description: The connected account.
    input_schema: { type: object, properties: {} }
    request: { method: GET, path: /me }
  - name: acme_items
    description: The account's items.
    input_schema: { type: object, properties: {} }
    request: { method: GET, path: /items }
categories:
  - { id: account, title: Account, tools: [acme_me, acme_items] }
`;

let auth: AuthServer;
let events: Awaited<ReturnType<typeof startReceiver>>;
let tg: TestGateway;
let browser: Awaited<ReturnType<typeof openBrowser>>;
let clientKey: string;
let clientId: string;
const clients: TestClient[] = [];

beforeAll(async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const redirect = [`${base}/oauth/callback`];
  auth = await startAuthServer({
    clients: [
      { client_id: 'toolgate-default', client_secret: 'default-secret', redirect_uris: redirect },
      { client_id: 'toolgate-org-a', client_secret: 'org-a-secret', redirect_uris: redirect },
      { client_id: 'toolgate-org-b', client_secret: 'org-b-secret', redirect_uris: redirect },
    ],
    accessTokenTtlSeconds: 300,
  });
  events = await startReceiver(() => ({ status: 204 }));
  const manifest = join(mkdtempSync(join(tmpdir(), 'toolgate-acme-')), 'acme.yaml');
  writeFileSync(manifest, MANIFEST);
  tg = await startGateway(
    {
      TOOLGATE_PORT: String(port),
      TOOLGATE_BASE_URL: base,
      TOOLGATE_ALLOW_PRIVATE_NETWORK: '1',
      TOOLGATE_EVENTS_WEBHOOK_URL: `${events.url}/events`,
      TOOLGATE_PROVIDER_ACME_AUTHORIZATION_URL: auth.authorizationUrl,
      TOOLGATE_PROVIDER_ACME_TOKEN_URL: auth.tokenUrl,
      TOOLGATE_PROVIDER_ACME_REVOCATION_URL: auth.revocationUrl,
      TOOLGATE_PROVIDER_ACME_BASE_URL: auth.resourceUrl,
      TOOLGATE_PROVIDER_ACME_CLIENT_ID: 'toolgate-default',
      TOOLGATE_PROVIDER_ACME_CLIENT_SECRET: 'default-secret',
      // Refreshes in these tests happen at call time, where the test can count them.
      TOOLGATE_REFRESH_MARGIN_MS: '0',
      TOOLGATE_REFRESH_SWEEP_MS: '3600000',
    },
    { manifestFiles: [manifest] },
  );
  const created = await tg.key('platform', 'acme-platform');
  clientKey = created.key;
  clientId = (await tg.gateway.keys.list()).find((k) => k.id === created.id)!.clientId;
  browser = await openBrowser();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await browser?.close();
  await tg?.close();
  await auth?.close();
  await events?.close();
});

async function agent(query: string): Promise<TestClient> {
  const client = await connect('2025 (v1 client)', tg.mcpUrl(query), { 'X-API-Key': clientKey });
  clients.push(client);
  return client;
}

async function startLink(client: TestClient): Promise<string> {
  const result = await client.callTool('connect_provider', { provider: 'acme' });
  expect(result.isError).toBeFalsy();
  return consentLinkIn(result.content[0]!.text!);
}

/** Opens a consent link, continues to the provider, approves there, and returns the final page's text. */
async function approve(link: string, login: string, shot?: string): Promise<string> {
  const { page } = browser;
  await browser.context.clearCookies();
  if (shot) {
    await page.goto(link);
    await screenshot(page, `${shot}-start`);
  }
  await approveConsent(page, link, { login });
  if (shot) await screenshot(page, `${shot}-done`);
  return page.locator('main').innerText();
}

const refreshes = (): number => auth.tokenRequests().filter((r) => r.grant_type === 'refresh_token').length;
const scope = (orgId: string | null, userId: string): Scope => ({ clientId, orgId, userId });

describe('OAuth2 connections end to end', () => {
  let alice: TestClient;

  it('connects through consent in the browser and calls the provider with the token', async () => {
    alice = await agent('?user_id=alice');
    const link = await startLink(alice);
    const done = await approve(link, 'alice', 'oauth');
    expect(done).toContain('Acme Cloud is connected');
    expect(done).toContain('alice@example.test');
    const me = await alice.callTool('acme_me');
    expect(me.isError).toBeFalsy();
    expect(me.content[0]!.text).toContain('alice@example.test');
    const authorize = auth.authorizationRequests().at(-1)!.params;
    expect(authorize).toMatchObject({
      client_id: 'toolgate-default',
      scope: 'read write',
      code_challenge_method: 'S256',
    });
    expect(authorize.state).toBeTruthy();
    const stored = await tg.gateway.store.connections.get(scope(null, 'alice'), 'acme');
    expect(stored).toMatchObject({ state: 'connected', account: 'alice@example.test', oauthApp: 'env:acme' });
    // The token the provider saw is stored sealed, never in clear.
    const token = auth
      .resourceRequests()
      .at(-1)!
      .authorization!.replace(/^Bearer /, '');
    expect(token.length).toBeGreaterThan(20);
    expect(stored!.credentials).not.toContain(token);
  });

  it('refreshes an expired token exactly once, also for 20 simultaneous calls', async () => {
    const record = (await tg.gateway.store.connections.get(scope(null, 'alice'), 'acme'))!;
    // The token has expired, at the provider and in the store.
    auth.expireAccessTokens();
    await tg.gateway.store.connections.swapCredentials(scope(null, 'alice'), 'acme', record.credentials, {
      credentials: record.credentials,
      expiresAt: new Date(Date.now() - 1_000).toISOString(),
    });
    const before = refreshes();
    const results = await Promise.all(Array.from({ length: 20 }, () => alice.callTool('acme_items')));
    expect(results.filter((r) => !r.isError)).toHaveLength(20);
    expect(refreshes() - before).toBe(1);

    // A token the provider stops honouring before its expiry: one 401, one refresh, one retry.
    auth.expireAccessTokens();
    const again = await alice.callTool('acme_me');
    expect(again.isError).toBeFalsy();
    expect(refreshes() - before).toBe(2);
    expect((await alice.callTool('acme_me')).isError).toBeFalsy();
  });

  // Issue 18: with a fixed 60-second margin, a provider whose tokens live 5 seconds had every call
  // refresh (and rotate the refresh token); the margin is half the token's lifetime when shorter.
  it('refreshes 5-second tokens once for 10 calls 0.1 s apart, not on every call', async () => {
    const record = (await tg.gateway.store.connections.get(scope(null, 'alice'), 'acme'))!;
    auth.setAccessTokenTtl(5);
    try {
      await tg.gateway.store.connections.swapCredentials(scope(null, 'alice'), 'acme', record.credentials, {
        credentials: record.credentials,
        expiresAt: new Date(Date.now() - 1_000).toISOString(),
      });
      const before = refreshes();
      for (let call = 0; call < 10; call++) {
        if (call > 0) await new Promise((resolve) => setTimeout(resolve, 100));
        expect((await alice.callTool('acme_items')).isError).toBeFalsy();
      }
      expect(refreshes() - before).toBe(1);
    } finally {
      auth.setAccessTokenTtl(300);
    }
  });

  it('reports a refresh that fails for now as temporary, keeps the connection, and succeeds later', async () => {
    const record = (await tg.gateway.store.connections.get(scope(null, 'alice'), 'acme'))!;
    await tg.gateway.store.connections.swapCredentials(scope(null, 'alice'), 'acme', record.credentials, {
      credentials: record.credentials,
      expiresAt: new Date(Date.now() - 1_000).toISOString(),
    });
    const before = refreshes();
    // Three attempts (one try, two retries with backoff), all answered 503.
    auth.failNextTokenRequests(3, 503);
    const failed = await alice.callTool('acme_me');
    expect(failed.isError).toBe(true);
    expect(failed.content[0]!.text).toContain('This is temporary: try the call again in a minute.');
    expect(refreshes() - before).toBe(3);
    expect((await tg.gateway.store.connections.get(scope(null, 'alice'), 'acme'))!.state).toBe('connected');
    const later = await alice.callTool('acme_me');
    expect(later.isError).toBeFalsy();
  });

  it('turns a revoked grant into re-approval needed with a reconnect link, and reconnecting restores it', async () => {
    auth.revokeGrantsOf('alice');
    const refused = await alice.callTool('acme_me');
    expect(refused.isError).toBe(true);
    const text = refused.content[0]!.text!;
    expect(text).toContain('must be re-approved');
    expect((await alice.callTool('list_providers')).content[0]!.text).toContain('re-approval needed');
    expect((await alice.callTool('inspect_provider', { provider: 'acme' })).content[0]!.text).toContain(
      'State here: re-approval needed',
    );
    const event = JSON.parse((await events.next()).body) as Record<string, unknown>;
    expect(event).toMatchObject({ type: 'connection.reapproval_needed', provider: 'acme', user_id: 'alice' });
    expect(JSON.stringify(event)).not.toMatch(/token|secret/i);
    expect(tg.logs.some((l) => l.includes('TG_CONNECTION_REAPPROVAL_NEEDED'))).toBe(true);

    const done = await approve(consentLinkIn(text), 'alice');
    expect(done).toContain('Acme Cloud is connected');
    expect((await alice.callTool('acme_me')).isError).toBeFalsy();
    expect((await tg.gateway.store.connections.get(scope(null, 'alice'), 'acme'))!.state).toBe('connected');
  });

  it('revokes the token at the provider on disconnect', async () => {
    const before = auth.revocationRequests().length;
    const result = await alice.callTool('disconnect_provider', { provider: 'acme' });
    expect(result.content[0]!.text).toContain('Disconnected Acme Cloud');
    expect(auth.revocationRequests().length).toBe(before + 1);
    expect(await tg.gateway.store.connections.get(scope(null, 'alice'), 'acme')).toBeUndefined();
  });
});

describe("organizations' own OAuth apps", () => {
  it('brands the consent pages and mints separate connections for the same user_id in two orgs', async () => {
    await tg.gateway.oauthApps.set(
      'acme',
      { clientId, orgId: 'org-a' },
      { clientId: 'toolgate-org-a', clientSecret: 'org-a-secret' },
      {
        displayName: 'Org A Industries',
        accentColor: '#b91c1c',
      },
    );
    await tg.gateway.oauthApps.set(
      'acme',
      { clientId, orgId: 'org-b' },
      { clientId: 'toolgate-org-b', clientSecret: 'org-b-secret' },
      {
        displayName: 'Org B Labs',
      },
    );
    const inA = await agent('?org_id=org-a&user_id=sam');
    const inB = await agent('?org_id=org-b&user_id=sam');
    const pageA = await approve(await startLink(inA), 'sam', 'oauth-org-a');
    expect(pageA).toContain('Org A Industries');
    expect(auth.authorizationRequests().at(-1)!.params.client_id).toBe('toolgate-org-a');
    const pageB = await approve(await startLink(inB), 'sam-b', 'oauth-org-b');
    expect(pageB).toContain('Org B Labs');
    expect(auth.authorizationRequests().at(-1)!.params.client_id).toBe('toolgate-org-b');

    const a = (await tg.gateway.store.connections.get(scope('org-a', 'sam'), 'acme'))!;
    const b = (await tg.gateway.store.connections.get(scope('org-b', 'sam'), 'acme'))!;
    expect(a.oauthApp).not.toBe(b.oauthApp);
    expect([a.account, b.account]).toEqual(['sam@example.test', 'sam-b@example.test']);
    expect((await inA.callTool('acme_me')).content[0]!.text).toContain('sam@example.test');
    expect((await inB.callTool('acme_me')).content[0]!.text).toContain('sam-b@example.test');

    // Changing org A's app later does not break the connection its old app minted.
    await tg.gateway.oauthApps.set(
      'acme',
      { clientId, orgId: 'org-a' },
      { clientId: 'toolgate-org-b', clientSecret: 'org-b-secret' },
      null,
    );
    auth.expireAccessTokens();
    const before = auth.tokenRequests().length;
    expect((await inA.callTool('acme_me')).isError).toBeFalsy();
    expect(
      auth
        .tokenRequests()
        .slice(before)
        .map((r) => r.client_id),
    ).toEqual(['toolgate-org-a']);
  });

  it('shows the branding on the start page before the user leaves for the provider', async () => {
    const inB = await agent('?org_id=org-b&user_id=kim');
    const { page } = browser;
    await page.goto(await startLink(inB));
    await expect(
      page.getByRole('heading', { name: 'Connect Acme Cloud for Org B Labs' }).isVisible(),
    ).resolves.toBe(true);
    await expect(page.getByText('write', { exact: true }).isVisible()).resolves.toBe(true);
    await screenshot(page, 'oauth-org-b-start-page');
  });
});

describe('every way a consent can fail ends on a clear page and stores nothing', () => {
  let bob: TestClient;
  beforeAll(async () => {
    bob = await agent('?user_id=bob');
  });
  const nothingStored = async () =>
    expect(await tg.gateway.store.connections.get(scope(null, 'bob'), 'acme')).toBeUndefined();

  it('consent denied', async () => {
    const { page } = browser;
    await browser.context.clearCookies();
    const link = await startLink(bob);
    await denyConsent(page, link, { login: 'bob' });
    await expect(page.locator('main').innerText()).resolves.toContain(
      'You declined to give access to Acme Cloud. Nothing was stored.',
    );
    await screenshot(page, 'oauth-denied');
    await nothingStored();
  });

  it('link expired or already used', async () => {
    const link = await startLink(bob);
    await approve(link, 'bob');
    await tg.gateway.connections.disconnect(scope(null, 'bob'), 'acme');
    const { page } = browser;
    const response = await page.goto(link);
    expect(response?.status()).toBe(410);
    await expect(page.locator('main').innerText()).resolves.toContain('expired or was already used');
    await nothingStored();
  });

  it('state mismatch or replay of the callback', async () => {
    const { page } = browser;
    await browser.context.clearCookies();
    const link = await startLink(bob);
    const callback = await approveConsent(page, link, { login: 'bob' });
    await tg.gateway.connections.disconnect(scope(null, 'bob'), 'acme');
    const replay = await page.goto(callback);
    expect(replay?.status()).toBe(400);
    await expect(page.locator('main').innerText()).resolves.toContain('does not match a sign-in in progress');
    const forged = await page.goto(`${tg.url}/oauth/callback?code=abc&state=forged`);
    expect(forged?.status()).toBe(400);
    await screenshot(page, 'oauth-state-mismatch');
    await nothingStored();
  });

  it('token endpoint error', async () => {
    auth.failNextTokenRequests(1, {
      status: 400,
      body: { error: 'invalid_client', error_description: 'client authentication failed' },
    });
    const text = await approve(await startLink(bob), 'bob');
    expect(text).toContain(
      'Exchanging the authorization code failed (HTTP 400 invalid_client: client authentication failed). Nothing was stored.',
    );
    await nothingStored();
  });

  it('fewer scopes granted than required, naming the missing ones', async () => {
    auth.setGrantableScopes(['read']);
    try {
      const text = await approve(await startLink(bob), 'bob', 'oauth-scopes');
      expect(text).toContain('missing: write');
      expect(text).toContain('Nothing was stored.');
    } finally {
      auth.setGrantableScopes(undefined);
    }
    await nothingStored();
  });
});
