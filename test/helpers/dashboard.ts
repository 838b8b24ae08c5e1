import type { Locator, Page } from 'playwright-core';
import type { GatewayOptions } from '../../core/gateway.js';
import { openBrowser } from './browser.js';
import { freePort, startGateway, type TestGateway } from './gateway.js';

export interface DashboardHarness {
  tg: TestGateway;
  /** The admin password the first start generated (what the banner prints). */
  password: string;
  browser: Awaited<ReturnType<typeof openBrowser>>;
  page: Page;
  /** `{base}/dashboard{path}` */
  url(path?: string): string;
  /** Signs in through the sign-in form and waits for the page it lands on. */
  signIn(page?: Page): Promise<void>;
  close(): Promise<void>;
}

/**
 * A gateway whose base URL is its real address (links and cookies as in production), started the
 * way `toolgate serve` does (bootstrap: first key, generated admin password), and Chromium.
 */
export async function startDashboard(
  env: Record<string, string> = {},
  options: Omit<GatewayOptions, 'config' | 'logStream'> & { manifestFiles?: string[] } = {},
): Promise<DashboardHarness> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const tg = await startGateway({ TOOLGATE_PORT: String(port), TOOLGATE_BASE_URL: base, ...env }, options);
  const { adminPassword } = await tg.gateway.bootstrap();
  if (adminPassword === undefined) throw new Error('bootstrap generated no admin password');
  const browser = await openBrowser();
  const url = (path = ''): string => `${base}/dashboard${path}`;
  return {
    tg,
    password: adminPassword,
    browser,
    page: browser.page,
    url,
    async signIn(page = browser.page) {
      if (!page.url().includes('/dashboard/sign-in')) await page.goto(url('/sign-in'));
      await page.getByLabel('Admin password').fill(adminPassword);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
    },
    async close() {
      await browser.close();
      await tg.close();
    },
  };
}

/** The visible text of the table row that contains `text`. */
export function row(page: Page, text: string) {
  return page.locator('tr', { hasText: text });
}

/** An element's computed background colour, as `rgb(r, g, b)` (the function runs in the page). */
export function backgroundOf(locator: Locator): Promise<string> {
  return locator.evaluate(
    (element: unknown) =>
      (
        globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }
      ).getComputedStyle(element).backgroundColor,
  );
}
