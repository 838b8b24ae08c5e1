import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser, screenshot } from '../helpers/browser.js';
import {
  connectWithKey,
  countToolsChanged,
  type TestClient,
  type ToolsChangedCount,
} from '../helpers/clients.js';
import type { TestGateway } from '../helpers/gateway.js';
import { petshopApi, startPetshop, type PetshopGateway } from '../helpers/petshop.js';

const KEY = 'ps_linkflow42';

let petshop: PetshopGateway;
let tg: TestGateway;
let client: TestClient;
let toolsChanged: ToolsChangedCount;
let browser: Awaited<ReturnType<typeof openBrowser>>;

beforeAll(async () => {
  petshop = await startPetshop(
    petshopApi({ keys: [KEY], body: { email: 'linked@petshop.example', items: [] } }),
  );
  tg = petshop.tg;
  client = await connectWithKey(tg, '2025 (v1 client)', '?org_id=acme&user_id=jane', 'platform');
  toolsChanged = await countToolsChanged(client, tg);
  browser = await openBrowser();
});
afterAll(async () => {
  await browser?.close();
  await client?.close();
  await petshop?.close();
});

function linkFrom(text: string): string {
  const url = /http:\/\/\S+\/connect\/[A-Za-z0-9_-]+/.exec(text)?.[0];
  if (!url) throw new Error(`no connect link in: ${text}`);
  // The base URL says localhost; the test server listens on 127.0.0.1 with an ephemeral port.
  return url.replace(/^http:\/\/[^/]+/, tg.url);
}

