import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot } from '../helpers/browser.js';
import { connect, type TestClient } from '../helpers/clients.js';
import { backgroundOf, row, startDashboard, type DashboardHarness } from '../helpers/dashboard.js';
import { consentLinkIn } from '../helpers/oauth-server.js';

/**
 * An OAuth2 provider that lets organizations bring their own app. The consent start page is served
 * by the gateway alone, so no authorization server is needed to see it.
 */
const MANIFEST = fileURLToPath(new URL('../fixtures/catalog/oauth2/acme.yaml', import.meta.url));

let d: DashboardHarness;
let agent: TestClient;

beforeAll(async () => {
  d = await startDashboard(
    {
      TOOLGATE_PROVIDER_ACME_CLIENT_ID: 'operator-default-app',
      TOOLGATE_PROVIDER_ACME_CLIENT_SECRET: 'operator-default-secret',
    },
    { manifestFiles: [MANIFEST] },
  );
  const { key } = await d.tg.key('platform', 'Blue Platform');
  agent = await connect('2025 (v1 client)', d.tg.mcpUrl('?org_id=org-blue&user_id=u1'), { 'X-API-Key': key });
  await d.signIn();
});
afterAll(async () => {
  await agent?.close();
  await d?.close();
});

async function consentLink(): Promise<string> {
  const result = await agent.callTool('connect_provider', { provider: 'acme' });
  expect(result.isError).toBeFalsy();
  return consentLinkIn(result.content[0]!.text!);
}

describe("dashboard: organizations' OAuth apps", () => {
  it('lists the organizations seen under each client, with user counts', async () => {
    // The organization's first request (a consent link) makes it seen.
    await consentLink();
    const { page } = d;
    await page.getByRole('link', { name: 'Organizations', exact: true }).click();
    await expect(row(page, 'org-blue').textContent()).resolves.toMatch(/Blue Platform\s*org-blue\s*1\s*none/);
    await expect(row(page, 'Acme Cloud').textContent()).resolves.toContain('from the environment');
    await screenshot(page, 'dashboard-organizations');
  });

  it("configures the organization's app and shows its branding on the consent start page", async () => {
    const { page } = d;
    await row(page, 'org-blue').getByRole('link', { name: 'OAuth apps' }).click();
    await page.getByRole('heading', { name: 'Organization org-blue' }).waitFor();
    await expect(page.locator('#app-acme').textContent()).resolves.toContain('uses the default app');

    // Inline validation: the form comes back with the error beside the field, the secret not echoed.
    await page.getByLabel('Client id', { exact: true }).fill('blue-app');
    await page.getByLabel(/^Client secret/).fill('blue-secret-1');
    await page.getByLabel(/^Logo URL/).fill('http://blue.example/logo.png');
    await page.getByRole('button', { name: 'Save Acme Cloud app' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('must be https://');
    await expect(page.getByLabel('Client id', { exact: true }).inputValue()).resolves.toBe('blue-app');
    await expect(page.getByLabel(/^Client secret/).inputValue()).resolves.toBe('');
    await screenshot(page, 'dashboard-oauth-app-error');

    await page.getByLabel(/^Client secret/).fill('blue-secret-1');
    await page.getByLabel(/^Display name/).fill('Blue Industries');
    await page.getByLabel(/^Logo URL/).fill('https://blue.example/logo.png');
    await page.getByLabel(/^Accent colour/).fill('#1d4ed8');
    await page.getByRole('button', { name: 'Save Acme Cloud app' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toContain('Saved the Acme Cloud app');
    const preview = page.locator('#preview-acme');
    await expect(preview.getByRole('heading').textContent()).resolves.toBe(
      'Connect Acme Cloud for Blue Industries',
    );
    await expect(backgroundOf(preview.getByRole('button'))).resolves.toBe('rgb(29, 78, 216)');
    // The secret is write-only: not in the page, not in the field.
    expect(await page.content()).not.toContain('blue-secret-1');
    await expect(page.getByLabel(/^Client secret/).inputValue()).resolves.toBe('');
    await screenshot(page, 'dashboard-oauth-app-saved');

    // The consent link of one of its users now starts on a page in its colours.
    const link = await consentLink();
    await page.goto(link);
    await page.getByRole('heading', { name: 'Connect Acme Cloud for Blue Industries' }).waitFor();
    await expect(backgroundOf(page.getByRole('button', { name: 'Continue to Acme Cloud' }))).resolves.toBe(
      'rgb(29, 78, 216)',
    );
    await expect(page.locator('.brand img').getAttribute('src')).resolves.toBe(
      'https://blue.example/logo.png',
    );
    await screenshot(page, 'dashboard-oauth-consent-branded');
  });

  it('keeps the stored secret when the field is left empty, and wants a secret for a new client id', async () => {
    const { page } = d;
    const clientId = (await d.tg.gateway.store.keys.listClients()).find(
      (c) => c.name === 'Blue Platform',
    )!.id;
    const owner = { clientId, orgId: 'org-blue' };
    const before = (await d.tg.gateway.store.oauthApps.current('acme', owner))!;
    await page.goto(d.url('/oauth-apps?client=Blue%20Platform&org_id=org-blue'));
    await page.getByLabel(/^Display name/).fill('Blue Industries Ltd');
    await page.getByRole('button', { name: 'Save Acme Cloud app' }).click();
    await page.getByRole('status').waitFor();
    const after = (await d.tg.gateway.store.oauthApps.current('acme', owner))!;
    // Branding changes in place: same app, same sealed secret.
    expect(after.id).toBe(before.id);
    expect(after.clientSecret).toBe(before.clientSecret);
    expect(after.branding).toEqual({
      displayName: 'Blue Industries Ltd',
      logoUrl: 'https://blue.example/logo.png',
      accentColor: '#1d4ed8',
    });

    await page.getByLabel('Client id', { exact: true }).fill('blue-app-2');
    await page.getByRole('button', { name: 'Save Acme Cloud app' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain(
      'A new client id needs its own client secret',
    );
    expect((await d.tg.gateway.store.oauthApps.current('acme', owner))!.oauthClientId).toBe('blue-app');

    const resolved = await d.tg.gateway.oauthApps.forScope(
      d.tg.gateway.catalog.current.providers.get('acme')!,
      {
        ...owner,
        userId: 'u1',
      },
    );
    expect(resolved).toMatchObject({ clientId: 'blue-app', clientSecret: 'blue-secret-1' });
  });

  it("sets the operator's default app of a provider in place of the environment's", async () => {
    const { page } = d;
    await page.getByRole('link', { name: 'Organizations', exact: true }).click();
    await row(page, 'Acme Cloud').getByRole('link', { name: 'Configure' }).click();
    await page.getByRole('heading', { name: 'Default OAuth apps' }).waitFor();
    await expect(page.locator('#app-acme').textContent()).resolves.toContain('from the environment');
    await page.getByLabel('Client id', { exact: true }).fill('operator-stored-app');
    await page.getByLabel(/^Client secret/).fill('operator-stored-secret');
    await page.getByRole('button', { name: 'Save Acme Cloud app' }).click();
    await page.getByRole('status').waitFor();
    await expect(page.locator('#app-acme').textContent()).resolves.toContain('operator-stored-app');
    await screenshot(page, 'dashboard-oauth-default-app');
    const app = (await d.tg.gateway.store.oauthApps.current('acme', null))!;
    expect(app.oauthClientId).toBe('operator-stored-app');
    expect(app.clientSecret).not.toContain('operator-stored-secret');
  });
});
