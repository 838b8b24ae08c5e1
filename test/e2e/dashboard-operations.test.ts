import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot } from '../helpers/browser.js';
import { connectWithKey, type TestClient } from '../helpers/clients.js';
import { row, startDashboard, type DashboardHarness } from '../helpers/dashboard.js';
import { PETSHOP_MANIFESTS, petshopApi, petshopEnv } from '../helpers/petshop.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const PETSHOP_KEY = 'ps_dashboard42';

const WEATHER = fileURLToPath(new URL('../fixtures/catalog/auth-none/weather.yaml', import.meta.url));
const WEATHER_TEXT = readFileSync(WEATHER, 'utf8');

let api: Receiver;
let d: DashboardHarness;
let ann: TestClient;
let bob: TestClient;

beforeAll(async () => {
  // One loopback API for both providers: the weather tool's /current needs no key.
  api = await startReceiver(
    petshopApi({
      keys: [PETSHOP_KEY],
      body: { email: 'shop@petshop.example', items: [], temp: 21 },
      open: (req) => req.url.startsWith('/current'),
    }),
  );
  d = await startDashboard(
    { ...petshopEnv(api.url), TOOLGATE_PROVIDER_WEATHER_BASE_URL: api.url },
    { manifestFiles: [WEATHER, ...PETSHOP_MANIFESTS] },
  );
  ann = await connectWithKey(d.tg, '2025 (v1 client)', '?user_id=ann', 'client', 'Ops Client');
  bob = await connectWithKey(
    d.tg,
    '2025 (v1 client)',
    '?org_id=org-x&user_id=bob',
    'platform',
    'Ops Platform',
  );
  await d.signIn();
});
afterAll(async () => {
  await ann?.close();
  await bob?.close();
  await d?.close();
  await api?.close();
});

describe('dashboard: problem reports', () => {
  it('lists a report filed through report_problem with its scope, and marks it resolved', async () => {
    const filed = await ann.callTool('report_problem', {
      summary: 'Weather tool times out',
      details: 'Asked for Paris; nothing came back after 30 s.',
      provider: 'weather',
      tool: 'weather_current',
    });
    const id = /rep_[0-9a-f]{16}/.exec(filed.content[0]!.text!)![0];
    const { page } = d;
    await page.getByRole('link', { name: 'Reports', exact: true }).click();
    const listed = row(page, 'Weather tool times out');
    await expect(listed.textContent()).resolves.toMatch(
      /Ops Client\s*user_id\s*ann\s*weather\s*weather_current\s*Weather tool times out\s*Asked for Paris/,
    );
    await expect(listed.textContent()).resolves.toContain(id);
    await screenshot(page, 'dashboard-reports-open');

    await listed.getByRole('button', { name: 'Mark resolved' }).click();
    await expect(page.getByRole('status').textContent()).resolves.toBe(`Report ${id} is marked resolved.`);
    await page.getByText('No open reports').waitFor();
    await screenshot(page, 'dashboard-reports-none-open');
    await page.getByRole('link', { name: 'Resolved' }).click();
    await expect(row(page, 'Weather tool times out').textContent()).resolves.toContain('resolved');
    await screenshot(page, 'dashboard-reports-resolved');
    expect((await d.tg.gateway.store.reports.list({ status: 'resolved' })).map((r) => r.id)).toEqual([id]);
  });
});

