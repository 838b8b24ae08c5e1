import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot } from '../helpers/browser.js';
import { connect } from '../helpers/clients.js';
import { row, startDashboard, type DashboardHarness } from '../helpers/dashboard.js';
import { callbackServer, HandClient, type CallbackServer } from '../helpers/front-door.js';
import { postMcp, until } from '../helpers/gateway.js';

let dash: DashboardHarness;
let callback: CallbackServer;

beforeAll(async () => {
  dash = await startDashboard();
  callback = await callbackServer();
});
afterAll(async () => {
  await callback?.close();
  await dash?.close();
});

const hub = () => dash.tg.gateway.mcp.hub;
const streamsOf = (keyId: string): number => hub().countWhere((s) => s.keyId === keyId);

async function refusedCode(token: string): Promise<string> {
  const response = await postMcp(
    dash.tg.mcpUrl(),
    '',
    {},
    { authorization: `Bearer ${token}`, 'x-api-key': '' },
  );
  expect(response.status).toBe(401);
  return ((await response.json()) as { error: { code: string } }).error.code;
}

describe('authorized applications in the dashboard', () => {
  it('lists what signed in with a key, and revoking one ends its tokens and closes its open streams at once', async () => {
    const { key, id } = await dash.tg.key('client', 'umbrella');
    const agent = new HandClient(dash.tg.url, callback, 'Claude Connector');
    const alice = await agent.signIn(dash.page, { key, userId: 'alice' });
    const bob = await new HandClient(dash.tg.url, callback, 'Other Agent').signIn(dash.page, {
      key,
      userId: 'bob',
    });
    // Alice's agent holds a 2025 session stream and a 2026-07-28 listen stream open.
    const clients = await Promise.all(
      (['2025 (v1 client)', '2026-07-28'] as const).map(async (generation) => {
        const client = await connect(generation, dash.tg.mcpUrl(), {
          authorization: `Bearer ${alice.access}`,
        });
        await client.watchToolsChanged(() => undefined);
        return client;
      }),
    );
    await until(hub(), 'change', () => streamsOf(id) === 2);

    await dash.signIn();
    await dash.page.goto(dash.url(`/keys/${id}`));
    await expect(row(dash.page, 'Claude Connector').innerText()).resolves.toMatch(
      /user alice[\s\S]*API key[\s\S]*active/,
    );
    await expect(row(dash.page, 'Other Agent').innerText()).resolves.toContain('user bob');
    await row(dash.page, 'Claude Connector').getByRole('button', { name: 'Revoke' }).click();
    await dash.page.getByText('The application’s access is revoked').waitFor();
    await expect(row(dash.page, 'Claude Connector').innerText()).resolves.toContain('revoked');
    await screenshot(dash.page, 'dashboard-applications');

    await until(hub(), 'change', () => streamsOf(id) === 0);

    expect(await refusedCode(alice.access)).toBe('TG_ERR_TOKEN_INVALID');
    const refresh = await agent.token({
      grant_type: 'refresh_token',
      refresh_token: alice.refresh,
      client_id: alice.clientId,
    });
    expect(refresh.body.error).toBe('invalid_grant');
    // The other application of the same key is untouched.
    const still = await connect('2026-07-28', dash.tg.mcpUrl(), { authorization: `Bearer ${bob.access}` });
    expect(await still.listToolNames()).toContain('list_providers');
    await Promise.all([still, ...clients].map((c) => c.close().catch(() => undefined)));
  });

  it("revoking the key ends every application's access", async () => {
    const { key, id } = await dash.tg.key('solo', 'initech');
    const signedIn = await new HandClient(dash.tg.url, callback).signIn(dash.page, { key });
    const client = await connect('2026-07-28', dash.tg.mcpUrl(), {
      authorization: `Bearer ${signedIn.access}`,
    });
    await client.watchToolsChanged(() => undefined);
    await until(hub(), 'change', () => streamsOf(id) === 1);
    await dash.page.goto(dash.url(`/keys/${id}/revoke`));
    await dash.page.getByRole('button', { name: 'Revoke key' }).click();
    await until(hub(), 'change', () => streamsOf(id) === 0);
    await client.close().catch(() => undefined);
    expect(await refusedCode(signedIn.access)).toBe('TG_ERR_TOKEN_INVALID');
  });
});
