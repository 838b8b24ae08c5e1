/**
 * Developer tools added to the catalog for issue 17 (Bitbucket, Vercel, Netlify, LaunchDarkly,
 * DigitalOcean), one gateway for all five: each connects (its credential check asserted), makes one read and one
 * write with the exact request its real API expects, and passes on one error in its real shape.
 */
import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, useProvidersHarness, type Answer } from './helpers.js';

const BITBUCKET_TOKEN = 'bb-oauth-7Qm2xVtR9pLk4sN8wZc1';
const VERCEL_TOKEN = 'vc_3kT9mQ2xW7pL5sN8rV4zB6yH';
const NETLIFY_TOKEN = 'nfp_Yx4R8mK2qW9tL3vN7pS5zC1b';
const LD_TOKEN = 'api-6f1c2b7e-93d4-4a8e-b5f0-2c7d9e1a3b48';

/** Bitbucket Cloud: bearer token; errors as {type: "error", error: {message}}. */
function bitbucket(req: Received): Answer {
  const failure = (status: number, message: string) =>
    jsonAnswer(status, { type: 'error', error: { message } });
  if (req.headers.authorization !== `Bearer ${BITBUCKET_TOKEN}`) return failure(401, 'Access token expired.');
  switch (`${req.method} ${req.url}`) {
    case 'GET /2.0/repositories/acme/web/pullrequests?state=OPEN':
      return jsonAnswer(200, {
        pagelen: 10,
        size: 1,
        page: 1,
        values: [
          {
            type: 'pullrequest',
            id: 42,
            title: 'Fix checkout rounding',
            state: 'OPEN',
            source: { branch: { name: 'fix/rounding' } },
            destination: { branch: { name: 'main' } },
          },
        ],
      });
    case 'POST /2.0/repositories/acme/web/pullrequests':
      return jsonAnswer(201, { type: 'pullrequest', id: 43, title: 'Add dark mode', state: 'OPEN' });
    case 'POST /2.0/repositories/acme/web/pullrequests/999/comments':
      return failure(404, 'No PullRequest matches the given query.');
    default:
      return failure(404, `Unexpected ${req.method} ${req.url}`);
  }
}

/** Vercel: bearer token; errors as {error: {code, message}}. */
function vercel(req: Received): Answer {
  const failure = (status: number, code: string, message: string) =>
    jsonAnswer(status, { error: { code, message } });
  if (req.headers.authorization !== `Bearer ${VERCEL_TOKEN}`)
    return failure(403, 'forbidden', 'Not authorized');
  switch (`${req.method} ${req.url}`) {
    case 'GET /v2/user':
      return jsonAnswer(200, { user: { id: 'usr_1', email: 'ada@acme.test', username: 'ada' } });
    case 'GET /v6/deployments?limit=5&projectId=prj_web&state=ERROR':
      return jsonAnswer(200, {
        deployments: [{ uid: 'dpl_9x', name: 'web', url: 'web-9x.vercel.app', state: 'ERROR' }],
        pagination: { count: 1, next: null, prev: null },
      });
    case 'POST /v10/projects/web/env?teamId=team_acme':
      return jsonAnswer(201, {
        created: { key: 'API_URL', type: 'encrypted', target: ['production'], id: 'env_1' },
      });
    case 'PATCH /v12/deployments/dpl_9x/cancel':
      return failure(
        400,
        'deployment_not_cancelable',
        'The deployment is not building and cannot be canceled.',
      );
    default:
      return failure(404, 'not_found', `Unexpected ${req.method} ${req.url}`);
  }
}

/** Netlify: bearer token; errors as {code, message}. */
function netlify(req: Received): Answer {
  const failure = (status: number, message: string) => jsonAnswer(status, { code: status, message });
  if (req.headers.authorization !== `Bearer ${NETLIFY_TOKEN}`) return failure(401, 'Access Denied');
  switch (`${req.method} ${req.url}`) {
    case 'GET /api/v1/user':
      return jsonAnswer(200, { id: 'u1', email: 'ops@acme.test', full_name: 'Ops' });
    case 'GET /api/v1/sites/site-7/deploys?production=true&per_page=3':
      return jsonAnswer(200, [
        {
          id: 'dep-1',
          site_id: 'site-7',
          state: 'ready',
          branch: 'main',
          deploy_url: 'https://dep-1--acme.netlify.app',
        },
      ]);
    case 'POST /api/v1/sites/site-7/builds':
      return jsonAnswer(200, { id: 'build-5', deploy_id: 'dep-2', done: false, sha: null });
    case 'POST /api/v1/deploys/dep-1/cancel':
      return failure(422, 'Deploy is already ready and cannot be cancelled');
    default:
      return failure(404, 'Not Found');
  }
}

