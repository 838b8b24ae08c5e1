import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, useProviderHarness, type Answer } from './helpers.js';

const TOKEN = 'gho_16C7e42F292c6912E7710c838347Ae178B4a';
const DOCS = 'https://docs.github.com/rest';
const RESET_IN = 120;
/** The repository every call names. */
const REPO = { owner: 'octo-org', repo: 'api' };

const octocat = {
  login: 'octocat',
  id: 583231,
  type: 'User',
  html_url: 'https://github.com/octocat',
  avatar_url: 'https://avatars.githubusercontent.com/u/583231?v=4',
  site_admin: false,
};
const issue = {
  id: 1801234567,
  node_id: 'I_kwDOAbCdEf5rT1xY',
  number: 1347,
  title: 'Found a bug',
  state: 'open',
  state_reason: null,
  body: "I'm having a problem with this.",
  user: octocat,
  labels: [
    { id: 208045946, name: 'bug', color: 'f29513', description: "Something isn't working", default: true },
  ],
  assignees: [],
  milestone: null,
  locked: false,
  comments: 0,
  html_url: 'https://github.com/octo-org/api/issues/1347',
  repository_url: 'https://api.github.com/repos/octo-org/api',
  created_at: '2025-04-14T16:00:49Z',
  updated_at: '2025-04-14T16:00:49Z',
  closed_at: null,
  author_association: 'MEMBER',
};

/** A loopback api.github.com: token, media type, API version and User-Agent checked; GitHub's shapes. */
function github(req: Received): Answer {
  const error = (status: number, message: string, docs: string, extra: object = {}, headers = {}) =>
    jsonAnswer(
      status,
      { message, documentation_url: `${DOCS}${docs}`, status: String(status), ...extra },
      headers,
    );
  if (req.headers.authorization !== `Bearer ${TOKEN}`) return error(401, 'Bad credentials', '');
  if (
    req.headers.accept !== 'application/vnd.github+json' ||
    req.headers['x-github-api-version'] !== '2022-11-28'
  )
    return error(415, 'Unsupported media type or API version', '');
  if (!req.headers['user-agent'])
    return error(
      403,
      'Request forbidden by administrative rules. Please make sure your request has a User-Agent header',
      '',
    );
  switch (`${req.method} ${req.url}`) {
    case 'GET /repos/octo-org/api/issues?state=open&labels=bug%2Cui&sort=updated&per_page=5':
      return jsonAnswer(200, [issue]);
    case 'POST /repos/octo-org/api/issues':
      return jsonAnswer(201, { ...issue, number: 1348, title: 'Crash on ünïcode input' });
    case 'GET /repos/octo-org/api/issues/1347':
      return jsonAnswer(200, issue);
    case 'GET /repos/octo-org/api/issues/9999':
      return error(404, 'Not Found', '/issues/issues#get-an-issue');
    case 'GET /repos/octo-org/api/contents/docs%2FREADME.md?ref=main':
      return jsonAnswer(200, {
        type: 'file',
        encoding: 'base64',
        size: 13,
        name: 'README.md',
        path: 'docs/README.md',
        content: 'IyBBUEkgZG9jcwo=\n',
        sha: '3d21ec53a331a6f037a91c368710b99387d012c1',
        url: 'https://api.github.com/repos/octo-org/api/contents/docs/README.md?ref=main',
        html_url: 'https://github.com/octo-org/api/blob/main/docs/README.md',
        download_url: 'https://raw.githubusercontent.com/octo-org/api/main/docs/README.md',
      });
    case 'POST /repos/octo-org/api/pulls':
      return error(422, 'Validation Failed', '/pulls/pulls#create-a-pull-request', {
        errors: [{ resource: 'PullRequest', code: 'custom', message: 'No commits between main and main' }],
      });
    case 'PUT /repos/octo-org/api/pulls/42/merge':
      return jsonAnswer(200, {
        sha: '6dcb09b5b57875f334f61aebed695e2e4193db5e',
        merged: true,
        message: 'Pull Request successfully merged',
      });
    case 'GET /search/issues?q=repo%3Aocto-org%2Fapi%20is%3Aissue%20is%3Aopen%20label%3Abug&sort=created&order=asc':
      return error(
        403,
        'API rate limit exceeded for user ID 583231.',
        '/overview/rate-limits-for-the-rest-api',
        {},
        {
          'x-ratelimit-limit': '30',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + RESET_IN),
          'x-ratelimit-resource': 'search',
        },
      );
    default:
      return error(404, `Not Found: ${req.method} ${req.url}`, '');
  }
}

const gh = useProviderHarness({
  provider: 'github',
  auth: 'oauth',
  accessToken: TOKEN,
  account: 'octocat',
  answer: github,
});

