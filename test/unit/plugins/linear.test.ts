import { afterEach, describe, expect, it, vi } from 'vitest';
import type { PluginHttpRequest, PluginHttpResponse } from '../../../core/catalog/plugins/types.js';
import { linearPlugin } from '../../../plugins/linear/index.js';
import { fakeContext, jsonResponse, textOf, textResponse } from './context.js';

// The selections the tools must send, whitespace collapsed.
const SUMMARY =
  'id identifier title priorityLabel url updatedAt state { name type } assignee { id name } team { key }';
const DETAIL =
  'id identifier title description priority priorityLabel url createdAt updatedAt dueDate estimate ' +
  'state { id name type } assignee { id name email } team { id key name } ' +
  'labels(first: 50) { nodes { id name } } project { id name } parent { id identifier title }';
const PAGE_INFO = 'pageInfo { hasNextPage endCursor }';

const ISSUE = {
  id: '9cfb482a-81e3-4154-b5b9-2c805e70a02d',
  identifier: 'ENG-123',
  title: 'Login fails with SSO',
  description: 'Steps:\n1. Sign in with Okta',
  priority: 2,
  priorityLabel: 'High',
  url: 'https://linear.app/acme/issue/ENG-123/login-fails-with-sso',
  createdAt: '2026-03-02T10:00:00.000Z',
  updatedAt: '2026-03-04T16:20:00.000Z',
  dueDate: null,
  estimate: 3,
  state: { id: 'f4a3c1de-0000-4000-8000-000000000001', name: 'In Progress', type: 'started' },
  assignee: { id: 'a1b2c3d4-0000-4000-8000-000000000002', name: 'Ada Lovelace', email: 'ada@acme.test' },
  team: { id: '72b2a2dc-0000-4000-8000-000000000003', key: 'ENG', name: 'Engineering' },
  labels: { nodes: [{ id: 'b7e1d2c3-0000-4000-8000-000000000004', name: 'Bug' }] },
  project: null,
  parent: null,
};
const FLAT_ISSUE = { ...ISSUE, labels: ISSUE.labels.nodes };