describe('dashboard: catalog', () => {
  it("shows every provider's status, version and counts, and its tools by category", async () => {
    const { page } = d;
    await page.getByRole('link', { name: 'Catalog', exact: true }).click();
    const entry = d.tg.gateway.catalog.current.providers.get('weather')!;
    await expect(row(page, 'Weather').textContent()).resolves.toMatch(/loaded\s*none\s*[0-9a-f]{12}\s*1\s*1/);
    await expect(row(page, 'Pet Shop').textContent()).resolves.toContain('api_key');
    await screenshot(page, 'dashboard-catalog');
    await row(page, 'Pet Shop').getByRole('link', { name: 'Pet Shop' }).click();
    await page.getByRole('heading', { name: 'Pets' }).waitFor();
    // Exactly: the provider's findings (a schema cut) name the tool too.
    await expect(page.getByText('petshop_list_pets', { exact: true }).count()).resolves.toBe(1);
    await screenshot(page, 'dashboard-catalog-provider');
    expect(entry.contentHash).toBeTruthy();
  });

  it('reloads with a broken manifest: the report shows the findings, the old version keeps serving', async () => {
    // An unknown top-level key breaks it.
    writeFileSync(
      join(d.tg.manifestsDir, 'weather.yaml'),
      WEATHER_TEXT.replace('\ntools:', '\ncolour: blue\ntools:'),
    );
    writeFileSync(join(d.tg.manifestsDir, 'broken.yaml'), 'id: [unclosed\n');
    const { page } = d;
    await page.getByRole('link', { name: 'Catalog', exact: true }).click();
    await page.getByRole('button', { name: 'Reload catalog' }).click();
    const report = page.getByRole('region', { name: 'Reload report' });
    await expect(report.textContent()).resolves.toMatch(/Failing, last good version kept\s*weather/);
    await expect(report.textContent()).resolves.toMatch(/Failed\s*broken/);
    await expect(report.locator('pre').textContent()).resolves.toMatch(
      /weather\.yaml:\d+:\d+ {2}TG_MANIFEST_UNKNOWN_KEY/,
    );
    await expect(report.locator('pre').textContent()).resolves.toContain('TG_MANIFEST_YAML');
    await expect(row(page, 'weather').first().textContent()).resolves.toContain('stale');
    await screenshot(page, 'dashboard-catalog-reload-broken');

    const call = await ann.callTool('weather_current', { city: 'Paris' });
    expect(call.isError).toBeFalsy();
    expect(api.received.at(-1)!.url).toBe('/current?city=Paris');

    writeFileSync(join(d.tg.manifestsDir, 'weather.yaml'), WEATHER_TEXT);
    await page.getByRole('button', { name: 'Reload catalog' }).click();
    await expect(row(page, 'Weather').first().textContent()).resolves.toContain('loaded');
  });
});

describe('dashboard: connections', () => {
  it('counts connections per client, organization, provider and state, and lists recent events, never a credential', async () => {
    const credentials = { provider: 'petshop', credentials: { api_key: PETSHOP_KEY } };
    expect((await ann.callTool('connect_provider', credentials)).isError).toBeFalsy();
    expect((await ann.callTool('disconnect_provider', { provider: 'petshop' })).isError).toBeFalsy();
    expect((await ann.callTool('connect_provider', credentials)).isError).toBeFalsy();
    expect((await bob.callTool('connect_provider', credentials)).isError).toBeFalsy();
    // As an OAuth2 refresh that failed for good would leave it.
    const platform = (await d.tg.gateway.store.keys.listClients()).find((c) => c.name === 'Ops Platform')!;
    const scope = { clientId: platform.id, orgId: 'org-x', userId: 'bob' };
    await d.tg.gateway.store.connections.setState(scope, 'petshop', 'reapproval_needed');
    await d.tg.gateway.store.connections.addEvent(scope, 'petshop', 'reapproval_needed', 'invalid_grant');

    const { page } = d;
    await page.getByRole('link', { name: 'Connections', exact: true }).click();
    await expect(page.locator('.lead').innerText()).resolves.toContain(
      '2 connections, 1 waiting for re-approval',
    );
    await expect(row(page, 'Ops Client').first().textContent()).resolves.toMatch(
      /Ops Client\s*none.*Pet Shop\s*1\s*0/s,
    );
    await expect(row(page, 'org-x').first().textContent()).resolves.toMatch(
      /Ops Platform\s*org-x\s*Pet Shop\s*0\s*1/,
    );
    const events = page.locator('section', { hasText: 'Recent events' }).locator('tbody tr');
    await expect(events.allTextContents()).resolves.toEqual([
      expect.stringMatching(/re-approval needed\s*Pet Shop\s*Ops Platform\s*org-x\s*bob\s*invalid_grant/),
      expect.stringMatching(/connected\s*Pet Shop\s*Ops Platform\s*org-x\s*bob/),
      expect.stringMatching(/connected\s*Pet Shop\s*Ops Client\s*ann/),
      expect.stringMatching(/disconnected\s*Pet Shop\s*Ops Client\s*ann/),
      expect.stringMatching(/connected\s*Pet Shop\s*Ops Client\s*ann/),
    ]);
    const connection = (await d.tg.gateway.store.connections.get(scope, 'petshop'))!;
    const content = await page.content();
    expect(content).not.toContain(PETSHOP_KEY);
    expect(content).not.toContain(connection.credentials.slice(0, 24));
    await screenshot(page, 'dashboard-connections');
  });
});
