import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openBrowser } from '../../helpers/browser.js';
import { eventually } from '../../helpers/eventually.js';
import { startCluster, type Cluster } from '../../helpers/cluster.js';
import { connect, type TestClient } from '../../helpers/clients.js';
import { approveConsent, startAuthServer, type AuthServer } from '../../helpers/oauth-server.js';
import { freePort } from '../../helpers/ports.js';
import { requirePostgres } from '../../helpers/postgres.js';
import { requireRedis } from '../../helpers/redis.js';
import { expectToolOk } from '../../helpers/results.js';

const FILE = 'test/integration/cluster/oauth.test.ts';
/** An OAuth2 provider (authorization code + PKCE, refresh tokens) with one tool, GET /me. */
const ACME = fileURLToPath(new URL('../../fixtures/catalog/oauth2/acme.yaml', import.meta.url));
const CALLS = 100;
/** Access-token lifetime, in seconds, of the rounds where the token runs out by the clock. */
const SHORT_TTL = 5;

// Three `toolgate serve` processes on one PostgreSQL database and one Redis, behind a plain
// round-robin balancer, connected to a real OAuth 2 authorization server (oidc-provider) that
// rotates refresh tokens and revokes the whole grant when a rotated-away one is used again. A token
// refresh that two processes both sent would end the connection: the refresh must be one, across
// processes (README.md, Scaling out: the refresh lock).
await requirePostgres(import.meta.url);
await requireRedis(FILE);

let auth: AuthServer;
let cluster: Cluster;
let browser: Awaited<ReturnType<typeof openBrowser>>;
let alice: TestClient;

beforeAll(async () => {
  // The balancer's URL is every process's base URL, so the OAuth app's redirect URI is known first.
  const balancerPort = await freePort();
  auth = await startAuthServer({
    clients: [
      {
        client_id: 'toolgate-cluster',
        client_secret: 'cluster-secret',
        redirect_uris: [`http://127.0.0.1:${balancerPort}/oauth/callback`],
      },
    ],
    // Tokens outlive the test until a round ends them (or shortens their lifetime).
    accessTokenTtlSeconds: 300,
  });
  cluster = await startCluster(3, undefined, {
    manifestFiles: [ACME],
    balancerPort,
    env: {
      TOOLGATE_PROVIDER_ACME_AUTHORIZATION_URL: auth.authorizationUrl,
      TOOLGATE_PROVIDER_ACME_TOKEN_URL: auth.tokenUrl,
      TOOLGATE_PROVIDER_ACME_BASE_URL: auth.resourceUrl,
      TOOLGATE_PROVIDER_ACME_CLIENT_ID: 'toolgate-cluster',
      TOOLGATE_PROVIDER_ACME_CLIENT_SECRET: 'cluster-secret',
      // Refreshes happen at call time, where the test counts them; the scheduler stays out.
      TOOLGATE_REFRESH_MARGIN_MS: '0',
      TOOLGATE_REFRESH_SWEEP_MS: '3600000',
    },
  });
  const created = await cluster.cli(['keys', 'create', '--client', 'acme-agents', '--type', 'client']);
  expect(created.code, created.stderr).toBe(0);
  const key = /^(toolgate_\w+)$/m.exec(created.stdout)![1]!;
  alice = await connect('2026-07-28', new URL(`${cluster.balancer.url}/mcp/?user_id=alice`), {
    'x-api-key': key,
  });
  // Fails (never skips) without Chromium: openBrowser throws.
  browser = await openBrowser();
}, 120_000);

afterAll(async () => {
  await alice?.close().catch(() => {});
  await browser?.close();
  await cluster?.close();
  await auth?.close();
});

/** What every process wrote so far, together. */
const output = (): string => cluster.processes.map((p) => p.output()).join('\n');

/**
 * One round: 100 concurrent calls of the provider's tool through the balancer, once the access
 * token has expired. Every call succeeds with the account's data, all three processes answered,
 * the authorization server saw exactly one token request (a refresh, answered 200: no process sent
 * the rotated-away refresh token again, which would be invalid_grant and the grant revoked), and
 * every call was then answered with the one new token.
 */
