/**
 * The dashboard's Activity page (issue 18) in Chromium: real tool calls through the gateway (a
 * loopback Pet Shop API, a keyless weather API) and a day of earlier entries in the audit trail give
 * the charts (calls per provider, error rate, p50/p95 latency, drawn as SVG on the server) and the
 * recent failures with the message the agent got; the filters narrow all of it. No argument value
 * nor credential reaches the page.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../core/store/types.js';
import { screenshot } from '../helpers/browser.js';
import { connectWithKey, type TestClient } from '../helpers/clients.js';
import { row, startDashboard, type DashboardHarness } from '../helpers/dashboard.js';
import { PETSHOP_MANIFESTS, petshopEnv } from '../helpers/petshop.js';
import { jsonAnswer, startReceiver, type Receiver } from '../helpers/receiver.js';
import { expectToolError, expectToolOk } from '../helpers/results.js';

const PETSHOP_KEY = 'ps_activity42';
const CITY = 'Reykjavik-argument';
const WEATHER = fileURLToPath(new URL('../fixtures/catalog/auth-none/weather.yaml', import.meta.url));

let api: Receiver;
let d: DashboardHarness;
let ann: TestClient;
let bob: TestClient;

/** Earlier entries of the last day: some calls of each provider an hour, a few failed. */
function history(clientId: string): AuditEntry[] {
  const now = Date.now();
  return Array.from({ length: 23 * 6 }, (_, i): AuditEntry => {
    const hour = 23 - Math.floor(i / 6);
    const provider = i % 3 === 0 ? 'weather' : 'petshop';
    const failed = i % 17 === 0;
    return {
      id: `aud_hist_${String(i).padStart(4, '0')}`,
      at: new Date(now - hour * 3_600_000 + (i % 6) * 60_000).toISOString(),
      event: 'tool_call',
      clientId,
      keyId: 'key_history',
      orgId: null,
      userId: 'ann',
      provider,
      tool: provider === 'weather' ? 'weather_current' : 'petshop_list_pets',
      outcome: failed ? 'error' : 'ok',
      latencyUs: 800 + ((i * 7919) % 40) * 250 + (failed ? 30_000 : 0),
      upstreamStatus: failed ? 503 : 200,
      message: failed ? 'petshop returned HTTP 503 Service Unavailable: try again later' : null,
    };
  });
}

beforeAll(async () => {
  api = await startReceiver((req) => {
    if (req.url.startsWith('/current')) return jsonAnswer(200, { temp: 4 });
    if (req.headers.authorization !== `Bearer ${PETSHOP_KEY}`)
      return jsonAnswer(401, { message: 'invalid api key' });
    if (req.url === '/me') return jsonAnswer(200, { email: 'shop@petshop.example' });
    if (req.url === '/pets/missing') return jsonAnswer(404, { message: 'pet not found' });
    return jsonAnswer(200, { items: [] });
  });
  d = await startDashboard(
    { ...petshopEnv(api.url), TOOLGATE_PROVIDER_WEATHER_BASE_URL: api.url },
    { manifestFiles: [WEATHER, ...PETSHOP_MANIFESTS] },
  );
  ann = await connectWithKey(d.tg, '2026-07-28', '?user_id=ann', 'client', 'Ann Co');
  bob = await connectWithKey(
    d.tg,
    '2025 (v1 client)',
    '?org_id=org-x&user_id=bob',
    'platform',
    'Bob Platform',
  );
  expectToolOk(
    await ann.callTool('connect_provider', { provider: 'petshop', credentials: { api_key: PETSHOP_KEY } }),
  );
  for (let i = 0; i < 3; i++) expectToolOk(await ann.callTool('petshop_list_pets', {}));
  expectToolError(await ann.callTool('petshop_get_pet', { petId: 'missing' }), 'pet not found');
  for (let i = 0; i < 4; i++) expectToolOk(await bob.callTool('weather_current', { city: CITY }));
  const client = await d.tg.gateway.store.keys.findClient('Ann Co');
  await d.tg.gateway.store.audit.append(history(client!.id));
  // The gateway writes within a second; the test does not wait for the timer.
  await d.tg.gateway.audit.flush();
  await d.signIn();
}, 90_000);
afterAll(async () => {
  await ann?.close();
  await bob?.close();
  await d?.close();
  await api?.close();
});

