/**
 * Which client Toolgate is of an upstream MCP server's authorization server (issue 17), through the
 * real gateway and MCP client, with loopback stand-ins speaking the real metadata shapes: the
 * operator's pre-registered app when one is set, else Toolgate's Client ID Metadata Document (an
 * https base URL is needed: this gateway's TOOLGATE_BASE_URL is https, while the test talks to its
 * loopback listener), else a clear message for the operator. One stand-in serves every provider's
 * metadata under a path of its own (`/<provider>/...`); registration itself is in
 * test/e2e/mcp-oauth.test.ts against a real authorization server.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type TestClient } from '../../helpers/clients.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { jsonAnswer, startReceiver, type Answer, type Receiver } from '../../helpers/receiver.js';

const BASE = 'https://toolgate.example';
/** Per provider: does its authorization server take metadata documents, support S256? */
const SERVERS: Record<string, { cimd: boolean; s256: boolean }> = {
  cimdnotes: { cimd: true, s256: true },
  appnotes: { cimd: true, s256: true },
  noreg: { cimd: false, s256: true },
  plainpkce: { cimd: true, s256: false },
  orgnotes: { cimd: true, s256: true },
};

let stand: Receiver;
let tg: TestGateway;
let agent: TestClient;

function answer(url: string): Answer {
  const [, id = '', ...rest] = url.split('/');
  const server = SERVERS[id];
  const path = `/${rest.join('/')}`;
  const issuer = `${stand.url}/${id}/as`;
  if (!server) return { status: 404 };
  if (path === '/mcp')
    return {
      status: 401,
      headers: { 'www-authenticate': `Bearer resource_metadata="${stand.url}/${id}/prm"` },
    };
  if (path === '/prm')
    return jsonAnswer(200, { resource: `${stand.url}/${id}/mcp`, authorization_servers: [issuer] });
  if (path === '/as/.well-known/openid-configuration')
    return jsonAnswer(200, {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      code_challenge_methods_supported: server.s256 ? ['S256'] : ['plain'],
      client_id_metadata_document_supported: server.cimd,
    });
  return { status: 404 };
}

function manifest(id: string): string {
  return `schema_version: 1
id: ${id}
display_name: Notes ${id}
description: Notes from a remote MCP server.
auth: { kind: oauth2, discovery: mcp${id === 'orgnotes' ? ', allow_org_apps: true' : ''} }
mcp: { url: https://mcp.notes.example/mcp }
categories:
  - { id: notes, title: Notes, match: [{ name: "*" }] }
`;
}

beforeAll(async () => {
  stand = await startReceiver((req) => answer(req.url));
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-mcp-reg-'));
  const env: Record<string, string> = {
    TOOLGATE_BASE_URL: BASE,
    TOOLGATE_ALLOW_PRIVATE_NETWORK: '1',
    TOOLGATE_PROVIDER_APPNOTES_CLIENT_ID: 'operator-app',
    TOOLGATE_PROVIDER_APPNOTES_CLIENT_SECRET: 'operator-secret',
  };
  const files: string[] = [];
  for (const id of Object.keys(SERVERS)) {
    files.push(join(dir, `${id}.yaml`));
    writeFileSync(files.at(-1)!, manifest(id));
    env[`TOOLGATE_PROVIDER_${id.toUpperCase()}_BASE_URL`] = `${stand.url}/${id}/mcp`;
  }
  tg = await startGateway(env, { manifestFiles: files });
  agent = await connect('2025 (v1 client)', tg.mcpUrl('?user_id=u1'), {
    'X-API-Key': (await tg.key('client')).key,
  });
});
afterAll(async () => {
  await agent?.close();
  await tg?.close();
  await stand?.close();
});

/** Asks connect_provider for a link, opens it on the loopback listener, and returns where it sends the browser. */
async function authorizationUrl(provider: string, by: TestClient = agent): Promise<URL> {
  const offered = await by.callTool('connect_provider', { provider });
  expect(offered.isError, offered.content[0]?.text).toBeFalsy();
  const token = /\/oauth\/start\/([A-Za-z0-9_-]+)/.exec(offered.content[0]!.text!)?.[1];
  const response = await fetch(`${tg.url}/oauth/start/${token}`, { method: 'POST', redirect: 'manual' });
  expect(response.status).toBe(303);
  return new URL(response.headers.get('location')!);
}

