import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { screenshot } from '../helpers/browser.js';
import { startDashboard, type DashboardHarness } from '../helpers/dashboard.js';
import { startGateway } from '../helpers/gateway.js';

/** Short, so the test can wait out a lock; long enough for five failures to land inside it. */
const WINDOW_SECONDS = 8;

let d: DashboardHarness;

beforeAll(async () => {
  d = await startDashboard({ TOOLGATE_SIGNIN_WINDOW_SECONDS: String(WINDOW_SECONDS) });
});
afterAll(() => d?.close());

describe('dashboard sessions and CSRF', () => {
  it('sets an HttpOnly, SameSite=Strict session cookie scoped to /dashboard, stored only hashed', async () => {
    await d.signIn();
    const cookies = await d.browser.context.cookies();
    const session = cookies.find((c) => c.name === 'toolgate_dashboard')!;
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/dashboard', secure: false });
    expect(session.expires * 1_000).toBeGreaterThan(Date.now() + 11 * 3_600_000);
    // The store knows the session only by a hash of its id.
    expect(
      await d.tg.gateway.store.dashboard.getSession(session.value, new Date().toISOString()),
    ).toBeUndefined();
  });

  it('refuses a POST without the CSRF token, or with another one, and changes nothing', async () => {
    const { page } = d;
    await page.goto(d.url('/keys'));
    const clients = (await d.tg.gateway.store.keys.listClients()).length;
    // Same browser, same session cookie: only the token is missing or wrong.
    const missing = await page.request.post(d.url('/clients'), { form: { name: 'Forged Inc' } });
    expect(missing.status()).toBe(403);
    expect(await missing.text()).toContain('Form expired');
    const wrong = await page.request.post(d.url('/clients'), {
      form: { name: 'Forged Inc', _csrf: 'x'.repeat(43) },
    });
    expect(wrong.status()).toBe(403);
    const revoke = await page.request.post(d.url('/catalog/reload'), { form: {} });
    expect(revoke.status()).toBe(403);
    expect((await d.tg.gateway.store.keys.listClients()).length).toBe(clients);

    // What the operator sees when a form lost its token.
    await page
      .locator('form[action="/dashboard/clients"] input[name="_csrf"]')
      .evaluate((input: unknown) => (input as { remove(): void }).remove());
    await page.getByLabel('Name').fill('Forged Inc');
    await page.getByRole('button', { name: 'Create client' }).click();
    await page.getByRole('heading', { name: 'Form expired' }).waitFor();
    await screenshot(page, 'dashboard-csrf-refused');
    expect(await d.tg.gateway.store.keys.findClient('Forged Inc')).toBeUndefined();
    expect(d.tg.logs.some((l) => l.includes('TG_DASHBOARD_CSRF_REFUSED'))).toBe(true);
  });

  it('refuses a POST from another origin even with a session', async () => {
    const page = d.page;
    await page.goto(d.url('/keys'));
    const token = await page.locator('input[name="_csrf"]').first().inputValue();
    const forged = await page.request.post(d.url('/clients'), {
      form: { name: 'Cross Site', _csrf: token },
      headers: { origin: 'https://evil.example' },
    });
    expect(forged.status()).toBe(403);
    expect(await d.tg.gateway.store.keys.findClient('Cross Site')).toBeUndefined();
  });

  it('signs out: the session is deleted server-side, so its cookie no longer opens anything', async () => {
    const { page } = d;
    const session = (await d.browser.context.cookies()).find((c) => c.name === 'toolgate_dashboard')!;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();
    await screenshot(page, 'dashboard-signed-out');
    const replay = await fetch(d.url('/keys'), {
      headers: { cookie: `toolgate_dashboard=${session.value}` },
      redirect: 'manual',
    });
    expect(replay.status).toBe(303);
    expect(replay.headers.get('location')).toContain('/dashboard/sign-in');
    const post = await fetch(d.url('/catalog/reload'), {
      method: 'POST',
      headers: {
        cookie: `toolgate_dashboard=${session.value}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: '',
    });
    expect(post.status).toBe(403);
  });

  it('marks the cookie Secure when the base URL is https', async () => {
    const tg = await startGateway({ TOOLGATE_BASE_URL: 'https://gateway.example' });
    try {
      const signIn = await fetch(`${tg.url}/dashboard/sign-in`);
      expect(signIn.headers.getSetCookie()[0]).toMatch(/; HttpOnly; SameSite=Strict; Secure$/);
    } finally {
      await tg.close();
    }
  });
});

describe('sign-in throttling', () => {
  it('refuses the 6th attempt after five wrong passwords, even with the right one, until the window passes', async () => {
    const { page } = d;
    await page.goto(d.url('/sign-in'));
    for (let attempt = 1; attempt <= 5; attempt++) {
      await page.getByLabel('Admin password').fill(`wrong password ${attempt}`);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect(page.getByRole('alert').textContent()).resolves.toBe('Wrong password.');
    }
    await page.getByLabel('Admin password').fill(d.password);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      page.getByRole('button', { name: 'Sign in' }).click(),
    ]);
    expect(response.status()).toBe(429);
    const message = (await page.getByRole('alert').textContent())!;
    expect(message).toMatch(/^Too many attempts, try again in \d+ seconds\.$/);
    const seconds = Number(/(\d+) seconds/.exec(message)![1]);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(WINDOW_SECONDS);
    expect(response.headers()['retry-after']).toBe(String(seconds));
    await screenshot(page, 'dashboard-sign-in-throttled');
    expect((await d.browser.context.cookies()).some((c) => c.name === 'toolgate_dashboard')).toBe(false);

    // Once the failures have aged out, the right password works again.
    await page.waitForTimeout(seconds * 1_000 + 200);
    await d.signIn();
    expect(new URL(page.url()).pathname).toBe('/dashboard/keys');
  }, 30_000);
});