describe('dashboard: activity', () => {
  it('charts calls per provider, error rate and latency, and lists recent failures with their message', async () => {
    const { page } = d;
    await page.getByRole('link', { name: 'Activity', exact: true }).click();
    await page.getByRole('heading', { name: 'Activity' }).waitFor();
    expect(page.url()).toBe(d.url('/activity'));

    const calls = page.getByRole('img', { name: 'Tool calls per provider, last 24 hours' });
    await calls.waitFor();
    // A bar segment per provider and hour that had calls: both providers, in most of the 24 hours.
    expect(await calls.locator('rect').count()).toBeGreaterThan(30);
    const legends = page.locator('.legend');
    await expect(legends.first().textContent()).resolves.toMatch(/petshop.*weather/s);
    await page.getByRole('img', { name: 'Share of tool calls that failed, last 24 hours' }).waitFor();
    const latency = page.getByRole('img', { name: 'Tool call latency p50 and p95, last 24 hours' });
    expect(await latency.locator('polyline').count()).toBe(2);
    await expect(latency.locator('circle title').first().textContent()).resolves.toMatch(/^p50: [\d.]+ ms$/);

    // 1 connect + 3 lists + 1 failed get + 4 weather calls now, 138 from the history.
    const stats = page.locator('.stats');
    await expect(stats.textContent()).resolves.toMatch(/147\s*tool calls/);
    await expect(stats.textContent()).resolves.toMatch(/median latency \(p50\)/);

    const failure = row(page, 'petshop_get_pet');
    await expect(failure.textContent()).resolves.toMatch(
      /Ann Co\/ann\s*petshop\s*petshop_get_pet\s*error\s*HTTP 404\s*petshop returned HTTP 404 Not Found: pet not found/,
    );
    await expect(row(page, 'try again later').first().textContent()).resolves.toContain('HTTP 503');

    const text = (await page.content()) + (await page.locator('body').innerText());
    for (const secret of [PETSHOP_KEY, CITY, 'shop@petshop.example']) expect(text).not.toContain(secret);
    await screenshot(page, 'dashboard-activity');
  });

  it('narrows every chart and the failures by client, organization, user and provider', async () => {
    const { page } = d;
    await page.goto(d.url('/activity'));
    await page.getByLabel('Client').fill('Bob Platform');
    await page.getByRole('button', { name: 'Apply' }).click();
    await page.getByRole('img', { name: 'Tool calls per provider, last 24 hours' }).waitFor();
    expect(new URL(page.url()).searchParams.get('client')).toBe('Bob Platform');
    await expect(page.locator('.stats').textContent()).resolves.toMatch(/^\s*4\s*tool calls/);
    await expect(page.locator('.legend').first().textContent()).resolves.not.toContain('petshop');
    await page.getByText('Every call in this window succeeded.').waitFor();

    // The window tabs keep the filters.
    await page.getByRole('link', { name: 'Last hour' }).click();
    await page.getByRole('img', { name: 'Tool calls per provider, last hour' }).waitFor();
    expect(new URL(page.url()).searchParams.get('client')).toBe('Bob Platform');
    await expect(page.getByLabel('Client').inputValue()).resolves.toBe('Bob Platform');

    await page.goto(d.url('/activity?org=org-x&user=bob&provider=weather'));
    await expect(page.locator('.stats').textContent()).resolves.toMatch(/^\s*4\s*tool calls/);
    await page.goto(d.url('/activity?provider=petshop&user=ann'));
    await expect(page.locator('.stats').textContent()).resolves.toMatch(/^\s*96\s*tool calls/);
    await expect(row(page, 'petshop_get_pet').count()).resolves.toBe(1);
    await screenshot(page, 'dashboard-activity-filtered');

    // A filter it cannot read is shown beside its field, with what it takes.
    const refused = await page.goto(d.url(`/activity?user=${'u'.repeat(300)}`));
    expect(refused?.status()).toBe(400);
    await page.getByText('The user_id must be one line of at most 256 characters.').waitFor();
    await expect(page.getByLabel('User').getAttribute('aria-invalid')).resolves.toBe('true');

    await page.goto(d.url('/activity?user=nobody'));
    await page.getByText('No tool calls here').waitFor();
    await page.getByRole('link', { name: 'Clear' }).click();
    await page.getByRole('img', { name: 'Tool calls per provider, last 24 hours' }).waitFor();
  });
});
