/**
 * An upstream MCP server authorised by MCP authorization (issue 17), end to end with real parts: an
 * MCP server of the official SDK that accepts only tokens of a real authorization server
 * (oidc-provider, Dynamic Client Registration on), consent in headless Chromium, and the real MCP
 * client talking to Toolgate. Nothing about the upstream's authorization is configured: Toolgate
 * discovers it from the upstream's 401 and registers itself.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser } from '../helpers/browser.js';
import { connect, type TestClient } from '../helpers/clients.js';
import { freePort, startGateway, type TestGateway } from '../helpers/gateway.js';
import { startProtectedMcpServer, type ProtectedMcpServer } from '../helpers/mcp-oauth-upstream.js';
import { approveConsent, consentLinkIn } from '../helpers/oauth-server.js';

const MANIFEST = `# yaml-language-server: $schema=./manifest.schema.json
schema_version: 1
id: notes
display_name: Notes
description: Notes of a Notes account, from its remote MCP server.
auth:
  kind: oauth2
  discovery: mcp
mcp:
  url: https://mcp.notes.example/mcp
categories:
  - { id: notes, title: Notes, match: [{ name: "*" }] }
`;

let upstream: ProtectedMcpServer;
let tg: TestGateway;
let base: string;
let browser: Awaited<ReturnType<typeof openBrowser>>;
let key: string;
const clients: TestClient[] = [];

beforeAll(async () => {
  upstream = await startProtectedMcpServer({ accessTokenTtlSeconds: 300 });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const manifest = join(mkdtempSync(join(tmpdir(), 'toolgate-notes-')), 'notes.yaml');
  writeFileSync(manifest, MANIFEST);
  tg = await startGateway(
    {
      TOOLGATE_PORT: String(port),
      TOOLGATE_BASE_URL: base,
      TOOLGATE_ALLOW_PRIVATE_NETWORK: '1',
      TOOLGATE_PROVIDER_NOTES_BASE_URL: upstream.url,
      // Refreshes in these tests happen at call time, where the test can count them.
      TOOLGATE_REFRESH_MARGIN_MS: '0',
      TOOLGATE_REFRESH_SWEEP_MS: '3600000',
    },
    { manifestFiles: [manifest] },
  );
  key = (await tg.key('client')).key;
  browser = await openBrowser();
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  await browser?.close();
  await tg?.close();
  await upstream?.close();
});

async function agent(user: string): Promise<TestClient> {
  const client = await connect('2025 (v1 client)', tg.mcpUrl(`?user_id=${user}`), { 'X-API-Key': key });
  clients.push(client);
  return client;
}

const refreshes = () => upstream.auth.tokenRequests().filter((r) => r.grant_type === 'refresh_token');

/** Opens a consent link, approves at the authorization server as `login`, returns the final page's text. */
async function approve(link: string, login: string): Promise<string> {
  await browser.context.clearCookies();
  await approveConsent(browser.page, link, { login });
  return browser.page.locator('main').innerText();
}

