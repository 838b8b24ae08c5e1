import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser } from '../../helpers/browser.js';
import { connect, GENERATIONS } from '../../helpers/clients.js';
import {
  callbackServer,
  HandClient,
  MemoryOAuthProvider,
  signInWithKey,
  type CallbackServer,
  type HandSignIn,
} from '../../helpers/front-door.js';
import { freePort, postMcp } from '../../helpers/gateway.js';
import { petshopApi, startPetshop, type PetshopGateway } from '../../helpers/petshop.js';

const PET_KEY = 'ps_frontdoor1';
let shop: PetshopGateway;
let callback: CallbackServer;
let browser: Awaited<ReturnType<typeof openBrowser>>;

beforeAll(async () => {
  // Links and metadata name the base URL: the gateway gets its port up front.
  const port = await freePort();
  shop = await startPetshop(petshopApi({ keys: [PET_KEY], body: { email: 'front@door.test', items: [] } }), {
    env: () => ({ TOOLGATE_PORT: String(port), TOOLGATE_BASE_URL: `http://127.0.0.1:${port}` }),
  });
  callback = await callbackServer();
  browser = await openBrowser();
});
afterAll(async () => {
  await browser?.close();
  await callback?.close();
  await shop?.close();
});

const base = (): string => shop.tg.url;

const client = (): HandClient => new HandClient(base(), callback);
const token = (form: Record<string, string>) => client().token(form);
/** Everything secret the tests sent or got: none may be found in the logs or the data dir. */
const issued: string[] = [];
async function signIn(form: { key: string; userId?: string; orgId?: string }): Promise<HandSignIn> {
  const result = await client().signIn(browser.page, form);
  issued.push(form.key, result.access, result.refresh, result.redirect.get('code')!);
  return result;
}

describe('the front door is discoverable', () => {
  it('answers a 401 with a challenge naming the protected-resource metadata; invalid_token where a credential was sent', async () => {
    const missing = await fetch(`${base()}/mcp/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base()}/.well-known/oauth-protected-resource"`,
    );
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('TG_ERR_KEY_MISSING');
    const wrong = await postMcp(shop.tg.mcpUrl(), 'toolgate_wrong', {}, {});
    expect(wrong.headers.get('www-authenticate')).toBe(
      `Bearer resource_metadata="${base()}/.well-known/oauth-protected-resource", error="invalid_token"`,
    );
  });

  it('serves RFC 9728 and RFC 8414 metadata: PKCE S256 only, iss in the redirect, CIMD and registration', async () => {
    const resource = (await (await fetch(`${base()}/.well-known/oauth-protected-resource`)).json()) as Record<
      string,
      unknown
    >;
    expect(resource).toMatchObject({ resource: `${base()}/mcp`, authorization_servers: [base()] });
    const server = (await (await fetch(`${base()}/.well-known/oauth-authorization-server`)).json()) as Record<
      string,
      unknown
    >;
    expect(server).toMatchObject({
      issuer: base(),
      authorization_endpoint: `${base()}/authorize`,
      token_endpoint: `${base()}/token`,
      registration_endpoint: `${base()}/register`,
      revocation_endpoint: `${base()}/revoke`,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
    });
  });
});

