/**
 * The tool policy form (issue 15): the operator hides a tool of a client from the client's row of
 * API keys, the client's agents stop seeing it at once, and a refused entry is shown beside its field.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectWithKey, type TestClient } from '../helpers/clients.js';
import { row, startDashboard, type DashboardHarness } from '../helpers/dashboard.js';
import { PETSHOP_MANIFESTS, petshopApi, petshopEnv } from '../helpers/petshop.js';
import { startReceiver, type Receiver } from '../helpers/receiver.js';

const PETSHOP_KEY = 'ps_policy42';

let api: Receiver;
let d: DashboardHarness;
let agent: TestClient;

beforeAll(async () => {
  api = await startReceiver(petshopApi({ keys: [PETSHOP_KEY], body: { items: [] } }));
  d = await startDashboard(petshopEnv(api.url), { manifestFiles: [...PETSHOP_MANIFESTS] });
  agent = await connectWithKey(
    d.tg,
    '2025 (v1 client)',
    '?user_id=ann&tools=full',
    'client',
    'Policy Client',
  );
  await agent.callTool('connect_provider', { provider: 'petshop', credentials: { api_key: PETSHOP_KEY } });
  await d.signIn();
});
afterAll(async () => {
  await agent?.close();
  await d?.close();
  await api?.close();
});

describe('dashboard: tool policy', () => {
  it("saves a client's deny-list, which hides the tool from its agents, and removes it", async () => {
    const { page } = d;
    expect(await agent.listToolNames()).toContain('petshop_create_pet');
    await page.goto(d.url('/keys'));
    await row(page, 'Policy Client').getByRole('link', { name: 'Tool policy' }).click();
    await page.getByRole('heading', { name: 'Tool policy of client Policy Client' }).waitFor();

    await page.getByLabel('Deny').fill('petshop_feed_pet');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain(
      '"petshop_feed_pet" is no provider id or tool name of the catalog',
    );

    await page.getByLabel('Deny').fill('petshop_create_pet');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByRole('status').getByText('Policy saved').waitFor();
    expect(await page.getByLabel('Deny').inputValue()).toBe('petshop_create_pet');
    expect(await agent.listToolNames()).not.toContain('petshop_create_pet');

    await page.getByRole('button', { name: 'Remove policy' }).click();
    await page.getByRole('status').getByText('Policy removed.').waitFor();
    expect(await agent.listToolNames()).toContain('petshop_create_pet');
  });
});
