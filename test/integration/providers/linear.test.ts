import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, jsonBody, useProviderHarness, type Answer } from './helpers.js';

const TOKEN = 'lin_oauth_8f2c1d9e7b6a5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d';
const ISSUE = {
  id: '9cfb482a-81e3-4154-b5b9-2c805e70a02d',
  identifier: 'ENG-123',
  title: 'Login fails with SSO',
  priorityLabel: 'High',
  url: 'https://linear.app/acme/issue/ENG-123/login-fails-with-sso',
  updatedAt: '2026-03-04T16:20:00.000Z',
  state: { name: 'In Progress', type: 'started' },
  assignee: { id: 'a1b2c3d4-0000-4000-8000-000000000002', name: 'Ada Lovelace' },
  team: { key: 'ENG' },
};
const DONE_STATE = 'f4a3c1de-0000-4000-8000-000000000009';
// Epoch milliseconds, as Linear sends its reset headers.
const RESET_AT = '4102444800000';

/** The GraphQL document and variables of a request. */
function graphql(req: Received | undefined): { query: string; variables: Record<string, unknown> } {
  return jsonBody(req) as { query: string; variables: Record<string, unknown> };
}

/** The operation name of a GraphQL document: `query SearchIssues(...)` -> SearchIssues. */
function operation(req: Received): string {
  return /^\s*(?:query|mutation)\s+(\w+)/.exec(graphql(req).query)?.[1] ?? '';
}

/** A loopback Linear GraphQL API: POST /graphql with a bearer token; data or errors in Linear's shapes. */
function linear(req: Received): Answer {
  if (req.method !== 'POST' || req.url !== '/graphql') return { status: 404, body: 'Not Found' };
  if (req.headers.authorization !== `Bearer ${TOKEN}`) {
    return jsonAnswer(401, {
      errors: [
        {
          message: 'Authentication required, not authenticated',
          extensions: { type: 'authentication error', code: 'AUTHENTICATION_ERROR' },
        },
      ],
    });
  }
  const { variables } = graphql(req);
  switch (operation(req)) {
    case 'SearchIssues':
      return jsonAnswer(200, {
        data: {
          searchIssues: { nodes: [ISSUE], pageInfo: { hasNextPage: true, endCursor: 'c2VhcmNoOjI1' } },
        },
      });
    case 'UpdateIssue':
      return jsonAnswer(200, {
        data: {
          issueUpdate: {
            success: true,
            issue: { ...ISSUE, state: { id: DONE_STATE, name: 'Done', type: 'completed' } },
          },
        },
      });
    case 'Issue':
      return variables.id === 'ENG-999'
        ? jsonAnswer(200, {
            data: null,
            errors: [
              {
                message: 'Entity not found: Issue',
                path: ['issue'],
                extensions: {
                  type: 'invalid input',
                  code: 'INPUT_ERROR',
                  userPresentableMessage: 'Could not find referenced Issue.',
                },
              },
            ],
          })
        : jsonAnswer(200, { data: { issue: ISSUE } });
    case 'Teams':
      return jsonAnswer(
        400,
        { errors: [{ message: 'Rate limit exceeded', extensions: { code: 'RATELIMITED' } }] },
        { 'x-ratelimit-requests-remaining': '0', 'x-ratelimit-requests-reset': RESET_AT },
      );
    default:
      return jsonAnswer(400, { errors: [{ message: `Unknown operation ${operation(req)}` }] });
  }
}

const linearApi = useProviderHarness({
  provider: 'linear',
  auth: 'oauth',
  accessToken: TOKEN,
  account: 'ada@acme.test',
  answer: linear,
});

describe('Linear (GraphQL plugin) over /mcp/ with a seeded OAuth connection', () => {
  it('offers the plugin tools once the OAuth connection exists', async () => {
    expect(await linearApi.client.listToolNames()).toEqual(
      expect.arrayContaining([
        'linear_search_issues',
        'linear_get_issue',
        'linear_create_issue',
        'linear_update_issue',
        'linear_list_teams',
        'linear_viewer',
      ]),
    );
  });

  it('searches issues with one GraphQL POST carrying the bearer token', async () => {
    const { requests } = await linearApi.expectCall({
      tool: 'linear_search_issues',
      args: { query: 'sso login', team: 'eng', stateType: 'started', first: 10 },
      ok: ['ENG-123', 'call linear_search_issues again with the same arguments and after: "c2VhcmNoOjI1"'],
      sent: {
        method: 'POST',
        url: '/graphql',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      },
    });
    const { query, variables } = graphql(requests[0]);
    expect(query).toMatch(
      /^query SearchIssues\(\$term: String!, \$filter: IssueFilter, \$first: Int, \$after: String\)/,
    );
    expect(variables).toEqual({
      term: 'sso login',
      first: 10,
      filter: { team: { key: { eqIgnoreCase: 'eng' } }, state: { type: { eq: 'started' } } },
    });
  });

  it('moves an issue to another workflow state with the issueUpdate mutation', async () => {
    const { requests } = await linearApi.expectCall({
      tool: 'linear_update_issue',
      args: { id: 'ENG-123', stateId: DONE_STATE },
      ok: /^Issue ENG-123 updated\./,
      sent: { method: 'POST', url: '/graphql' },
    });
    const { query, variables } = graphql(requests[0]);
    expect(query).toMatch(/^mutation UpdateIssue\(\$id: String!, \$input: IssueUpdateInput!\)/);
    expect(variables).toEqual({ id: 'ENG-123', input: { stateId: DONE_STATE } });
  });

  it("passes Linear's presentable error message on", async () => {
    const { requests } = await linearApi.expectCall({
      tool: 'linear_get_issue',
      args: { id: 'ENG-999' },
      error: 'Linear rejected the request: Could not find referenced Issue.',
      sent: { method: 'POST', url: '/graphql' },
    });
    expect(operation(requests[0]!)).toBe('Issue');
    expect(graphql(requests[0]).variables).toEqual({ id: 'ENG-999' });
  });

  it('reports RATELIMITED with the time its reset header names', async () => {
    const { requests } = await linearApi.expectCall({
      tool: 'linear_list_teams',
      error: `Linear is rate limiting this connection: retry after ${new Date(Number(RESET_AT)).toISOString()}`,
      sent: { method: 'POST', url: '/graphql' },
    });
    expect(operation(requests[0]!)).toBe('Teams');
    expect(graphql(requests[0]).variables).toEqual({ first: 25 });
  });
});
