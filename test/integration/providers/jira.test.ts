import { describe, expect, it } from 'vitest';
import { checkFields } from '../../../core/connections/validate.js';
import { PluginRegistry } from '../../../core/catalog/plugins/registry.js';
import { ProviderClient } from '../../../core/upstream/provider-client.js';
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, useProviderHarness, type Answer } from './helpers.js';

const TOKEN = 'eyJraWQiOiJhdXRoLmF0bGFzc2lhbi5jb20tQUNDRVNTLTk0ZTczYTkwIiwiYWxnIjoiUlMyNTYifQ.e30.c2ln';
const CLOUD_ID = '11223344-a1b2-3b33-c444-def123456789';
const BASE_PATH = `/ex/jira/${CLOUD_ID}/rest/api/3`;

const ADF = {
  type: 'doc',
  version: 1,
  content: [{ type: 'paragraph', content: [{ type: 'text', text: 'Login fails for SSO users since 2.3.' }] }],
};

/** A loopback Jira Cloud behind the Atlassian API gateway: bearer token, JSON, Jira's error shape. */
function jira(req: Received): Answer {
  const failure = (
    status: number,
    errorMessages: string[],
    errors: Record<string, string> = {},
    headers = {},
  ) => jsonAnswer(status, { errorMessages, errors }, headers);
  if (req.headers.authorization !== `Bearer ${TOKEN}`) return failure(401, ['Unauthorized']);
  if (!req.url.startsWith(`${BASE_PATH}/`)) return failure(404, [`No site at ${req.url}`]);
  switch (`${req.method} ${req.url.slice(BASE_PATH.length)}`) {
    case 'POST /search/jql':
      return jsonAnswer(200, {
        issues: [
          {
            id: '10042',
            key: 'ENG-42',
            self: `https://api.atlassian.com${BASE_PATH}/issue/10042`,
            fields: { summary: 'Login fails with SSO', status: { name: 'In Progress' } },
          },
        ],
        nextPageToken: 'CAEaAggB',
        isLast: false,
      });
    case 'POST /issue':
      return jsonAnswer(201, {
        id: '10043',
        key: 'ENG-43',
        self: `https://api.atlassian.com${BASE_PATH}/issue/10043`,
      });
    case 'POST /issue/ENG-42/transitions':
      return { status: 204 };
    case 'GET /issue/ENG-404':
      return failure(404, ['Issue does not exist or you do not have permission to see it.']);
    case 'GET /issue/ENG-42/transitions':
      return failure(429, ['Rate limit exceeded.'], {}, { 'retry-after': '5' });
    default:
      return failure(404, [`Unexpected ${req.method} ${req.url}`]);
  }
}

const jiraApi = useProviderHarness({
  provider: 'jira',
  auth: 'oauth',
  accessToken: TOKEN,
  fields: { cloud_id: CLOUD_ID },
  account: 'Ada Lovelace',
  basePath: BASE_PATH,
  answer: jira,
});

describe('Jira over /mcp/ with a seeded OAuth connection', () => {
  it('searches with the enhanced JQL endpoint, as a JSON POST', async () => {
    const search = {
      jql: 'project = ENG AND assignee = currentUser() ORDER BY updated DESC',
      fields: ['summary', 'status'],
      maxResults: 20,
    };
    await jiraApi.expectCall({
      tool: 'jira_search_issues',
      args: search,
      ok: 'ENG-42',
      sent: {
        method: 'POST',
        url: `${BASE_PATH}/search/jql`,
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        json: search,
      },
    });
  });

  it('creates an issue with an Atlassian Document Format description', async () => {
    const fields = {
      project: { key: 'ENG' },
      issuetype: { name: 'Bug' },
      summary: 'Login fails with SSO',
      description: ADF,
      labels: ['auth'],
    };
    await jiraApi.expectCall({
      tool: 'jira_create_issue',
      args: { fields },
      ok: 'ENG-43',
      sent: { method: 'POST', url: `${BASE_PATH}/issue`, json: { fields } },
    });
  });

  it('transitions an issue and reports the empty 204 as done', async () => {
    const transition = { id: '31' };
    await jiraApi.expectCall({
      tool: 'jira_transition_issue',
      args: { issueIdOrKey: 'ENG-42', transition },
      ok: true,
      text: 'Done (HTTP 204).',
      sent: { method: 'POST', url: `${BASE_PATH}/issue/ENG-42/transitions`, json: { transition } },
    });
  });

  it('reports a missing issue as a 404 the agent can act on', async () => {
    await jiraApi.expectCall({
      tool: 'jira_get_issue',
      args: { issueIdOrKey: 'ENG-404' },
      error: /^jira returned HTTP 404 Not Found.*\nCheck the identifiers/s,
      sent: { method: 'GET', url: `${BASE_PATH}/issue/ENG-404` },
    });
  });

  it("relays Jira's 429 with its Retry-After", async () => {
    await jiraApi.expectCall({
      tool: 'jira_get_transitions',
      args: { issueIdOrKey: 'ENG-42' },
      error: 'jira is rate limiting these calls: retry after 5 seconds.',
      sent: { method: 'GET', url: `${BASE_PATH}/issue/ENG-42/transitions` },
    });
  });

  it("puts the connection's cloud id into the API gateway URL, and accepts only a UUID", () => {
    const provider = jiraApi.tg.gateway.catalog.current.providers.get('jira')!;
    // Without the test's base-URL override, as in production.
    const client = new ProviderClient({
      outbound: jiraApi.tg.gateway.outbound,
      plugins: new PluginRegistry(),
      config: { ...jiraApi.tg.gateway.config, env: {} },
      log: jiraApi.tg.gateway.app.log,
      telemetry: jiraApi.tg.gateway.telemetry,
    });
    expect(client.baseUrl(provider, undefined, { credentials: {}, fields: { cloud_id: CLOUD_ID } })).toBe(
      `https://api.atlassian.com${BASE_PATH}`,
    );
    expect(checkFields(provider, { cloud_id: CLOUD_ID })).toEqual({
      ok: true,
      value: { cloud_id: CLOUD_ID },
    });
    expect(checkFields(provider, { cloud_id: 'acme.atlassian.net' })).toMatchObject({ ok: false });
  });
});
