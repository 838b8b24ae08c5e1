/**
 * The Linear tools. Argument names are Linear's own input field names (teamId, stateId, ...), so
 * the ids an agent reads in one result go unchanged into the next call.
 */
import type { JsonSchema } from '../../core/catalog/types.js';
import type { PluginContext, PluginTool, PluginToolResult } from '../../core/catalog/plugins/types.js';
import { graphql, isRecord } from './graphql.js';
import { CREATE_ISSUE, ISSUE, LIST_ISSUES, SEARCH_ISSUES, TEAMS, UPDATE_ISSUE, VIEWER } from './queries.js';
import { failure, objectResult, pageResult } from './result.js';

const PAGE_SIZE = 25;
const STATE_TYPES = ['triage', 'backlog', 'unstarted', 'started', 'completed', 'canceled', 'duplicate'];

const READ_ONLY = { readOnlyHint: true, openWorldHint: true };

function object(properties: Record<string, JsonSchema>, required: string[] = [], extra: JsonSchema = {}) {
  return {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
    ...extra,
  };
}

const nullable = (schema: JsonSchema): JsonSchema => ({ ...schema, type: [schema.type, 'null'] });

const ISSUE_ID: JsonSchema = {
  type: 'string',
  minLength: 1,
  description: 'Its identifier such as "ENG-123", or its UUID.',
};
const PAGING: Record<string, JsonSchema> = {
  first: {
    type: 'integer',
    minimum: 1,
    maximum: 50,
    default: PAGE_SIZE,
  },
  after: {
    type: 'string',
    minLength: 1,
    description: 'The cursor the previous page ended with.',
  },
};
const ID = (description: string): JsonSchema => ({ type: 'string', minLength: 1, description });
const IDS = (description: string): JsonSchema => ({
  type: 'array',
  items: { type: 'string', minLength: 1 },
  uniqueItems: true,
  description,
});
const ASSIGNEE_ID = ID("A user's UUID (linear_viewer gives the connected user's).");
const DUE_DATE: JsonSchema = {
  type: 'string',
  pattern: '^\\d{4}-\\d{2}-\\d{2}$',
};
const FIELDS: Record<string, JsonSchema> = {
  title: { type: 'string', minLength: 1 },
  description: { type: 'string', description: 'Markdown.' },
  priority: {
    type: 'integer',
    minimum: 0,
    maximum: 4,
    description: '0 no priority, 1 urgent, 2 high, 3 medium, 4 low.',
  },
  assigneeId: ASSIGNEE_ID,
  stateId: ID("A workflow state's UUID, of the issue's team (linear_list_teams)."),
  labelIds: IDS("The team's label UUIDs (linear_list_teams)."),
  dueDate: DUE_DATE,
};

const LIST_OUTPUT = (key: string) =>
  object(
    {
      [key]: { type: 'array', items: { type: 'object' } },
      pageInfo: object({ hasNextPage: { type: 'boolean' }, endCursor: { type: ['string', 'null'] } }, [
        'hasNextPage',
        'endCursor',
      ]),
    },
    [key, 'pageInfo'],
  );
const ISSUE_OUTPUT: JsonSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    identifier: { type: 'string' },
    title: { type: 'string' },
    description: { type: ['string', 'null'] },
    priority: { type: 'number' },
    url: { type: 'string' },
    state: { type: 'object' },
    assignee: { type: ['object', 'null'] },
    team: { type: 'object' },
    labels: { type: 'array', items: { type: 'object' } },
  },
  required: ['id', 'identifier', 'title', 'url'],
};

interface SearchArgs {
  query?: string;
  team?: string;
  assignedToMe?: boolean;
  stateType?: string;
  first?: number;
  after?: string;
}