/** LaunchDarkly: the token itself in Authorization; errors as {code, message}. */
function launchdarkly(req: Received): Answer {
  const failure = (status: number, code: string, message: string) => jsonAnswer(status, { code, message });
  if (req.headers.authorization !== LD_TOKEN) return failure(401, 'unauthorized', 'Invalid access token');
  switch (`${req.method} ${req.url}`) {
    case 'GET /api/v2/members/me':
      return jsonAnswer(200, { _id: 'm1', email: 'flags@acme.test', role: 'writer' });
    case 'GET /api/v2/flags/web/new-checkout?env=production':
      return jsonAnswer(200, {
        key: 'new-checkout',
        name: 'New checkout',
        kind: 'boolean',
        environments: { production: { on: false, _version: 7 } },
      });
    case 'PATCH /api/v2/flags/web/new-checkout':
      return jsonAnswer(200, { key: 'new-checkout', environments: { production: { on: true } } });
    case 'POST /api/v2/flags/web':
      return failure(409, 'conflict', 'A flag with key new-checkout already exists');
    default:
      return failure(404, 'not_found', 'Unknown resource');
  }
}

const DO_TOKEN = `dop_v1_${'4f'.repeat(32)}`;

/** DigitalOcean: bearer token; errors as {id, message}. */
function digitalocean(req: Received): Answer {
  const failure = (status: number, id: string, message: string) => jsonAnswer(status, { id, message });
  if (req.headers.authorization !== `Bearer ${DO_TOKEN}`)
    return failure(401, 'unauthorized', 'Unable to authenticate you.');
  switch (`${req.method} ${req.url}`) {
    case 'GET /v2/account':
      return jsonAnswer(200, { account: { email: 'infra@acme.test', droplet_limit: 25, status: 'active' } });
    case 'GET /v2/droplets?per_page=20&tag_name=web':
      return jsonAnswer(200, {
        droplets: [{ id: 3164444, name: 'web-01', status: 'active', size_slug: 's-1vcpu-1gb' }],
        links: {},
        meta: { total: 1 },
      });
    case 'POST /v2/droplets/3164444/actions':
      return jsonAnswer(201, { action: { id: 36804636, status: 'in-progress', type: 'reboot' } });
    case 'POST /v2/domains/example.com/records':
      return failure(422, 'unprocessable_entity', 'Data needs to end with a dot (.)');
    default:
      return failure(404, 'not_found', 'The resource you were accessing could not be found.');
  }
}

const p = useProvidersHarness([
  { provider: 'bitbucket', auth: 'oauth', accessToken: BITBUCKET_TOKEN, basePath: '/2.0', answer: bitbucket },
  { provider: 'vercel', auth: 'connect', answer: vercel },
  { provider: 'netlify', auth: 'connect', basePath: '/api/v1', answer: netlify },
  { provider: 'launchdarkly', auth: 'connect', basePath: '/api/v2', answer: launchdarkly },
  { provider: 'digitalocean', auth: 'connect', answer: digitalocean },
]);

describe('Bitbucket through /mcp/ (seeded OAuth connection)', () => {
  it('lists open pull requests with state as a query parameter and the bearer token', async () => {
    await p.bitbucket.expectCall({
      tool: 'bitbucket_list_pull_requests',
      args: { workspace: 'acme', repo_slug: 'web', state: 'OPEN' },
      ok: 'Fix checkout rounding',
      sent: {
        method: 'GET',
        url: '/2.0/repositories/acme/web/pullrequests?state=OPEN',
        headers: { authorization: `Bearer ${BITBUCKET_TOKEN}` },
      },
    });
  });

  it('opens a pull request from a branch', async () => {
    const pr = {
      title: 'Add dark mode',
      source: { branch: { name: 'feat/dark' } },
      close_source_branch: true,
    };
    await p.bitbucket.expectCall({
      tool: 'bitbucket_create_pull_request',
      args: { workspace: 'acme', repo_slug: 'web', ...pr },
      ok: 'Add dark mode',
      sent: { method: 'POST', url: '/2.0/repositories/acme/web/pullrequests', json: pr },
    });
  });

  it("passes Bitbucket's own message on for a pull request that does not exist", async () => {
    const comment = { content: { raw: 'LGTM' } };
    await p.bitbucket.expectCall({
      tool: 'bitbucket_comment_on_pull_request',
      args: { workspace: 'acme', repo_slug: 'web', pull_request_id: 999, ...comment },
      error: /bitbucket returned HTTP 404 Not Found: No PullRequest matches the given query\./,
      sent: { method: 'POST', url: '/2.0/repositories/acme/web/pullrequests/999/comments', json: comment },
    });
  });
});

