import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Scope } from '../../core/domain.js';
import { adminToken } from '../../core/http/admin.js';
import { startGateway, type TestGateway } from './gateway.js';
import { jsonAnswer, startReceiver, type Receiver } from './receiver.js';

/**
 * An OAuth2 provider (`acme`) for tests: `acme_me` reads the account at GET /me, `acme_outage`
 * calls GET /outage (which the observability tests' stand-in fails with 503).
 */
export const ACME_MANIFEST = `schema_version: 1
id: acme
display_name: Acme Cloud
description: An OAuth2 provider for tests.
auth:
  kind: oauth2
  authorization_url: https://auth.acme.example/authorize
  token_url: https://auth.acme.example/token
  scopes: { default: [read] }
api:
  base_url: https://api.acme.example
tools:
  - name: acme_me
    description: The connected account.
    input_schema: { type: object, properties: {} }
    request: { method: GET, path: /me }
  - name: acme_outage
    description: A call the provider fails.
    input_schema: { type: object, properties: {} }
    request: { method: GET, path: /outage }
categories:
  - { id: account, title: Account, tools: [acme_me, acme_outage] }
`;

export interface ObservedGateway {
  tg: TestGateway;
  /** The loopback Acme API, with every request it received (headers included). */
  api: Receiver;
  /** The loopback token endpoint. */
  tokens: Receiver;
  /** The admin token, for GET /metrics on the main port. */
  adminToken: string;
  /**
   * Stores an Acme connection for `userId` of `client`'s key whose token has expired, so the next
   * call refreshes it first; `refresh-bad` as its refresh token makes that refresh fail for good.
   */
  connectExpired(clientId: string, userId: string, refreshToken?: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * A gateway serving the Acme provider against loopback stand-ins of its API (GET /me answers, the
 * rest 503) and token endpoint (refresh tokens named `refresh-bad` refused for good: invalid_grant).
 */
export async function startObserved(env: Record<string, string> = {}): Promise<ObservedGateway> {
  const api = await startReceiver((req) =>
    req.url === '/me'
      ? jsonAnswer(200, { email: 'owner@acme.example' })
      : jsonAnswer(503, { message: 'down' }),
  );
  const tokens = await startReceiver((req) =>
    req.body.includes('refresh-bad')
      ? jsonAnswer(400, { error: 'invalid_grant' })
      : jsonAnswer(200, {
          access_token: 'access-2',
          refresh_token: 'refresh-2',
          token_type: 'Bearer',
          expires_in: 3600,
        }),
  );
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-observed-'));
  const manifest = join(dir, 'acme.yaml');
  writeFileSync(manifest, ACME_MANIFEST);
  const tg = await startGateway(
    {
      TOOLGATE_ALLOW_PRIVATE_NETWORK: '1',
      TOOLGATE_PROVIDER_ACME_BASE_URL: api.url,
      TOOLGATE_PROVIDER_ACME_TOKEN_URL: `${tokens.url}/token`,
      TOOLGATE_PROVIDER_ACME_CLIENT_ID: 'toolgate',
      TOOLGATE_PROVIDER_ACME_CLIENT_SECRET: 'acme-client-secret',
      ...env,
    },
    { manifestFiles: [manifest] },
  );
  rmSync(dir, { recursive: true, force: true });
  return {
    tg,
    api,
    tokens,
    adminToken: adminToken(tg.gateway.config),
    async connectExpired(clientId, userId, refreshToken = 'refresh-1') {
      const scope: Scope = { clientId, orgId: null, userId };
      await tg.gateway.connections.store(
        scope,
        'acme',
        { credentials: { access_token: 'access-1', refresh_token: refreshToken }, fields: {} },
        null,
        { oauthApp: 'env:acme', expiresAt: new Date(Date.now() - 1_000).toISOString() },
      );
    },
    async close() {
      await tg.close();
      await api.close();
      await tokens.close();
    },
  };
}

/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the Prometheus text format (the samples; comments skipped). */
export function samples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g))
      labels[name!] = value!.replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c));
    out.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return out;
}

/** The value of the sample `name` whose labels include `labels`, summed over the rest; 0 when none. */
export function valueOf(text: string, name: string, labels: Record<string, string> = {}): number {
  return samples(text)
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}
