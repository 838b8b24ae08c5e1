import { Client, StreamableHTTPClientTransport, UnauthorizedError } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, screenshot } from '../helpers/browser.js';
import { documentAnswer, startCimdGateway, type CimdGateway } from '../helpers/cimd.js';
import {
  callbackServer,
  MemoryOAuthProvider,
  pkce,
  signInWithKey,
  type CallbackServer,
} from '../helpers/front-door.js';

const DOCUMENT = '/agents/cimd-agent.json';
/** The same client's document, served with `Cache-Control: no-store`. */
const UNCACHED = '/agents/uncached-agent.json';
let cimd: CimdGateway;
let callback: CallbackServer;
let browser: Awaited<ReturnType<typeof openBrowser>>;

beforeAll(async () => {
  callback = await callbackServer();
  cimd = await startCimdGateway((req) =>
    req.url === DOCUMENT || req.url === UNCACHED
      ? documentAnswer(
          {
            client_id: `${cimd.documents.url}${req.url}`,
            client_name: 'CIMD Agent',
            client_uri: 'https://agent.example/about',
            logo_uri: `${cimd.documents.url}/logo.png`,
            redirect_uris: [callback.url],
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            token_endpoint_auth_method: 'none',
          },
          req.url === UNCACHED ? 'no-store' : undefined,
        )
      : { status: 404, body: 'not found' },
  );
  browser = await openBrowser();
});
afterAll(async () => {
  await browser?.close();
  await cimd?.close();
  await callback?.close();
});

const documentUrl = (): string => `${cimd.documents.url}${DOCUMENT}`;
const mcpUrl = (): URL => new URL(`${cimd.url}/mcp/`);
const newClient = () =>
  new Client(
    { name: 'cimd-agent', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );

/**
 * The v2 SDK client's own OAuth with its metadata document as client_id: sent to sign in, the person
 * signs in and approves in Chromium (`onConsent` looking at the consent page), the SDK exchanges the code.
 */
async function authorizeSdk(key: string, onConsent?: Parameters<typeof signInWithKey>[3]) {
  const provider = new MemoryOAuthProvider(callback.url, { clientMetadataUrl: documentUrl() });
  const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
  const failure = await newClient()
    .connect(transport)
    .catch((e: unknown) => e);
  expect(failure, String(failure)).toBeInstanceOf(UnauthorizedError);
  expect(provider.authorizationUrl?.searchParams.get('client_id')).toBe(documentUrl());
  const consent = await signInWithKey(browser.page, provider.authorizationUrl!, { key }, onConsent);
  const redirect = await callback.next();
  expect(redirect.get('iss')).toBe(cimd.url);
  await transport.finishAuth(redirect.get('code')!, redirect.get('iss') ?? undefined);
  return { provider, consent };
}

describe('the v2 SDK client signing in with a Client ID Metadata Document', () => {
  it('is named on the consent page from its document, and lists and calls tools with its token', async () => {
    const key = await cimd.key('solo');
    let logo: string | null = null;
    const { provider, consent } = await authorizeSdk(key, async (page) => {
      logo = await page.locator('.brand img').getAttribute('src');
      await screenshot(page, 'front-door-cimd-consent');
    });
    expect(consent).toContain('CIMD Agent');
    expect(consent).toContain('https://agent.example/about');
    // Where the document came from: the one part of the description the application cannot just claim.
    expect(consent).toContain(
      `described by ${new URL(documentUrl()).host} · returns you to ${new URL(callback.url).host}`,
    );
    expect(logo).toBe(`${cimd.documents.url}/logo.png`);
    expect(provider.tokens()?.access_token).toMatch(/^tgat_/);

    const client = newClient();
    await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }));
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('list_providers');
    const listed = await client.callTool({ name: 'list_providers', arguments: {} });
    expect(listed.isError, JSON.stringify(listed.content)).toBeFalsy();
    await client.close();
  });

  it('fetches the document once while its Cache-Control max-age lasts, however many authorizations', async () => {
    const fetchedBefore = cimd.fetches(DOCUMENT);
    expect(fetchedBefore).toBe(1);
    await authorizeSdk(await cimd.key('solo'));
    expect(cimd.fetches(DOCUMENT)).toBe(fetchedBefore);
  });

  it('fetches a document marked no-store anew for each authorization', async () => {
    const url = (): string => {
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: `${cimd.documents.url}${UNCACHED}`,
        redirect_uri: callback.url,
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        state: 'st-uncached',
      });
      return `${cimd.url}/authorize?${query.toString()}`;
    };
    for (const times of [1, 2]) {
      const response = await fetch(url(), { redirect: 'manual' });
      expect(response.headers.get('location')).toMatch(/^\/signin\//);
      expect(cimd.fetches(UNCACHED)).toBe(times);
    }
  });
});