describe('Vercel through /mcp/', () => {
  it('refuses a token Vercel rejects, then connects as the user GET /v2/user names', async () => {
    const wrong = await p.vercel.connectProvider({ api_key: 'vc_wrong' });
    expect(wrong.text).toMatch(/Vercel refused the credential \(HTTP 403: Not authorized\)/);
    const connected = await p.vercel.connectProvider({ api_key: VERCEL_TOKEN });
    expect(connected.text).toContain('Connected Vercel as ada');
    p.vercel.expectSent(
      { method: 'GET', url: '/v2/user', headers: { authorization: 'Bearer vc_wrong' } },
      { method: 'GET', url: '/v2/user', headers: { authorization: `Bearer ${VERCEL_TOKEN}` } },
      { method: 'GET', url: '/v2/user' },
    );
  });

  it("lists a project's failed deployments", async () => {
    await p.vercel.expectCall({
      tool: 'vercel_list_deployments',
      args: { projectId: 'prj_web', state: 'ERROR', limit: 5 },
      ok: 'web-9x.vercel.app',
      sent: { method: 'GET', url: '/v6/deployments?limit=5&projectId=prj_web&state=ERROR' },
    });
  });

  it("adds an encrypted environment variable to a team's project", async () => {
    const variable = {
      key: 'API_URL',
      value: 'https://api.acme.test',
      type: 'encrypted',
      target: ['production'],
    };
    await p.vercel.expectCall({
      tool: 'vercel_create_environment_variables',
      args: { idOrName: 'web', teamId: 'team_acme', ...variable },
      ok: 'env_1',
      sent: {
        method: 'POST',
        url: '/v10/projects/web/env?teamId=team_acme',
        headers: { authorization: `Bearer ${VERCEL_TOKEN}`, 'content-type': 'application/json' },
        json: variable,
      },
    });
  });

  it("passes Vercel's {error: {message}} on when a deployment cannot be canceled", async () => {
    await p.vercel.expectCall({
      tool: 'vercel_cancel_deployment',
      args: { id: 'dpl_9x' },
      error: /vercel returned HTTP 400 Bad Request: The deployment is not building and cannot be canceled\./,
      sent: { method: 'PATCH', url: '/v12/deployments/dpl_9x/cancel' },
    });
  });
});

describe('Netlify through /mcp/', () => {
  it('connects after GET /user and names the account by its email', async () => {
    const connected = await p.netlify.connectProvider({ api_key: NETLIFY_TOKEN });
    expect(connected.text).toContain('Connected Netlify as ops@acme.test');
    p.netlify.expectSent(
      { method: 'GET', url: '/api/v1/user', headers: { authorization: `Bearer ${NETLIFY_TOKEN}` } },
      { method: 'GET', url: '/api/v1/user' },
    );
  });

  it("lists a site's production deploys and starts a build", async () => {
    await p.netlify.expectCall({
      tool: 'netlify_list_deploys',
      args: { site_id: 'site-7', production: true, per_page: 3 },
      ok: 'https://dep-1--acme.netlify.app',
      sent: { method: 'GET', url: '/api/v1/sites/site-7/deploys?production=true&per_page=3' },
    });
    await p.netlify.expectCall({
      tool: 'netlify_start_build',
      args: { site_id: 'site-7' },
      ok: 'build-5',
      sent: {
        method: 'POST',
        url: '/api/v1/sites/site-7/builds',
        headers: { authorization: `Bearer ${NETLIFY_TOKEN}` },
      },
    });
  });

  it("passes Netlify's message on when a deploy cannot be cancelled", async () => {
    await p.netlify.expectCall({
      tool: 'netlify_cancel_deploy',
      args: { deploy_id: 'dep-1' },
      error:
        /netlify returned HTTP 422 Unprocessable Entity: Deploy is already ready and cannot be cancelled/,
      sent: { method: 'POST', url: '/api/v1/deploys/dep-1/cancel' },
    });
  });
});