describe('a token from a key sign-in', () => {
  it('acts exactly as its key with the scope chosen at sign-in, on every protocol generation', async () => {
    const { key } = await shop.tg.key('client');
    // The user's connection, made with the key itself.
    const direct = await connect('2026-07-28', shop.tg.mcpUrl('?user_id=alice'), { 'x-api-key': key });
    const made = await direct.callTool('connect_provider', {
      provider: 'petshop',
      credentials: { api_key: PET_KEY },
    });
    expect(made.isError, JSON.stringify(made.content)).toBeFalsy();
    await direct.close();

    const { access, refresh, consent, redirect } = await signIn({ key, userId: 'alice' });
    expect(consent).toContain('Raw Agent');
    expect(consent).toContain('user alice');
    expect(redirect.get('state')).toBe('st-1');
    expect(redirect.get('iss')).toBe(base());
    expect(access).toMatch(/^tgat_/);
    expect(refresh).toMatch(/^tgrt_/);

    for (const generation of GENERATIONS) {
      const client = await connect(generation, shop.tg.mcpUrl(), { authorization: `Bearer ${access}` });
      expect(await client.listToolNames()).toContain('petshop_list_pets');
      await client.close();
    }
    // The URL may repeat the token's scope, never move it.
    const same = await fetch(shop.tg.mcpUrl('?user_id=alice'), {
      method: 'POST',
      headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(same.status).not.toBe(403);
    const other = await fetch(shop.tg.mcpUrl('?user_id=bob'), {
      method: 'POST',
      headers: { authorization: `Bearer ${access}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(other.status).toBe(403);
    expect(((await other.json()) as { error: { code: string } }).error.code).toBe(
      'TG_ERR_TOKEN_SCOPE_MISMATCH',
    );
  });

  it('refreshes with rotation; a reused refresh token revokes the grant and its access token', async () => {
    const { key } = await shop.tg.key('client');
    const { clientId, access, refresh } = await signIn({ key, userId: 'carol' });
    const rotated = await token({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId });
    expect(rotated.status).toBe(200);
    const next = String(rotated.body.refresh_token);
    expect(next).not.toBe(refresh);
    const fresh = String(rotated.body.access_token);
    const ok = await connect('2026-07-28', shop.tg.mcpUrl(), { authorization: `Bearer ${fresh}` });
    await ok.close();

    const reused = await token({ grant_type: 'refresh_token', refresh_token: refresh, client_id: clientId });
    expect(reused).toMatchObject({ status: 400, body: { error: 'invalid_grant' } });
    // The whole grant is gone: the rotated refresh token and every access token with it.
    expect(
      (await token({ grant_type: 'refresh_token', refresh_token: next, client_id: clientId })).body.error,
    ).toBe('invalid_grant');
    for (const t of [access, fresh]) {
      const refused = await postMcp(
        shop.tg.mcpUrl(),
        '',
        {},
        { authorization: `Bearer ${t}`, 'x-api-key': '' },
      );
      expect(refused.status).toBe(401);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('TG_ERR_TOKEN_INVALID');
    }
  });
});

describe('the v2 SDK client signs in by itself', () => {
  it('discovers, registers, is sent to sign in, and lists tools with the token it gets', async () => {
    const { key } = await shop.tg.key('solo');
    const provider = new MemoryOAuthProvider(callback.url);
    const client = new Client(
      { name: 'sdk-agent', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    const transport = new StreamableHTTPClientTransport(shop.tg.mcpUrl(), { authProvider: provider });
    const failure = await client.connect(transport).catch((e: unknown) => e);
    expect(failure, String(failure)).toBeInstanceOf(UnauthorizedError);
    expect(provider.authorizationUrl).toBeDefined();
    await signInWithKey(browser.page, provider.authorizationUrl!, { key });
    const redirect = await callback.next();
    await transport.finishAuth(redirect.get('code')!, redirect.get('iss') ?? undefined);
    const again = new Client(
      { name: 'sdk-agent', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await again.connect(new StreamableHTTPClientTransport(shop.tg.mcpUrl(), { authProvider: provider }));
    expect((await again.listTools()).tools.map((t) => t.name)).toContain('list_providers');
    await again.close();
  });
});

describe('secrets of the front door', () => {
  it('leaves no API key, code, access or refresh token in the logs or the data dir', () => {
    expect(issued.length).toBeGreaterThanOrEqual(8);
    const files = readdirSync(shop.tg.dataDir, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => readFileSync(join(entry.parentPath, entry.name)).toString('latin1'));
    const logs = shop.tg.logs.join('\n');
    for (const secret of issued) {
      expect(logs).not.toContain(secret);
      for (const file of files) expect(file.includes(secret), 'a secret in the data dir').toBe(false);
    }
  });
});