function tool(name: string) {
  const found = linearPlugin.tools?.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

async function call(name: string, args: Record<string, unknown>, ...responses: PluginHttpResponse[]) {
  const { ctx, requests } = fakeContext('linear', ...responses);
  const result = await tool(name).handler(args, ctx);
  return { result, requests };
}

/** The one request sent, with its query's whitespace collapsed. */
function sent(requests: PluginHttpRequest[]) {
  expect(requests).toHaveLength(1);
  const [request] = requests;
  const { query, variables } = request?.json as { query: string; variables: unknown };
  expect(request).toMatchObject({ method: 'POST', path: '/graphql' });
  return { query: query.replace(/\s+/g, ' ').trim(), variables };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('linear_viewer', () => {
  it('asks for the viewer and returns it as text and structured content', async () => {
    const viewer = {
      id: 'a1b2c3d4-0000-4000-8000-000000000002',
      name: 'Ada Lovelace',
      email: 'ada@acme.test',
    };
    const { result, requests } = await call('linear_viewer', {}, jsonResponse(200, { data: { viewer } }));
    expect(sent(requests)).toEqual({ query: 'query Viewer { viewer { id name email } }', variables: {} });
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toEqual(viewer);
    expect(JSON.parse(textOf(result))).toEqual(viewer);
  });
});

describe('linear_search_issues', () => {
  it('runs a text search with filters and says how to get the next page', async () => {
    const { result, requests } = await call(
      'linear_search_issues',
      { query: 'sso login', team: 'eng', assignedToMe: true, stateType: 'started', first: 10, after: 'c-1' },
      jsonResponse(200, {
        data: {
          searchIssues: {
            nodes: [
              {
                id: ISSUE.id,
                identifier: 'ENG-123',
                title: ISSUE.title,
                priorityLabel: 'High',
                url: ISSUE.url,
                updatedAt: ISSUE.updatedAt,
                state: { name: 'In Progress', type: 'started' },
                assignee: { id: ISSUE.assignee.id, name: 'Ada Lovelace' },
                team: { key: 'ENG' },
              },
            ],
            pageInfo: { hasNextPage: true, endCursor: 'c-2' },
          },
        },
      }),
    );
    expect(sent(requests)).toEqual({
      query:
        'query SearchIssues($term: String!, $filter: IssueFilter, $first: Int, $after: String) { ' +
        `searchIssues(term: $term, filter: $filter, first: $first, after: $after) { nodes { ${SUMMARY} } ${PAGE_INFO} } }`,
      variables: {
        term: 'sso login',
        first: 10,
        after: 'c-1',
        filter: {
          team: { key: { eqIgnoreCase: 'eng' } },
          assignee: { isMe: { eq: true } },
          state: { type: { eq: 'started' } },
        },
      },
    });
    const text = textOf(result);
    expect(text).toContain('"identifier":"ENG-123"');
    expect(text).toMatch(
      /\n\nMore issues exist: call linear_search_issues again with the same arguments and after: "c-2"\.$/,
    );
    expect(result.structuredContent).toMatchObject({
      issues: [{ identifier: 'ENG-123', team: { key: 'ENG' } }],
      pageInfo: { hasNextPage: true, endCursor: 'c-2' },
    });
  });

  it('lists recently updated issues when there is no search text', async () => {
    const { result, requests } = await call(
      'linear_search_issues',
      {},
      jsonResponse(200, {
        data: { issues: { nodes: [], pageInfo: { hasNextPage: false, endCursor: null } } },
      }),
    );
    expect(sent(requests)).toEqual({
      query:
        'query ListIssues($filter: IssueFilter, $first: Int, $after: String) { ' +
        `issues(filter: $filter, first: $first, after: $after, orderBy: updatedAt) { nodes { ${SUMMARY} } ${PAGE_INFO} } }`,
      variables: { first: 25 },
    });
    expect(result).toEqual({
      content: [{ type: 'text', text: 'No issues found.' }],
      structuredContent: { issues: [], pageInfo: { hasNextPage: false, endCursor: null } },
    });
  });
});

describe('linear_get_issue', () => {
  it('reads an issue by identifier, with its labels as a list', async () => {
    const { result, requests } = await call(
      'linear_get_issue',
      { id: 'ENG-123' },
      jsonResponse(200, { data: { issue: ISSUE } }),
    );
    expect(sent(requests)).toEqual({
      query: `query Issue($id: String!) { issue(id: $id) { ${DETAIL} } }`,
      variables: { id: 'ENG-123' },
    });
    expect(result.structuredContent).toEqual(FLAT_ISSUE);
    expect(JSON.parse(textOf(result))).toEqual(FLAT_ISSUE);
  });

  it("reports a missing issue in Linear's words", async () => {
    const { result } = await call(
      'linear_get_issue',
      { id: 'ENG-999' },
      jsonResponse(200, {
        data: null,
        errors: [
          {
            message: 'Entity not found: Issue',
            path: ['issue'],
            locations: [{ line: 2, column: 3 }],
            extensions: {
              type: 'invalid input',
              userError: true,
              userPresentableMessage: 'Could not find referenced Issue.',
            },
          },
        ],
      }),
    );
    expect(result).toEqual({
      isError: true,
      content: [
        {
          type: 'text',
          text:
            'Linear rejected the request: Could not find referenced Issue. Check the ids and values in the ' +
            'arguments; linear_list_teams lists team, workflow state and label ids.',
        },
      ],
    });
  });
});

describe('linear_create_issue', () => {
  it('sends the arguments as IssueCreateInput and returns the new issue', async () => {
    const args = {
      teamId: ISSUE.team.id,
      title: 'Login fails with SSO',
      description: 'Steps:\n1. Sign in with Okta',
      priority: 2,
      assigneeId: ISSUE.assignee.id,
      labelIds: [ISSUE.labels.nodes[0]?.id],
    };
    const { result, requests } = await call(
      'linear_create_issue',
      args,
      jsonResponse(200, { data: { issueCreate: { success: true, issue: ISSUE } } }),
    );
    expect(sent(requests)).toEqual({
      query:
        'mutation CreateIssue($input: IssueCreateInput!) { issueCreate(input: $input) { success issue { ' +
        `${DETAIL} } } }`,
      variables: { input: args },
    });
    expect(textOf(result)).toMatch(/^Issue ENG-123 created\.\n\n\{/);
    expect(result.structuredContent).toEqual(FLAT_ISSUE);
  });

  it('fails when Linear reports no success', async () => {
    const { result } = await call(
      'linear_create_issue',
      { teamId: ISSUE.team.id, title: 'x' },
      jsonResponse(200, { data: { issueCreate: { success: false, issue: null } } }),
    );
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Linear reported that the issue was not created; check the arguments and try again.',
    );
  });
});

describe('linear_update_issue', () => {
  it('sends the id apart from the IssueUpdateInput fields', async () => {
    const { result, requests } = await call(
      'linear_update_issue',
      { id: 'ENG-123', stateId: ISSUE.state.id, assigneeId: null },
      jsonResponse(200, { data: { issueUpdate: { success: true, issue: { ...ISSUE, assignee: null } } } }),
    );
    expect(sent(requests)).toEqual({
      query:
        'mutation UpdateIssue($id: String!, $input: IssueUpdateInput!) { issueUpdate(id: $id, input: $input) { ' +
        `success issue { ${DETAIL} } } }`,
      variables: { id: 'ENG-123', input: { stateId: ISSUE.state.id, assigneeId: null } },
    });
    expect(textOf(result)).toMatch(/^Issue ENG-123 updated\.\n\n/);
    expect(result.structuredContent).toMatchObject({ identifier: 'ENG-123', assignee: null });
  });
});

describe('linear_list_teams', () => {
  it('lists teams with their states and labels, and the next page', async () => {
    const team = {
      id: ISSUE.team.id,
      key: 'ENG',
      name: 'Engineering',
      states: { nodes: [{ id: ISSUE.state.id, name: 'In Progress', type: 'started' }] },
      labels: { nodes: ISSUE.labels.nodes },
    };
    const { result, requests } = await call(
      'linear_list_teams',
      { after: 't-1' },
      jsonResponse(200, {
        data: { teams: { nodes: [team], pageInfo: { hasNextPage: true, endCursor: 't-2' } } },
      }),
    );
    expect(sent(requests)).toEqual({
      query:
        'query Teams($first: Int, $after: String) { teams(first: $first, after: $after) { nodes { id key name ' +
        `states(first: 50) { nodes { id name type } } labels(first: 50) { nodes { id name } } } ${PAGE_INFO} } }`,
      variables: { first: 25, after: 't-1' },
    });
    const flat = { ...team, states: team.states.nodes, labels: team.labels.nodes };
    expect(result.structuredContent).toEqual({
      teams: [flat],
      pageInfo: { hasNextPage: true, endCursor: 't-2' },
    });
    expect(textOf(result)).toContain('call linear_list_teams again with the same arguments and after: "t-2"');
  });
});

describe('Linear failures', () => {
  it('asks to reconnect when the token is refused', async () => {
    const { result } = await call(
      'linear_viewer',
      {},
      jsonResponse(401, {
        errors: [
          {
            message: 'Authentication required, not authenticated',
            extensions: {
              type: 'authentication error',
              code: 'AUTHENTICATION_ERROR',
              userPresentableMessage: 'You need to authenticate to access this operation.',
            },
          },
        ],
      }),
    );
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      "Linear refused this connection's access token: it may have expired or been revoked. " +
        'Reconnect with connect_provider (provider "linear"). ' +
        'Linear said: You need to authenticate to access this operation.',
    );
  });

  it('gives the reset time of a RATELIMITED answer (HTTP 400, reset in epoch milliseconds)', async () => {
    vi.useFakeTimers({ now: Date.parse('2026-03-04T16:00:00.000Z') });
    const { result } = await call(
      'linear_search_issues',
      { query: 'sso' },
      jsonResponse(
        400,
        {
          errors: [
            {
              message: 'Rate limit exceeded',
              extensions: {
                type: 'ratelimited',
                code: 'RATELIMITED',
                userPresentableMessage: 'Rate limit exceeded.',
              },
            },
          ],
        },
        {
          'x-ratelimit-requests-limit': '5000',
          'x-ratelimit-requests-remaining': '0',
          'x-ratelimit-requests-reset': String(Date.parse('2026-03-04T16:00:42.000Z')),
          'x-ratelimit-complexity-remaining': '1999000',
          'x-ratelimit-complexity-reset': String(Date.parse('2026-03-04T16:30:00.000Z')),
        },
      ),
    );
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Linear is rate limiting this connection: retry after 2026-03-04T16:00:42.000Z (in about 42 seconds). ' +
        'Linear said: Rate limit exceeded.',
    );
  });

  it('uses Retry-After on an HTTP 429', async () => {
    const { result } = await call(
      'linear_list_teams',
      {},
      textResponse(429, 'Too Many Requests', { 'retry-after': '30' }),
    );
    expect(textOf(result)).toBe(
      'Linear is rate limiting this connection: retry after 30 seconds. Linear said: Too Many Requests.',
    );
  });

  it('names the missing access when Linear forbids an operation', async () => {
    const { result } = await call(
      'linear_create_issue',
      { teamId: ISSUE.team.id, title: 'x' },
      jsonResponse(200, {
        data: null,
        errors: [
          {
            message: 'Forbidden',
            extensions: { type: 'forbidden', userPresentableMessage: 'You do not have access to this team.' },
          },
        ],
      }),
    );
    expect(textOf(result)).toMatch(
      /^Linear does not allow this for the connected account: .*"write" scope.* Linear said: You do not have access to this team\.$/,
    );
  });

  it('reports a server failure without a GraphQL body', async () => {
    const { result } = await call('linear_viewer', {}, textResponse(502, '<html>Bad gateway</html>'));
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Linear failed with HTTP 502; try again in a little while. Linear said: <html>Bad gateway</html>.',
    );
  });
});

describe('linear checkCredential', () => {
  it('names the account by email', async () => {
    const { ctx, requests } = fakeContext(
      'linear',
      jsonResponse(200, { data: { viewer: { id: 'u1', name: 'Ada Lovelace', email: 'ada@acme.test' } } }),
    );
    expect(await linearPlugin.checkCredential?.(ctx)).toEqual({ ok: true, account: 'ada@acme.test' });
    expect(sent(requests).query).toBe('query Viewer { viewer { id name email } }');
  });

  it("fails with Linear's reason", async () => {
    const { ctx } = fakeContext(
      'linear',
      jsonResponse(401, { errors: [{ message: 'Authentication required, not authenticated' }] }),
    );
    expect(await linearPlugin.checkCredential?.(ctx)).toEqual({
      ok: false,
      message:
        "Linear refused this connection's access token: it may have expired or been revoked. " +
        'Reconnect with connect_provider (provider "linear"). Linear said: Authentication required, not authenticated.',
    });
  });
});