/** The Linear tools with their handlers. */
export const linearTools: PluginTool[] = [
  {
    name: 'linear_search_issues',
    title: 'Search issues',
    description:
      "Find Linear issues: with `query`, Linear's search, best matches first (about 30 a minute); " +
      'without it, the most recently updated. Returns up to `first` issues with identifier, title, ' +
      'state, priority, assignee, team key and URL. linear_get_issue shows one issue in full.',
    inputSchema: object({
      query: {
        type: 'string',
        minLength: 1,
        description: 'Words, or an identifier like ENG-123.',
      },
      team: { type: 'string', minLength: 1, description: 'A team key, e.g. ENG.' },
      assignedToMe: { type: 'boolean' },
      stateType: {
        type: 'string',
        enum: STATE_TYPES,
        description: 'started is in progress.',
      },
      ...PAGING,
    }),
    outputSchema: LIST_OUTPUT('issues'),
    annotations: READ_ONLY,
    handler(args, ctx) {
      const search = args as SearchArgs;
      const { query, first = PAGE_SIZE, after } = search;
      const filter = issueFilter(search);
      const paging = { first, ...(after !== undefined ? { after } : {}), ...(filter ? { filter } : {}) };
      return query === undefined
        ? run(ctx, LIST_ISSUES, paging, (data) => pageResult(data.issues, 'issues', 'linear_search_issues'))
        : run(ctx, SEARCH_ISSUES, { term: query, ...paging }, (data) =>
            pageResult(data.searchIssues, 'issues', 'linear_search_issues'),
          );
    },
  },
  {
    name: 'linear_get_issue',
    title: 'Get an issue',
    description:
      'Read one Linear issue in full, with the ids linear_update_issue takes. Returns its title, Markdown description, ' +
      'workflow state, priority, assignee, team, labels, project, parent issue, due date, estimate, URL and ' +
      'timestamps.',
    inputSchema: object({ id: ISSUE_ID }, ['id']),
    outputSchema: ISSUE_OUTPUT,
    annotations: READ_ONLY,
    handler(args, ctx) {
      return run(ctx, ISSUE, { id: args.id }, (data) => objectResult(data.issue, 'issue'));
    },
  },
  {
    name: 'linear_create_issue',
    title: 'Create an issue',
    description:
      "Create a Linear issue (in the team's default state unless `stateId` says otherwise). Returns the " +
      'new issue with its identifier and URL.',
    inputSchema: object(
      {
        teamId: ID('From linear_list_teams.'),
        ...FIELDS,
        parentId: ID("For a sub-issue: the parent's identifier or UUID."),
      },
      ['teamId', 'title'],
    ),
    outputSchema: ISSUE_OUTPUT,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    handler(args, ctx) {
      return run(ctx, CREATE_ISSUE, { input: args }, (data) => changedIssue(data.issueCreate, 'created'));
    },
  },
  {
    name: 'linear_update_issue',
    title: 'Update an issue',
    description:
      'Change the fields given of a Linear issue: `stateId` moves it to a workflow state (e.g. Done), ' +
      '`labelIds` replaces all labels, null clears `assigneeId` or `dueDate`. Returns the updated issue.',
    inputSchema: object(
      {
        id: ISSUE_ID,
        ...FIELDS,
        assigneeId: nullable(ASSIGNEE_ID),
        dueDate: nullable(DUE_DATE),
        addedLabelIds: IDS('Label UUIDs to add.'),
        removedLabelIds: IDS('Label UUIDs to remove.'),
      },
      ['id'],
      { minProperties: 2 },
    ),
    outputSchema: ISSUE_OUTPUT,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    handler(args, ctx) {
      const { id, ...input } = args;
      return run(ctx, UPDATE_ISSUE, { id, input }, (data) => changedIssue(data.issueUpdate, 'updated'));
    },
  },
  {
    name: 'linear_list_teams',
    title: 'List teams',
    description:
      'List the Linear teams the user can access, with the ids linear_create_issue and ' +
      "linear_update_issue take. Returns each team's UUID, key (the prefix of issue identifiers, e.g. ENG), " +
      'name, workflow states (UUID, name, type: triage, backlog, unstarted, started, completed, canceled ' +
      'or duplicate) and labels (UUID, name), up to 50 of each.',
    inputSchema: object({ ...PAGING }),
    outputSchema: LIST_OUTPUT('teams'),
    annotations: READ_ONLY,
    handler(args, ctx) {
      const { first = PAGE_SIZE, after } = args as { first?: number; after?: string };
      return run(ctx, TEAMS, { first, ...(after !== undefined ? { after } : {}) }, (data) =>
        pageResult(data.teams, 'teams', 'linear_list_teams'),
      );
    },
  },
  {
    name: 'linear_viewer',
    title: 'Connected user',
    description: "Who the Linear connection acts as: the user's UUID (for `assigneeId`), name and email.",
    inputSchema: object({}),
    outputSchema: object({ id: { type: 'string' }, name: { type: 'string' }, email: { type: 'string' } }, [
      'id',
      'name',
      'email',
    ]),
    annotations: READ_ONLY,
    handler(_args, ctx) {
      return run(ctx, VIEWER, {}, (data) => objectResult(data.viewer, 'user'));
    },
  },
];

// Runs one GraphQL operation; Linear's failures become isError results.
async function run(
  ctx: PluginContext,
  query: string,
  variables: Record<string, unknown>,
  shape: (data: Record<string, unknown>) => PluginToolResult,
): Promise<PluginToolResult> {
  const outcome = await graphql(ctx, query, variables);
  return outcome.ok ? shape(outcome.data) : failure(outcome.message);
}

// Linear's IssueFilter for the search tool's narrowing arguments; undefined when there are none.
function issueFilter({ team, assignedToMe, stateType }: SearchArgs): Record<string, unknown> | undefined {
  const filter = {
    ...(team !== undefined ? { team: { key: { eqIgnoreCase: team } } } : {}),
    ...(assignedToMe === true ? { assignee: { isMe: { eq: true } } } : {}),
    ...(stateType !== undefined ? { state: { type: { eq: stateType } } } : {}),
  };
  return Object.keys(filter).length > 0 ? filter : undefined;
}

// issueCreate and issueUpdate answer `{ success, issue }`.
function changedIssue(payload: unknown, done: 'created' | 'updated'): PluginToolResult {
  if (!isRecord(payload) || payload.success !== true) {
    return failure(`Linear reported that the issue was not ${done}; check the arguments and try again.`);
  }
  const { issue } = payload;
  const name = isRecord(issue) && typeof issue.identifier === 'string' ? ` ${issue.identifier}` : '';
  return objectResult(issue, 'issue', `Issue${name} ${done}.`);
}