describe('GitHub over /mcp/ with a seeded OAuth connection', () => {
  it('lists the curated GitHub tools, grouped in categories, with its rate limits', async () => {
    const names = (await gh.client.listToolNames()).filter((n) => n.startsWith('github_'));
    expect(names.sort()).toEqual([
      'github_issues_create',
      'github_issues_create_comment',
      'github_issues_get',
      'github_issues_list_comments',
      'github_issues_list_for_repo',
      'github_issues_update',
      'github_pulls_create',
      'github_pulls_get',
      'github_pulls_list',
      'github_pulls_list_files',
      'github_pulls_merge',
      'github_repos_get',
      'github_repos_get_content',
      'github_repos_list_for_authenticated_user',
      'github_search_code',
      'github_search_issues_and_pull_requests',
      'github_search_repos',
      'github_users_get_authenticated',
    ]);
    const inspected = await gh.inspect();
    expect(inspected).toContain('connected as octocat');
    expect(inspected).toContain('5,000 requests per hour per user token');
    expect(inspected).toMatch(/Pull requests — List, read, open and merge pull requests/);
  });

  it('lists issues with only the filters given (no defaults sent) and the headers GitHub requires', async () => {
    await gh.expectCall({
      tool: 'github_issues_list_for_repo',
      args: { ...REPO, state: 'open', labels: 'bug,ui', sort: 'updated', per_page: 5 },
      ok: '"number":1347',
      sent: {
        method: 'GET',
        url: '/repos/octo-org/api/issues?state=open&labels=bug%2Cui&sort=updated&per_page=5',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          accept: 'application/vnd.github+json',
          'x-github-api-version': '2022-11-28',
          'user-agent': 'toolgate',
        },
        body: '',
      },
    });
  });

  it('opens an issue with a JSON body and returns it as structured content', async () => {
    const issue = {
      title: 'Crash on ünïcode input',
      body: 'Steps:\n1. Paste `ü`',
      labels: ['bug'],
      assignees: ['octocat'],
    };
    await gh.expectCall({
      tool: 'github_issues_create',
      args: { ...REPO, ...issue },
      ok: '"html_url":"https://github.com/octo-org/api/issues/1347"',
      sent: {
        method: 'POST',
        url: '/repos/octo-org/api/issues',
        headers: { 'content-type': 'application/json' },
        json: issue,
      },
    });
  });

  it('reads a file by path, its slashes percent-encoded as Octokit sends them', async () => {
    await gh.expectCall({
      tool: 'github_repos_get_content',
      args: { ...REPO, path: 'docs/README.md', ref: 'main' },
      ok: '"content":"IyBBUEkgZG9jcwo=\\n"',
      sent: { method: 'GET', url: '/repos/octo-org/api/contents/docs%2FREADME.md?ref=main' },
    });
  });

  it('merges a pull request with a PUT and the chosen merge method', async () => {
    await gh.expectCall({
      tool: 'github_pulls_merge',
      args: { ...REPO, pull_number: 42, merge_method: 'squash', commit_title: 'Fix parser (#42)' },
      ok: 'Pull Request successfully merged',
      sent: {
        method: 'PUT',
        url: '/repos/octo-org/api/pulls/42/merge',
        json: { commit_title: 'Fix parser (#42)', merge_method: 'squash' },
      },
    });
  });

  it("passes GitHub's 404 and 422 messages on", async () => {
    await gh.expectCall({
      tool: 'github_issues_get',
      args: { ...REPO, issue_number: 9999 },
      error: /^github returned HTTP 404 Not Found: Not Found\nCheck the identifiers/,
      sent: { method: 'GET', url: '/repos/octo-org/api/issues/9999' },
    });
    const pull = { title: 'Nothing to merge', head: 'main', base: 'main' };
    await gh.expectCall({
      tool: 'github_pulls_create',
      args: { ...REPO, ...pull },
      error: 'HTTP 422 Unprocessable Entity: Validation Failed (No commits between main and main)',
      sent: { method: 'POST', url: '/repos/octo-org/api/pulls', json: pull },
    });
  });

  it("reads GitHub's rate-limit 403 as a rate limit and says when to retry", async () => {
    const { result } = await gh.expectCall({
      tool: 'github_search_issues_and_pull_requests',
      args: { q: 'repo:octo-org/api is:issue is:open label:bug', sort: 'created', order: 'asc' },
      error: 'HTTP 403 Forbidden: API rate limit exceeded for user ID 583231.',
      sent: {
        method: 'GET',
        url: '/search/issues?q=repo%3Aocto-org%2Fapi%20is%3Aissue%20is%3Aopen%20label%3Abug&sort=created&order=asc',
      },
    });
    const wait = Number(
      /github is rate limiting these calls: retry after (\d+) seconds/.exec(result.text)?.[1],
    );
    expect(wait).toBeGreaterThan(RESET_IN - 5);
    expect(wait).toBeLessThanOrEqual(RESET_IN);
  });
});