async function expiredRound(): Promise<void> {
  const tokens = auth.tokenRequests().length;
  const resources = auth.resourceRequests().length;
  const served = cluster.balancer.served.length;

  const started = Date.now();
  const results = await Promise.all(Array.from({ length: CALLS }, () => alice.callTool('acme_me')));
  const took = Date.now() - started;

  for (const result of results) expectToolOk(result, 'alice@example.test');
  const answeredBy = cluster.balancer.served
    .slice(served)
    .filter((s) => s.method === 'POST')
    .map((s) => s.backend);
  expect(answeredBy).toHaveLength(CALLS);
  expect(new Set(answeredBy)).toEqual(new Set(cluster.processes.map((p) => p.url)));
  const sent = auth.tokenRequests().slice(tokens);
  expect(
    sent.map((r) => ({ grant: r.grant_type, status: r.status, error: r.error })),
    `token requests at ${sent.map((r) => r.at - started).join(', ')} ms of a round of ${took} ms`,
  ).toEqual([{ grant: 'refresh_token', status: 200, error: undefined }]);
  const accepted = auth
    .resourceRequests()
    .slice(resources)
    .filter((r) => r.status === 200);
  expect(accepted).toHaveLength(CALLS);
  expect(new Set(accepted.map((r) => r.authorization)).size).toBe(1);
}

/** The grant is intact: a further call works, without a new consent and without a refused refresh. */
async function expectGrantIntact(authorizations: number): Promise<void> {
  expectToolOk(await alice.callTool('acme_me'), 'alice@example.test');
  expect(auth.authorizationRequests()).toHaveLength(authorizations);
  expect(auth.tokenRequests().filter((r) => r.status !== 200)).toEqual([]);
  expect(auth.revocationRequests()).toEqual([]);
  expect(output()).not.toContain('TG_CONNECTION_REAPPROVAL_NEEDED');
  expect(output()).not.toContain('TG_OAUTH_REFRESH_LOCK_LOST');
}

describe('an OAuth2 connection used by three processes at once', () => {
  let authorizations: number;

  it('connects once through the consent page in the browser, whichever process serves each step', async () => {
    const started = await alice.callTool('connect_provider', { provider: 'acme' });
    const link = /http:\/\/\S+\/oauth\/start\/[\w-]+/.exec(expectToolOk(started))?.[0];
    expect(link, 'a consent link').toBeDefined();
    expect(link!.startsWith(`${cluster.balancer.url}/oauth/start/`)).toBe(true);
    await approveConsent(browser.page, link!, { login: 'alice' });
    expect(await browser.page.locator('main').innerText()).toContain('Acme Cloud is connected');
    expect(auth.tokenRequests().map((r) => [r.grant_type, r.status])).toEqual([['authorization_code', 200]]);
    expectToolOk(await alice.callTool('acme_me'), 'alice@example.test');
    authorizations = auth.authorizationRequests().length;
  });

  // Tokens that live less than two of the gateway's one-minute call margins: before the margin
  // became half a token's lifetime for them, every call refreshed, and every process that had
  // waited on a refresh refreshed once more (4 to 10 token requests a round).
  describe(`when the token ran out by the clock (${SHORT_TTL} s tokens)`, () => {
    beforeAll(async () => {
      // From now on tokens live SHORT_TTL seconds; the one consent gave lives long: end it, and
      // let one call refresh it into a short one.
      auth.setAccessTokenTtl(SHORT_TTL);
      auth.expireAccessTokens();
      expectToolOk(await alice.callTool('acme_me'), 'alice@example.test');
    });

    it.each([1, 2, 3, 4, 5])(
      'round %i: 100 concurrent calls over the three processes refresh it once and keep the grant',
      async () => {
        // Expiry is a moment, not an event: ask the provider until it refuses the current token.
        const current = auth.resourceRequests().at(-1)!.authorization!;
        await eventually(
          async () =>
            (await fetch(`${auth.resourceUrl}/me`, { headers: { authorization: current } })).status === 401,
          (SHORT_TTL + 2) * 1_000,
        );
        await expiredRound();
        await expectGrantIntact(authorizations);
      },
    );
  });

  describe('when the provider ended the token before its time (401)', () => {
    beforeAll(() => auth.setAccessTokenTtl(300));

    it.each([1, 2, 3, 4, 5])(
      'round %i: 100 concurrent calls over the three processes refresh it once and keep the grant',
      async () => {
        // The provider ends every access token now (refresh tokens stay valid): the gateway may
        // still take the token for valid, and learns otherwise from the provider's 401.
        expect(auth.expireAccessTokens()).toBeGreaterThan(0);
        await expiredRound();
        await expectGrantIntact(authorizations);
      },
    );
  });
});
