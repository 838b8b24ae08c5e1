import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { adminToken } from '../../../core/http/admin.js';
import { runToolgate } from '../../helpers/cli.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';

const ACME = fileURLToPath(new URL('../../fixtures/catalog/oauth2/acme.yaml', import.meta.url));

/** Every file under the data dir (database, WAL, shared memory), as bytes. */
function dataFiles(dir: string): { name: string; bytes: Buffer }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => ({ name: entry.name, bytes: readFileSync(join(entry.parentPath, entry.name)) }));
}

/** A browser's view of the dashboard: one cookie jar, forms posted with the token of the page. */
function dashboardClient(tg: TestGateway) {
  const cookies = new Map<string, string>();
  const keep = (response: Response): Response => {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, value] = pair!.split('=') as [string, string];
      if (value === '') cookies.delete(name);
      else cookies.set(name, value);
    }
    return response;
  };
  const cookie = (): string => [...cookies].map(([n, v]) => `${n}=${v}`).join('; ');
  return {
    cookies,
    async get(path: string): Promise<string> {
      return keep(await fetch(`${tg.url}/dashboard${path}`, { headers: { cookie: cookie() } })).text();
    },
    /** Opens `page`, then posts `fields` with its CSRF token to `action`. */
    async post(page: string, action: string, fields: Record<string, string>): Promise<Response> {
      const token = /name="_csrf" value="([^"]+)"/.exec(await this.get(page))![1]!;
      return keep(
        await fetch(`${tg.url}/dashboard${action}`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ ...fields, _csrf: token }).toString(),
        }),
      );
    },
  };
}

describe('dashboard secrets at rest and in logs', () => {
  it('no admin password, session id, created or tested key, OAuth or identity-provider client secret reaches the logs or the data dir', async () => {
    const tg = await startGateway(
      { TOOLGATE_PROVIDER_ACME_CLIENT_ID: 'env-app', TOOLGATE_PROVIDER_ACME_CLIENT_SECRET: 'env-secret' },
      { manifestFiles: [ACME] },
    );
    const sentinels: string[] = [];
    try {
      const first = await tg.gateway.bootstrap();
      sentinels.push(first.key!, first.adminPassword!);
      const browser = dashboardClient(tg);

      const wrong = `wrong-${randomBytes(12).toString('hex')}`;
      sentinels.push(wrong);
      expect((await browser.post('/sign-in', '/sign-in', { password: wrong })).status).toBe(401);
      expect((await browser.post('/sign-in', '/sign-in', { password: first.adminPassword! })).status).toBe(
        303,
      );
      sentinels.push(browser.cookies.get('toolgate_dashboard')!);

      const created = await (
        await browser.post('/keys', '/keys', { client: 'default', type: 'client' })
      ).text();
      const key = /id="key-value">(toolgate_[0-9A-Za-z]{49})</.exec(created)![1]!;
      const keyId = /key_[0-9a-f]{16}/.exec(created)![0];
      sentinels.push(key);
      const tested = await browser.post('/keys', '/keys/test', { key });
      expect(await tested.text()).toContain('The key works');

      // A key made through the admin API, then pasted into the test form.
      const viaApi = await fetch(`${tg.url}/admin/keys`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${adminToken(tg.gateway.config)}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ client: 'api-made', type: 'solo' }),
      });
      const apiKey = ((await viaApi.json()) as { key: string }).key;
      sentinels.push(apiKey);
      expect(await (await browser.post('/keys', '/keys/test', { key: apiKey })).text()).toContain(
        'The key works',
      );

      const appSecret = `app-secret-${randomBytes(12).toString('hex')}`;
      sentinels.push(appSecret);
      const saved = await browser.post('/oauth-apps', '/oauth-apps', {
        provider: 'acme',
        client_id: 'operator-app',
        client_secret: appSecret,
      });
      expect(saved.status).toBe(303);
      expect(await browser.get('/oauth-apps')).not.toContain(appSecret);

      // The key's identity provider: a refused form gives back what was typed but the secret; a
      // saved one shows it nowhere.
      const idpSecret = `idp-secret-${randomBytes(12).toString('hex')}`;
      sentinels.push(idpSecret);
      const idpPage = `/keys/${keyId}/identity-provider`;
      const idpForm = {
        name: 'acme',
        issuer: 'https://login.acme.test',
        client_id: 'gw',
        client_secret: idpSecret,
      };
      const refused = await browser.post(idpPage, idpPage, { ...idpForm, issuer: 'ftp://login.acme.test' });
      expect(refused.status).toBe(400);
      const refusedPage = await refused.text();
      expect(refusedPage).toContain('must be https://');
      expect(refusedPage).not.toContain(idpSecret);
      expect((await browser.post(idpPage, idpPage, idpForm)).status).toBe(303);
      const idpShown = await browser.get(idpPage);
      expect(idpShown).toContain('login.acme.test');
      expect(idpShown).not.toContain(idpSecret);

      expect((await browser.post(`/keys/${keyId}/revoke`, `/keys/${keyId}/revoke`, {})).status).toBe(303);
      // The Activity page shows the audit trail of all that, and none of its secrets.
      await tg.gateway.audit.flush();
      const activity = await browser.get('/activity');
      expect(activity).toContain('<h1>Activity</h1>');
      for (const secret of sentinels)
        expect(activity.includes(secret), 'secret on the Activity page').toBe(false);

      // The CLI sets a new password on the same data dir; the running server takes it at once.
      const next = `next-${randomBytes(12).toString('hex')}`;
      sentinels.push(next);
      const set = await runToolgate(['admin', 'set-password'], {
        TOOLGATE_DATA_DIR: tg.dataDir,
        TOOLGATE_ADMIN_PASSWORD: next,
      });
      expect(set.code).toBe(0);
      expect(set.stdout + set.stderr).not.toContain(next);
      const again = dashboardClient(tg);
      expect((await again.post('/sign-in', '/sign-in', { password: first.adminPassword! })).status).toBe(401);
      expect((await again.post('/sign-in', '/sign-in', { password: next })).status).toBe(303);
      sentinels.push(again.cookies.get('toolgate_dashboard')!);
    } finally {
      await tg.gateway.close();
    }
    const logText = tg.logs.join('');
    expect(logText).toContain('/dashboard/sign-in');
    const files = dataFiles(tg.dataDir);
    expect(files.map((f) => f.name)).toContain('toolgate.db');
    for (const secret of sentinels) {
      expect(secret.length).toBeGreaterThan(11);
      expect(logText.includes(secret), 'secret found in logs').toBe(false);
      for (const file of files)
        expect(file.bytes.includes(secret), `secret found in ${file.name}`).toBe(false);
    }
    await tg.close();
  });
});
