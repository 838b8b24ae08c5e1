/**
 * `toolgate idp set|list|remove` and the admin API's identity-provider routes (issue 14) on the data
 * dir of a running gateway: everything checked before anything is stored, the secret never shown.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken } from '../../../core/http/admin.js';
import { runToolgate } from '../../helpers/cli.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';

const SECRET = 'idp-cli-secret-5d1e8b';
let tg: TestGateway;
let env: Record<string, string>;
let keys: Record<'solo' | 'client' | 'platform', string>;

beforeAll(async () => {
  tg = await startGateway();
  env = { TOOLGATE_DATA_DIR: tg.dataDir, TOOLGATE_LOG_LEVEL: 'silent', IDP_SECRET: SECRET };
  keys = {
    solo: (await tg.key('solo', 'solo-co')).id,
    client: (await tg.key('client', 'client-co')).id,
    platform: (await tg.key('platform', 'platform-co')).id,
  };
});
afterAll(async () => {
  await tg?.close();
});

const set = (key: string, ...more: string[]) =>
  runToolgate(
    [
      'idp',
      'set',
      '--key',
      key,
      '--issuer',
      'https://login.acme.test',
      '--client-id',
      'gw',
      '--client-secret-env',
      'IDP_SECRET',
      ...more,
    ],
    env,
  );

describe('toolgate idp', () => {
  it('sets, lists and removes a key’s identity provider; refuses what cannot work, storing nothing', async () => {
    const solo = await set(keys.solo, '--name', 'solo');
    expect(solo.code).toBe(1);
    expect(solo.stderr).toContain('is a solo key');
    const noSecret = await runToolgate(
      [
        'idp',
        'set',
        '--key',
        keys.client,
        '--name',
        'acme',
        '--issuer',
        'https://x.test',
        '--client-id',
        'gw',
      ],
      env,
    );
    expect(noSecret.code).toBe(2);
    expect(noSecret.stderr).toContain('--client-secret-file FILE or --client-secret-env VAR');
    expect((await runToolgate(['idp', 'list'], env)).stdout).toBe('No identity providers.\n');

    const stored = await set(
      keys.client,
      '--name',
      'acme',
      '--user-claim',
      'email',
      '--display-name',
      'Acme',
    );
    expect(stored.stderr).toBe('');
    expect(stored.stdout).toContain('/signin/idp/callback as its redirect URI; people type “acme”');
    const file = join(tg.dataDir, 'idp-secret.txt');
    writeFileSync(file, `${SECRET}\n`);
    const platform = await runToolgate(
      [
        'idp',
        'set',
        '--key',
        keys.platform,
        '--name',
        'platform-co',
        '--issuer',
        'https://login.platform.test/tenant/',
        '--client-id',
        'gw2',
        '--client-secret-file',
        file,
        '--org-claim',
        'org_id',
      ],
      env,
    );
    expect(platform.code, platform.stderr).toBe(0);
    const taken = await set(keys.platform, '--name', 'acme');
    expect(taken.stderr).toContain('The sign-in name “acme” is taken');

    const list = await runToolgate(['idp', 'list'], env);
    expect(list.stdout).toBe(
      `acme\tkey=${keys.client}\tclient=client-co\tissuer=https://login.acme.test\tclient_id=gw\tuser_id=email\tdisplay_name=Acme\n` +
        `platform-co\tkey=${keys.platform}\tclient=platform-co\tissuer=https://login.platform.test/tenant/\tclient_id=gw2\tuser_id=sub\torg_id=org_id\tdisplay_name=platform-co\n`,
    );
    expect((await runToolgate(['idp', 'remove', 'acme'], env)).stdout).toContain('Removed acme');
    expect((await runToolgate(['idp', 'remove', 'acme'], env)).stderr).toContain(
      'No identity provider signs in as “acme”',
    );
    for (const run of [stored, list, platform]) expect(run.stdout + run.stderr).not.toContain(SECRET);
  }, 240_000);

  it('answers the same through the admin API, never with the secret', async () => {
    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${tg.url}/admin${path}`, {
        method,
        headers: {
          authorization: `Bearer ${adminToken(tg.gateway.config)}`,
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      return { status: response.status, text: await response.text() };
    };
    const input = {
      name: 'api-co',
      issuer: 'https://login.api.test',
      client_id: 'gw',
      client_secret: SECRET,
    };
    for (const [bad, message] of [
      [{ issuer: 'nope' }, 'The issuer is a URL'],
      [{ name: 'Not a slug!' }, 'lowercase letters, digits and -'],
      [{ org_claim: 'org' }, 'An org_id claim needs a platform key'],
    ] as const) {
      const refused = await call('PUT', `/keys/${keys.client}/identity-provider`, { ...input, ...bad });
      expect(refused.status).toBe(400);
      expect(refused.text).toContain('TG_ERR_INVALID_INPUT');
      expect(refused.text).toContain(message);
    }
    const put = await call('PUT', `/keys/${keys.client}/identity-provider`, input);
    expect(put.status).toBe(200);
    expect(JSON.parse(put.text)).toMatchObject({ keyId: keys.client, name: 'api-co', userClaim: 'sub' });
    // The secret may be left out while issuer and client id stay.
    const kept = await call('PUT', `/keys/${keys.client}/identity-provider`, {
      ...input,
      client_secret: '',
      display_name: 'API',
    });
    expect(JSON.parse(kept.text)).toMatchObject({ displayName: 'API' });
    const moved = await call('PUT', `/keys/${keys.client}/identity-provider`, {
      ...input,
      client_id: 'other',
      client_secret: '',
    });
    expect(moved.text).toContain('Enter the client secret');
    const list = await call('GET', '/identity-providers');
    expect(list.text).toContain('api-co');
    expect(await call('DELETE', '/identity-providers/api-co')).toMatchObject({ status: 200 });
    expect(await call('DELETE', '/identity-providers/api-co')).toMatchObject({ status: 404 });
    for (const answer of [put, kept, list]) expect(answer.text).not.toContain(SECRET);
  });
});