describe('an upstream MCP server authorised by MCP authorization', () => {
  let alice: TestClient;

  it('discovers the authorization server, registers once, and connects through consent in the browser', async () => {
    alice = await agent('alice');
    const offered = await alice.callTool('connect_provider', { provider: 'notes' });
    expect(offered.isError, offered.content[0]?.text).toBeFalsy();
    const done = await approve(consentLinkIn(offered.content[0]!.text!), 'alice');
    expect(done).toContain('Notes is connected');

    // Dynamic Client Registration, as a confidential client returning to our callback.
    const registrations = upstream.auth.registrationRequests();
    expect(registrations).toHaveLength(1);
    expect(registrations[0]).toMatchObject({
      client_name: 'Toolgate',
      redirect_uris: [`${base}/oauth/callback`],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'client_secret_basic',
    });
    // PKCE S256 and RFC 8707's resource in the authorization and the token request.
    const [authorization] = upstream.auth.authorizationRequests();
    expect(authorization?.params).toMatchObject({
      resource: upstream.url,
      code_challenge_method: 'S256',
      scope: 'read',
      redirect_uri: `${base}/oauth/callback`,
    });
    expect(upstream.auth.tokenRequests().map((r) => [r.grant_type, r.status])).toEqual([
      ['authorization_code', 200],
    ]);

    const listed = await alice.callTool('list_providers');
    expect(listed.content[0]?.text).toMatch(/notes[^\n]*connected/i);
  });

  it('reuses the registered client for the next user', async () => {
    const bob = await agent('bob');
    const offered = await bob.callTool('connect_provider', { provider: 'notes' });
    expect(await approve(consentLinkIn(offered.content[0]!.text!), 'bob')).toContain('Notes is connected');
    expect(upstream.auth.registrationRequests()).toHaveLength(1);
  });

  it("lists the upstream's tools and calls them with each user's own token", async () => {
    expect(await alice.listToolNames()).toEqual(expect.arrayContaining(['notes_whoami', 'notes_items']));
    const me = await alice.callTool('notes_whoami');
    expect(me.isError, me.content[0]?.text).toBeFalsy();
    expect(me.content[0]?.text).toBe('you are alice');
    const bob = await agent('bob');
    expect((await bob.callTool('notes_whoami')).content[0]?.text).toBe('you are bob');
    expect(upstream.calls().map((c) => c.account)).toEqual(['alice', 'bob']);
  });

  it('refreshes an expired token exactly once for 50 concurrent calls, with the resource indicator', async () => {
    const before = refreshes().length;
    upstream.auth.expireAccessTokens();
    const results = await Promise.all(Array.from({ length: 50 }, () => alice.callTool('notes_items')));
    expect(results.filter((r) => r.isError).map((r) => r.content[0]?.text)).toEqual([]);
    expect(refreshes().length - before).toBe(1);
    expect(refreshes().at(-1)?.status).toBe(200);
    // The refreshed token works upstream only because the refresh named the resource (RFC 8707):
    // without it the authorization server binds tokens to its default resource, which the MCP server refuses.
  });

  it('answers re-approval needed with a link once the grant is revoked, and reconnecting through it works', async () => {
    upstream.auth.revokeGrantsOf('alice');
    const refused = await alice.callTool('notes_whoami');
    expect(refused.isError).toBe(true);
    expect(refused.content[0]?.text).toContain('The Notes connection must be re-approved');
    expect(await approve(consentLinkIn(refused.content[0]!.text!), 'alice')).toContain('Notes is connected');
    expect((await alice.callTool('notes_whoami')).content[0]?.text).toBe('you are alice');
    // The same registered client throughout.
    expect(upstream.auth.registrationRequests()).toHaveLength(1);
  });

  it('registers again once the authorization server forgets the registered client', async () => {
    const forgotten = upstream.auth.tokenRequests().at(-1)!.client_id!;
    await upstream.auth.forgetClient(forgotten);
    upstream.auth.expireAccessTokens();
    const refused = await alice.callTool('notes_whoami');
    expect(refused.isError).toBe(true);
    expect(refreshes().at(-1)?.error).toBe('invalid_client');
    expect(await approve(consentLinkIn(refused.content[0]!.text!), 'alice')).toContain('Notes is connected');
    expect(upstream.auth.registrationRequests()).toHaveLength(2);
    expect(upstream.auth.tokenRequests().at(-1)?.client_id).not.toBe(forgotten);
    expect((await alice.callTool('notes_whoami')).content[0]?.text).toBe('you are alice');
  });

  it('disconnect revokes the grant at the discovered revocation endpoint, as the registered client', async () => {
    const carol = await agent('carol');
    const offered = await carol.callTool('connect_provider', { provider: 'notes' });
    expect(await approve(consentLinkIn(offered.content[0]!.text!), 'carol')).toContain('Notes is connected');
    const registered = upstream.auth.tokenRequests().at(-1)?.client_id;
    expect(registered).toMatch(/./);
    const gone = await carol.callTool('disconnect_provider', { provider: 'notes' });
    expect(gone.isError, gone.content[0]?.text).toBeFalsy();
    expect(upstream.auth.revocationRequests()).toEqual([
      expect.objectContaining({ client_id: registered, token_type_hint: 'refresh_token', status: 200 }),
    ]);
  });
});
