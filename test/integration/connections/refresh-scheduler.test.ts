import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../core/config.js';
import { Gateway } from '../../../core/gateway.js';
import { ACME_MANIFEST } from '../../helpers/observed.js';
import { startReceiver, type Received } from '../../helpers/receiver.js';
import type { Scope } from '../../../core/domain.js';

let dataDir: string;
let tokenEndpoint: Awaited<ReturnType<typeof startReceiver>>;

function env(extra: Record<string, string>): Record<string, string> {
  return {
    TOOLGATE_DATA_DIR: dataDir,
    TOOLGATE_MANIFESTS_DIR: join(dataDir, 'manifests'),
    TOOLGATE_PORT: '0',
    TOOLGATE_LOG_LEVEL: 'warn',
    TOOLGATE_PROVIDER_ACME_TOKEN_URL: `${tokenEndpoint.url}/token`,
    TOOLGATE_PROVIDER_ACME_CLIENT_ID: 'toolgate',
    TOOLGATE_PROVIDER_ACME_CLIENT_SECRET: 'secret',
    ...extra,
  };
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'toolgate-scheduler-'));
  const manifests = join(dataDir, 'manifests');
  mkdirSync(manifests);
  writeFileSync(join(manifests, 'acme.yaml'), ACME_MANIFEST);
  tokenEndpoint = await startReceiver(() => ({
    status: 200,
    body: JSON.stringify({
      access_token: 'access-2',
      refresh_token: 'refresh-2',
      token_type: 'Bearer',
      expires_in: 3600,
    }),
    headers: { 'content-type': 'application/json' },
  }));
});
afterAll(async () => {
  await tokenEndpoint.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('the refresh scheduler', () => {
  it('refreshes a token about to expire ahead of any call, also after a restart (the expiry is in the store)', async () => {
    // First run: a connection whose token expires in 30 seconds, with the scheduler's margin at zero.
    const first = await Gateway.create({ config: loadConfig(env({ TOOLGATE_REFRESH_MARGIN_MS: '0' })) });
    const { record } = await first.keys.create('acme-co', 'client');
    const scope: Scope = { clientId: record.clientId, orgId: null, userId: 'u1' };
    await first.connections.store(
      scope,
      'acme',
      { credentials: { access_token: 'access-1', refresh_token: 'refresh-1' }, fields: {} },
      null,
      {
        oauthApp: 'env:acme',
        expiresAt: new Date(Date.now() + 30_000).toISOString(),
      },
    );
    await first.close();
    expect(tokenEndpoint.received).toEqual([]);

    // Second run, with a five-minute margin: the scheduler refreshes at start, before any call.
    const second = await Gateway.create({
      config: loadConfig(env({ TOOLGATE_REFRESH_MARGIN_MS: '300000' })),
    });
    try {
      const refreshed = new Promise<void>((resolve) =>
        second.coordination.bus.subscribe('connection.refreshed', () => resolve()),
      );
      await second.listen();
      const request: Received = await tokenEndpoint.next();
      expect(request.method).toBe('POST');
      expect(new URLSearchParams(request.body).get('grant_type')).toBe('refresh_token');
      expect(new URLSearchParams(request.body).get('refresh_token')).toBe('refresh-1');
      expect(request.headers.authorization).toBe(
        `Basic ${Buffer.from('toolgate:secret').toString('base64')}`,
      );
      // The rotated refresh token and the new expiry are stored.
      await refreshed;
      const found = await second.connections.access(scope, 'acme');
      expect(found!.access.credentials).toEqual({ access_token: 'access-2', refresh_token: 'refresh-2' });
      expect(Date.parse(found!.record.expiresAt!)).toBeGreaterThan(Date.now() + 3_000_000);
    } finally {
      await second.close();
    }
  });
});