describe('secure credential entry through a one-time link', () => {
  it('lets the user paste the key in a browser page; the key never passes through the agent', async () => {
    const result = await client.callTool('connect_provider', { provider: 'petshop' });
    const text = result.content[0]!.text!;
    expect(text).toContain('works once and expires in 10 minutes');
    const link = linkFrom(text);
    const { page } = browser;

    await page.goto(link);
    await expect(page.getByRole('heading', { name: 'Connect Pet Shop' }).isVisible()).resolves.toBe(true);
    await expect(page.getByText('stored encrypted for user jane of acme').isVisible()).resolves.toBe(true);
    await screenshot(page, 'connect-page');

    // A wrong key: the provider refuses it, the page says so, and a fresh link replaces the old.
    await page.getByLabel(/API key/).fill('ps_wrongkey');
    await page.getByRole('button', { name: 'Connect Pet Shop' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('HTTP 401: invalid api key');
    await screenshot(page, 'connect-page-error');
    expect(await client.listToolNames()).not.toContain('petshop_list_pets');

    await page.getByLabel(/API key/).fill(KEY);
    await page.selectOption('select[name="fields.region"]', 'eu');
    await page.getByRole('button', { name: 'Connect Pet Shop' }).click();
    await expect(page.getByRole('heading', { name: 'Pet Shop is connected' }).isVisible()).resolves.toBe(
      true,
    );
    await expect(page.getByText('linked@petshop.example').isVisible()).resolves.toBe(true);
    await screenshot(page, 'connect-page-done');

    // The agent's session is told its tools changed, and the new tools work.
    await toolsChanged.until((count) => count >= 1);
    expect(await client.listToolNames()).toContain('petshop_list_pets');
    const inspected = (await client.callTool('inspect_provider', { provider: 'petshop' })).content[0]!.text!;
    expect(inspected).toContain('connected as linked@petshop.example');
    expect(tg.logs.join('')).not.toContain(KEY);
  });

  it('works once: the used link, and the first link replaced after an error, answer 410', async () => {
    const result = await client.callTool('connect_provider', { provider: 'petshop' });
    const link = linkFrom(result.content[0]!.text!);
    const { page } = browser;
    await page.goto(link);
    await page.getByLabel(/API key/).fill(KEY);
    await page.getByRole('button', { name: 'Connect Pet Shop' }).click();
    await expect(page.getByRole('heading', { name: 'Pet Shop is connected' }).isVisible()).resolves.toBe(
      true,
    );
    const again = await page.goto(link);
    expect(again?.status()).toBe(410);
    await expect(
      page.getByRole('heading', { name: /expired or was already used/ }).isVisible(),
    ).resolves.toBe(true);
    await screenshot(page, 'connect-link-used');
  });

  it('refuses a made-up token', async () => {
    const response = await fetch(`${tg.url}/connect/not-a-real-token`);
    expect(response.status).toBe(410);
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('cache-control')).toBe('no-store');
  });
});

/**
 * connect_provider for a 2026-07-28 client that declares URL elicitation (issue 18): the call is
 * answered `input_required` with the link as a URL elicitation; the v2 client's own driver hands it
 * to its elicitation handler (here: the user connects in the browser, then accepts), retries the
 * call, and gets the connected result. A client that declares nothing gets the link as text.
 */
describe('the connect link as a 2026-07-28 URL elicitation', () => {
  async function modernClient(
    user: string,
    onUrl?: (url: string) => Promise<'accept' | 'decline'>,
  ): Promise<{ client: Client; offered: string[] }> {
    const { key } = await tg.key('client');
    const offered: string[] = [];
    const client = new Client(
      { name: 'elicitor-2026', version: '1.0.0' },
      {
        versionNegotiation: { mode: { pin: '2026-07-28' } },
        ...(onUrl ? { capabilities: { elicitation: { url: {} } } } : {}),
      },
    );
    if (onUrl)
      client.setRequestHandler('elicitation/create', async (request) => {
        const { url, mode } = request.params as { url: string; mode: string };
        expect(mode).toBe('url');
        offered.push(url);
        return { action: await onUrl(url) };
      });
    await client.connect(
      new StreamableHTTPClientTransport(tg.mcpUrl(`?user_id=${user}`), {
        requestInit: { headers: { 'X-API-Key': key } },
      }),
    );
    return { client, offered };
  }

  const textOf = (result: unknown): string => (result as { content: { text: string }[] }).content[0]!.text;

  it('is completed in the browser during the call, whose retry answers connected', async () => {
    const { page } = browser;
    const { client, offered } = await modernClient('modern-user', async (url) => {
      await page.goto(url.replace(/^http:\/\/[^/]+/, tg.url));
      await page.getByLabel(/API key/).fill(KEY);
      await page.getByRole('button', { name: 'Connect Pet Shop' }).click();
      await page.getByRole('heading', { name: 'Pet Shop is connected' }).waitFor();
      return 'accept';
    });
    try {
      const result = await client.callTool({ name: 'connect_provider', arguments: { provider: 'petshop' } });
      expect(offered).toHaveLength(1);
      expect(offered[0]).toMatch(/\/connect\/[A-Za-z0-9_-]+$/);
      expect(textOf(result)).toMatch(
        /^Connected Pet Shop as linked@petshop\.example\. Its \d+ tool\(s\) are available now/,
      );
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('petshop_list_pets');
    } finally {
      await client.close();
    }
  });

  it('says so when the user declines, and offers the link again as text when it was not used', async () => {
    const declining = await modernClient('declining-user', () => Promise.resolve('decline'));
    try {
      const result = await declining.client.callTool({
        name: 'connect_provider',
        arguments: { provider: 'petshop' },
      });
      expect(textOf(result)).toContain('The user did not open the link to connect Pet Shop.');
    } finally {
      await declining.client.close();
    }
    const hasty = await modernClient('hasty-user', () => Promise.resolve('accept'));
    try {
      const result = await hasty.client.callTool({
        name: 'connect_provider',
        arguments: { provider: 'petshop' },
      });
      expect(hasty.offered).toHaveLength(1);
      expect(linkFrom(textOf(result))).not.toBe(hasty.offered[0]);
    } finally {
      await hasty.client.close();
    }
  });

  it('gives a client that does not declare URL elicitation the link in the result, as before', async () => {
    const { client } = await modernClient('plain-user');
    try {
      const result = await client.callTool({ name: 'connect_provider', arguments: { provider: 'petshop' } });
      expect(textOf(result)).toContain('ask the user to open this link');
      expect(linkFrom(textOf(result))).toMatch(/\/connect\//);
    } finally {
      await client.close();
    }
  });
});