describe("Toolgate's client of an upstream MCP server's authorization server", () => {
  it('is its Client ID Metadata Document when the server takes them and the base URL is https', async () => {
    const sent = await authorizationUrl('cimdnotes');
    expect(sent.origin + sent.pathname).toBe(`${stand.url}/cimdnotes/as/authorize`);
    expect(Object.fromEntries(sent.searchParams)).toMatchObject({
      client_id: `${BASE}/oauth/upstream-client.json`,
      redirect_uri: `${BASE}/oauth/callback`,
      resource: `${stand.url}/cimdnotes/mcp`,
      code_challenge_method: 'S256',
    });
    const document = await fetch(`${tg.url}/oauth/upstream-client.json`);
    expect(document.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await document.json()).toEqual({
      client_id: `${BASE}/oauth/upstream-client.json`,
      client_name: 'Toolgate',
      client_uri: BASE,
      redirect_uris: [`${BASE}/oauth/callback`],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    });
  });

  it("is the operator's pre-registered app when one is set, even where documents are taken", async () => {
    const sent = await authorizationUrl('appnotes');
    expect(sent.searchParams.get('client_id')).toBe('operator-app');
    expect(sent.searchParams.get('resource')).toBe(`${stand.url}/appnotes/mcp`);
  });

  it('is nothing without registration, documents or an app: connect_provider tells what the operator must set', async () => {
    const offered = await agent.callTool('connect_provider', { provider: 'noreg' });
    expect(offered.isError).toBe(true);
    expect(offered.content[0]?.text).toBe(
      `Notes noreg is not set up on this gateway yet: its authorization server (${stand.url}/noreg/as) offers no dynamic client registration. ` +
        `The operator must register an OAuth app there with the redirect URI ${BASE}/oauth/callback and set it (TOOLGATE_PROVIDER_NOREG_CLIENT_ID and _CLIENT_SECRET, or \`toolgate oauth-app set noreg\`).`,
    );
  });

  it('is refused for an authorization server without PKCE S256, and the operator hears why', async () => {
    const offered = await agent.callTool('connect_provider', { provider: 'plainpkce' });
    expect(offered.isError).toBe(true);
    expect(offered.content[0]?.text).toContain(
      `Notes plainpkce cannot be connected right now: Toolgate could not find how its MCP server is authorized (the authorization server ${stand.url}/plainpkce/as does not support PKCE with S256`,
    );
    expect(
      tg.logs.some((line) => line.includes('TG_MCP_AUTH_DISCOVERY_FAILED') && line.includes('plainpkce')),
    ).toBe(true);
  });

  it("is an organization's own app for its users, and the operator's choice for the other organizations", async () => {
    const { key, id } = await tg.key('platform', 'platform-co');
    const clientId = (await tg.gateway.keys.list()).find((k) => k.id === id)!.clientId;
    await tg.gateway.oauthApps.set(
      'orgnotes',
      { clientId, orgId: 'org-1' },
      { clientId: 'org-1-app', clientSecret: 'org-1-secret' },
      { displayName: 'Org One' },
    );
    const own = await connect('2025 (v1 client)', tg.mcpUrl('?org_id=org-1&user_id=u1'), {
      'X-API-Key': key,
    });
    const other = await connect('2025 (v1 client)', tg.mcpUrl('?org_id=org-2&user_id=u1'), {
      'X-API-Key': key,
    });
    try {
      expect((await authorizationUrl('orgnotes', own)).searchParams.get('client_id')).toBe('org-1-app');
      expect((await authorizationUrl('orgnotes', other)).searchParams.get('client_id')).toBe(
        `${BASE}/oauth/upstream-client.json`,
      );
    } finally {
      await own.close();
      await other.close();
    }
  });
});
