import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot } from '../helpers/browser.js';
import { connect, SYSTEM_TOOLS, type TestClient } from '../helpers/clients.js';
import { row, startDashboard, type DashboardHarness } from '../helpers/dashboard.js';

let d: DashboardHarness;
let agent: TestClient | undefined;

beforeAll(async () => {
  d = await startDashboard();
});
afterAll(async () => {
  await agent?.close().catch(() => undefined);
  await d?.close();
});

describe('dashboard: clients and API keys', () => {
  let key: string;
  let keyId: string;

  it('sends a visitor to sign in first, then to the page they asked for', async () => {
    const { page } = d;
    await page.goto(d.url('/keys'));
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    await page.getByRole('heading', { name: 'Toolgate dashboard' }).waitFor();
    await screenshot(page, 'dashboard-sign-in');
    await d.signIn();
    expect(new URL(page.url()).pathname).toBe('/dashboard/keys');
    // bootstrap's first key is listed, its value never is.
    await expect(row(page, 'default').first().isVisible()).resolves.toBe(true);
  });

  it('refuses an invalid client name beside the field', async () => {
    const { page } = d;
    await page.getByLabel('Name').fill('default');
    await page.getByRole('button', { name: 'Create client' }).click();
    await expect(page.getByRole('alert').first().textContent()).resolves.toContain(
      'A client named "default" exists already',
    );
    await expect(page.getByLabel('Name').getAttribute('aria-invalid')).resolves.toBe('true');
    await screenshot(page, 'dashboard-client-error');
  });

  it('creates a client and a platform key, shown once with a copy button and its mcpServers JSON', async () => {
    const { page } = d;
    await page.getByLabel('Name').fill('Acme Corp');
    await page.getByRole('button', { name: 'Create client' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Client “Acme Corp” created');
    await expect(row(page, 'Acme Corp').first().isVisible()).resolves.toBe(true);

    await page.getByLabel('Client', { exact: true }).selectOption('Acme Corp');
    await page.getByLabel('Type').selectOption('platform');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { name: 'Key created' }).waitFor();
    key = (await page.locator('#key-value').textContent())!;
    expect(key).toMatch(/^toolgate_[0-9A-Za-z]{49}$/);
    keyId = /key_[0-9a-f]{16}/.exec((await page.locator('.lead').textContent())!)![0];
    const config = JSON.parse((await page.locator('#key-config').textContent())!) as {
      mcpServers: { toolgate: { url: string; headers: Record<string, string> } };
    };
    expect(config.mcpServers.toolgate).toEqual({
      url: `${d.tg.gateway.config.baseUrl}/mcp/?org_id=ORG_ID&user_id=USER_ID`,
      headers: { 'X-API-Key': key },
    });

    // The copy button puts the key on the clipboard (an inline script the CSP allows by its hash).
    await d.browser.context.grantPermissions(['clipboard-read', 'clipboard-write']);
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor();
    await expect(page.evaluate('navigator.clipboard.readText()')).resolves.toBe(key);
    await screenshot(page, 'dashboard-key-created');
  });

  it('tests the new key with a real tools/list, in a new tab that leaves the key on screen', async () => {
    const { page } = d;
    const [result] = await Promise.all([
      d.browser.context.waitForEvent('page'),
      page.getByRole('button', { name: 'Test this key' }).click(),
    ]);
    await result.getByRole('heading', { name: /The key works/ }).waitFor();
    await expect(result.getByRole('heading', { name: /The key works/ }).textContent()).resolves.toContain(
      `${SYSTEM_TOOLS.length} tools`,
    );
    for (const name of SYSTEM_TOOLS)
      await expect(result.getByText(name, { exact: true }).count()).resolves.toBe(1);
    expect(await result.content()).not.toContain(key);
    await screenshot(result, 'dashboard-key-test');
    await result.close();
    await expect(page.locator('#key-value').textContent()).resolves.toBe(key);
  });

  it('the key works from the MCP SDK client, and the list shows it without its value', async () => {
    agent = await connect('2025 (v1 client)', d.tg.mcpUrl('?org_id=acme-eu&user_id=jane'), {
      'X-API-Key': key,
    });
    expect(await agent.listToolNames()).toEqual(SYSTEM_TOOLS);

    const { page } = d;
    await page.getByRole('link', { name: 'API keys', exact: true }).click();
    const listed = row(page, keyId);
    await expect(listed.textContent()).resolves.toMatch(/Acme Corp.*platform.*active/s);
    await expect(listed.textContent()).resolves.toContain(`toolgate_…${key.slice(-4)}`);
    expect(await page.content()).not.toContain(key);
    await screenshot(page, 'dashboard-keys');
  });

  it('revokes the key after a confirmation, and the client is refused on its next request', async () => {
    const { page } = d;
    await row(page, keyId).getByRole('link', { name: 'Revoke…' }).click();
    await page.getByRole('heading', { name: `Revoke key ${keyId}?` }).waitFor();
    await screenshot(page, 'dashboard-key-revoke-confirm');
    // Nothing happens before the confirmation.
    expect(await agent!.listToolNames()).toEqual(SYSTEM_TOOLS);
    await page.getByRole('button', { name: 'Revoke key' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain(`Key ${keyId}`);
    await expect(row(page, keyId).textContent()).resolves.toContain('revoked');
    await screenshot(page, 'dashboard-key-revoked');

    await expect(agent!.listToolNames()).rejects.toThrow(/401|revoked/i);
    const refused = await fetch(d.tg.mcpUrl(), {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('TG_ERR_KEY_REVOKED');
  });

  it('tests a pasted key without storing it, and says why a key is refused', async () => {
    const { page } = d;
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Test key' }).click();
    await page.getByRole('heading', { name: 'The gateway refused the key' }).waitFor();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('TG_ERR_KEY_REVOKED');
    expect(await page.content()).not.toContain(key);
    await screenshot(page, 'dashboard-key-test-refused');

    await page.getByLabel('API key').fill('toolgate_not-a-key');
    await page.getByRole('button', { name: 'Test key' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('TG_ERR_KEY_MALFORMED');
  });
});
