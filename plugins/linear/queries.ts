/**
 * The GraphQL documents the Linear tools send, written against Linear's public schema
 * (github.com/linear/linear, packages/sdk/src/schema.graphql). Connections take an explicit
 * `first` because Linear prices a query by its complexity, counting 50 per connection otherwise.
 */

const PAGE_INFO = 'pageInfo { hasNextPage endCursor }';

// Shared by `issues` (Issue) and `searchIssues` (IssueSearchResult), which name these fields alike.
const ISSUE_SUMMARY = `
  id identifier title priorityLabel url updatedAt
  state { name type }
  assignee { id name }
  team { key }`;

const ISSUE_DETAIL = `
  id identifier title description priority priorityLabel url createdAt updatedAt dueDate estimate
  state { id name type }
  assignee { id name email }
  team { id key name }
  labels(first: 50) { nodes { id name } }
  project { id name }
  parent { id identifier title }`;

export const VIEWER = `query Viewer {
  viewer { id name email }
}`;

export const TEAMS = `query Teams($first: Int, $after: String) {
  teams(first: $first, after: $after) {
    nodes {
      id key name
      states(first: 50) { nodes { id name type } }
      labels(first: 50) { nodes { id name } }
    }
    ${PAGE_INFO}
  }
}`;

export const SEARCH_ISSUES = `query SearchIssues($term: String!, $filter: IssueFilter, $first: Int, $after: String) {
  searchIssues(term: $term, filter: $filter, first: $first, after: $after) {
    nodes {${ISSUE_SUMMARY}
    }
    ${PAGE_INFO}
  }
}`;

export const LIST_ISSUES = `query ListIssues($filter: IssueFilter, $first: Int, $after: String) {
  issues(filter: $filter, first: $first, after: $after, orderBy: updatedAt) {
    nodes {${ISSUE_SUMMARY}
    }
    ${PAGE_INFO}
  }
}`;

export const ISSUE = `query Issue($id: String!) {
  issue(id: $id) {${ISSUE_DETAIL}
  }
}`;

export const CREATE_ISSUE = `mutation CreateIssue($input: IssueCreateInput!) {
  issueCreate(input: $input) {
    success
    issue {${ISSUE_DETAIL}
    }
  }
}`;

export const UPDATE_ISSUE = `mutation UpdateIssue($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) {
    success
    issue {${ISSUE_DETAIL}
    }
  }
}`;