describe('LaunchDarkly through /mcp/', () => {
  it('refuses a token that is not an API access token before calling LaunchDarkly', async () => {
    const wrong = await p.launchdarkly.connectProvider({ api_key: 'sdk-6f1c2b7e' });
    expect(wrong.isError).toBe(true);
    expect(wrong.text).toContain('credentials.api_key');
    p.launchdarkly.expectSent();
  });

  it('connects with the token itself in Authorization (no scheme) and names the member', async () => {
    const connected = await p.launchdarkly.connectProvider({ api_key: LD_TOKEN });
    expect(connected.text).toContain('Connected LaunchDarkly as flags@acme.test');
    p.launchdarkly.expectSent(
      { method: 'GET', url: '/api/v2/members/me', headers: { authorization: LD_TOKEN } },
      { method: 'GET', url: '/api/v2/members/me' },
    );
  });

  it('reads a flag in one environment and turns it on with a JSON Patch', async () => {
    await p.launchdarkly.expectCall({
      tool: 'launchdarkly_get_flag',
      args: { projectKey: 'web', featureFlagKey: 'new-checkout', env: ['production'] },
      ok: '_version',
      sent: { method: 'GET', url: '/api/v2/flags/web/new-checkout?env=production' },
    });
    const patch = {
      comment: 'Launch',
      patch: [{ op: 'replace', path: '/environments/production/on', value: true }],
    };
    await p.launchdarkly.expectCall({
      tool: 'launchdarkly_update_flag',
      args: { projectKey: 'web', featureFlagKey: 'new-checkout', ...patch },
      ok: true,
      sent: { method: 'PATCH', url: '/api/v2/flags/web/new-checkout', json: patch },
    });
  });

  it("passes LaunchDarkly's conflict message on", async () => {
    const flag = {
      key: 'new-checkout',
      name: 'New checkout',
      variations: [{ value: true }, { value: false }],
    };
    await p.launchdarkly.expectCall({
      tool: 'launchdarkly_create_flag',
      args: { projectKey: 'web', ...flag },
      error: /launchdarkly returned HTTP 409 Conflict: A flag with key new-checkout already exists/,
      sent: { method: 'POST', url: '/api/v2/flags/web', json: flag },
    });
  });
});

describe('DigitalOcean through /mcp/', () => {
  it('refuses a token of the wrong shape, then connects as the account GET /v2/account names', async () => {
    const wrong = await p.digitalocean.connectProvider({ api_key: 'not-a-token' });
    expect(wrong.isError).toBe(true);
    const connected = await p.digitalocean.connectProvider({ api_key: DO_TOKEN });
    expect(connected.text).toContain('Connected DigitalOcean as infra@acme.test');
    p.digitalocean.expectSent(
      { method: 'GET', url: '/v2/account', headers: { authorization: `Bearer ${DO_TOKEN}` } },
      { method: 'GET', url: '/v2/account' },
    );
  });

  it('lists the Droplets of a tag and reboots one', async () => {
    await p.digitalocean.expectCall({
      tool: 'digitalocean_list_droplets',
      args: { per_page: 20, tag_name: 'web' },
      ok: 'web-01',
      sent: { method: 'GET', url: '/v2/droplets?per_page=20&tag_name=web' },
    });
    await p.digitalocean.expectCall({
      tool: 'digitalocean_droplet_action',
      args: { droplet_id: 3164444, type: 'reboot' },
      ok: 'in-progress',
      sent: { method: 'POST', url: '/v2/droplets/3164444/actions', json: { type: 'reboot' } },
    });
  });

  it("passes DigitalOcean's message on for a record it refuses", async () => {
    const record = { type: 'CNAME', name: 'www', data: 'example.com' };
    await p.digitalocean.expectCall({
      tool: 'digitalocean_create_dns_record',
      args: { domain_name: 'example.com', ...record },
      error: /digitalocean returned HTTP 422 Unprocessable Entity: Data needs to end with a dot \(\.\)/,
      sent: { method: 'POST', url: '/v2/domains/example.com/records', json: record },
    });
  });
});
