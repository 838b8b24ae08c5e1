import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, jsonBody, seedOAuthProvider, type Answer, type SeededOAuthProvider } from './helpers.js';

const TOKEN = '2/1200000000000001/1207000000000002:0f1e2d3c4b5a69788796a5b4c3d2e1f0';
const HELP =
  'For more information on API status codes and how to handle them, read the docs on errors: https://developers.asana.com/docs/errors';

/** A loopback Asana API: bearer token, {data} envelopes both ways, Asana's {errors: [...]} shape. */
function asana(req: Received): Answer {
  const failure = (status: number, message: string, headers: Record<string, string> = {}) =>
    jsonAnswer(status, { errors: [{ message, help: HELP }] }, headers);
  if (req.headers.authorization !== `Bearer ${TOKEN}`) return failure(401, 'Not Authorized');
  switch (`${req.method} ${req.url}`) {
    case 'GET /api/1.0/tasks?project=1204&completed_since=now&limit=20&opt_fields=name,completed,due_on':
      return jsonAnswer(200, {
        data: [
          {
            gid: '1205',
            name: 'Draft launch post',
            completed: false,
            due_on: '2026-05-01',
            resource_type: 'task',
          },
        ],
        next_page: {
          offset: 'eyJ0eXAiOJiKV1iQLCJhbGciOiJIUzI1NiJ9',
          path: '/tasks?project=1204&offset=eyJ0eXAi',
          uri: 'https://app.asana.com/api/1.0/tasks?project=1204&offset=eyJ0eXAi',
        },
      });
    case 'POST /api/1.0/tasks':
      return jsonAnswer(201, {
        data: {
          gid: '1206',
          name: 'Book venue',
          completed: false,
          permalink_url: 'https://app.asana.com/0/1204/1206',
          resource_type: 'task',
        },
      });
    case 'PUT /api/1.0/tasks/1205':
      return jsonAnswer(200, {
        data: { gid: '1205', name: 'Draft launch post', completed: true, resource_type: 'task' },
      });
    case 'GET /api/1.0/workspaces/1100/tasks/search?text=launch&assignee.any=me&completed=false':
      return failure(402, 'Search is only available to premium users.');
    case 'POST /api/1.0/tasks/1205/stories':
      return failure(429, 'You have made too many requests recently. Please, be chill.', {
        'retry-after': '30',
      });
    default:
      return failure(404, `Unexpected ${req.method} ${req.url}`);
  }
}

let asanaApi: SeededOAuthProvider;

beforeAll(async () => {
  asanaApi = await seedOAuthProvider({
    provider: 'asana',
    accessToken: TOKEN,
    account: 'ada@acme.test',
    basePath: '/api/1.0',
    respond: asana,
  });
});
afterAll(async () => {
  await asanaApi.close();
});

describe('Asana over /mcp/ with a seeded OAuth connection', () => {
  it("lists a project's open tasks with opt_fields as one comma-separated value", async () => {
    const result = await asanaApi.client.callTool('asana_list_tasks', {
      project: '1204',
      completed_since: 'now',
      limit: 20,
      opt_fields: ['name', 'completed', 'due_on'],
    });
    expect(result.isError).toBeFalsy();
    expect(result.content[0]!.text).toContain('Draft launch post');
    const [sent] = asanaApi.sent();
    expect(sent).toMatchObject({
      method: 'GET',
      url: '/api/1.0/tasks?project=1204&completed_since=now&limit=20&opt_fields=name,completed,due_on',
      body: '',
    });
    expect(sent!.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('creates a task with the fields wrapped in data', async () => {
    const data = {
      name: 'Book venue',
      projects: ['1204'],
      assignee: 'me',
      due_on: '2026-05-01',
      notes: 'Seats 80.',
    };
    const result = await asanaApi.client.callTool('asana_create_task', { data });
    expect(result.isError).toBeFalsy();
    expect(result.content[0]!.text).toContain('https://app.asana.com/0/1204/1206');
    const [sent] = asanaApi.sent();
    expect(sent).toMatchObject({ method: 'POST', url: '/api/1.0/tasks' });
    expect(sent!.headers['content-type']).toBe('application/json');
    expect(jsonBody(sent)).toEqual({ data });
  });

  it('completes a task with a PUT', async () => {
    const result = await asanaApi.client.callTool('asana_update_task', {
      task_gid: '1205',
      data: { completed: true },
    });
    expect(result.isError).toBeFalsy();
    const [sent] = asanaApi.sent();
    expect(sent).toMatchObject({ method: 'PUT', url: '/api/1.0/tasks/1205' });
    expect(jsonBody(sent)).toEqual({ data: { completed: true } });
  });

  it("passes Asana's own message on when search is not available", async () => {
    const result = await asanaApi.client.callTool('asana_search_tasks', {
      workspace_gid: '1100',
      text: 'launch',
      'assignee.any': 'me',
      completed: false,
    });
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(
      /^asana returned HTTP 402 Payment Required: Search is only available to premium users\./,
    );
    expect(asanaApi.sent()[0]!.url).toBe(
      '/api/1.0/workspaces/1100/tasks/search?text=launch&assignee.any=me&completed=false',
    );
  });

  it("relays Asana's 429 with its Retry-After", async () => {
    const result = await asanaApi.client.callTool('asana_add_comment', {
      task_gid: '1205',
      data: { text: 'Venue confirmed.' },
    });
    expect(result.isError).toBe(true);
    expect(result.content[0]!.text).toMatch(
      /Please, be chill\.\nasana is rate limiting these calls: retry after 30 seconds\./,
    );
    expect(jsonBody(asanaApi.sent()[0])).toEqual({ data: { text: 'Venue confirmed.' } });
  });
});
