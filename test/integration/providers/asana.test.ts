import { describe, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, useProviderHarness, type Answer } from './helpers.js';

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

const asanaApi = useProviderHarness({
  provider: 'asana',
  auth: 'oauth',
  accessToken: TOKEN,
  account: 'ada@acme.test',
  basePath: '/api/1.0',
  answer: asana,
});

describe('Asana over /mcp/ with a seeded OAuth connection', () => {
  it("lists a project's open tasks with opt_fields as one comma-separated value", async () => {
    await asanaApi.expectCall({
      tool: 'asana_list_tasks',
      args: {
        project: '1204',
        completed_since: 'now',
        limit: 20,
        opt_fields: ['name', 'completed', 'due_on'],
      },
      ok: 'Draft launch post',
      sent: {
        method: 'GET',
        url: '/api/1.0/tasks?project=1204&completed_since=now&limit=20&opt_fields=name,completed,due_on',
        headers: { authorization: `Bearer ${TOKEN}` },
        body: '',
      },
    });
  });

  it('creates a task with the fields wrapped in data', async () => {
    const data = {
      name: 'Book venue',
      projects: ['1204'],
      assignee: 'me',
      due_on: '2026-05-01',
      notes: 'Seats 80.',
    };
    await asanaApi.expectCall({
      tool: 'asana_create_task',
      args: { data },
      ok: 'https://app.asana.com/0/1204/1206',
      sent: {
        method: 'POST',
        url: '/api/1.0/tasks',
        headers: { 'content-type': 'application/json' },
        json: { data },
      },
    });
  });

  it('completes a task with a PUT', async () => {
    const data = { completed: true };
    await asanaApi.expectCall({
      tool: 'asana_update_task',
      args: { task_gid: '1205', data },
      ok: true,
      sent: { method: 'PUT', url: '/api/1.0/tasks/1205', json: { data } },
    });
  });

  it("passes Asana's own message on when search is not available", async () => {
    await asanaApi.expectCall({
      tool: 'asana_search_tasks',
      args: { workspace_gid: '1100', text: 'launch', 'assignee.any': 'me', completed: false },
      error: /^asana returned HTTP 402 Payment Required: Search is only available to premium users\./,
      sent: {
        method: 'GET',
        url: '/api/1.0/workspaces/1100/tasks/search?text=launch&assignee.any=me&completed=false',
      },
    });
  });

  it("relays Asana's 429 with its Retry-After", async () => {
    const data = { text: 'Venue confirmed.' };
    await asanaApi.expectCall({
      tool: 'asana_add_comment',
      args: { task_gid: '1205', data },
      error: /Please, be chill\.\nasana is rate limiting these calls: retry after 30 seconds\./,
      sent: { method: 'POST', url: '/api/1.0/tasks/1205/stories', json: { data } },
    });
  });
});
