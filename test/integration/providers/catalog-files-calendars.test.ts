/**
 * Storage, documents and scheduling providers added to the catalog for issue 17 (Box, Google
 * Sheets, Google Tasks, Zoom), all OAuth2, behind one gateway with seeded connections: each makes
 * one read and one write with the exact request its real API expects, and passes on one error in
 * its real shape.
 */
import { describe, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { googleApi, googleNotFound } from './google.js';
import { jsonAnswer, useProvidersHarness, type Answer } from './helpers.js';

const BOX_TOKEN = 'box-T8pQ2mV7sR4wN6yB1cF5hJ0g';
const SHEETS_TOKEN = 'ya29.sheets-a0AfB_byC3dE5fG7hI9jK1lM';
const TASKS_TOKEN = 'ya29.tasks-a0AfB_byN2oP4qR6sT8uV0wX';
const ZOOM_TOKEN = 'zoom-eyJzdiI6IjAwMDAwMSIsImFsZyI6IkhTNTEyIn0';

/** Box: bearer token; errors as {type: "error", status, code, message}. */
function box(req: Received): Answer {
  const failure = (status: number, code: string, message: string) =>
    jsonAnswer(status, { type: 'error', status, code, message, request_id: 'abc123' });
  if (req.headers.authorization !== `Bearer ${BOX_TOKEN}`)
    return failure(401, 'unauthorized', 'Unauthorized');
  switch (`${req.method} ${req.url}`) {
    case 'GET /2.0/search?query=invoice&type=file&limit=5':
      return jsonAnswer(200, {
        total_count: 1,
        entries: [{ type: 'file', id: '12345', name: 'invoice-2026-10.pdf' }],
        limit: 5,
        offset: 0,
      });
    case 'PUT /2.0/files/12345':
      return jsonAnswer(200, {
        type: 'file',
        id: '12345',
        name: 'Invoice October.pdf',
        parent: { id: '678' },
      });
    case 'POST /2.0/folders':
      return failure(409, 'item_name_in_use', 'Item with the same name already exists');
    default:
      return failure(404, 'not_found', `Not Found: ${req.url}`);
  }
}

const sheets = googleApi(SHEETS_TOKEN, (req) => {
  switch (`${req.method} ${req.url}`) {
    case 'GET /v4/spreadsheets/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/values/Class%20Data%21A2%3AE4?majorDimension=ROWS':
      return jsonAnswer(200, {
        range: "'Class Data'!A2:E4",
        majorDimension: 'ROWS',
        values: [['Alexandra', 'Female', '4. Senior', 'CA', 'English']],
      });
    case 'POST /v4/spreadsheets/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/values/Sheet1%21A1:append?valueInputOption=USER_ENTERED':
      return jsonAnswer(200, {
        spreadsheetId: '1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms',
        tableRange: 'Sheet1!A1:C4',
        updates: { updatedRange: 'Sheet1!A5:C5', updatedRows: 1, updatedColumns: 3, updatedCells: 3 },
      });
    case 'POST /v4/spreadsheets/missing:batchUpdate':
      return googleNotFound('Requested entity was not found.');
    default:
      return undefined;
  }
});

const tasks = googleApi(TASKS_TOKEN, (req) => {
  switch (`${req.method} ${req.url}`) {
    case 'GET /tasks/v1/lists/%40default/tasks?maxResults=20&showCompleted=false':
      return jsonAnswer(200, {
        kind: 'tasks#tasks',
        items: [
          {
            kind: 'tasks#task',
            id: 'T1',
            title: 'Renew passport',
            status: 'needsAction',
            due: '2026-12-01T00:00:00.000Z',
          },
        ],
      });
    case 'PATCH /tasks/v1/lists/%40default/tasks/T1':
      return jsonAnswer(200, { kind: 'tasks#task', id: 'T1', title: 'Renew passport', status: 'completed' });
    case 'DELETE /tasks/v1/lists/%40default/tasks/gone':
      return googleNotFound('Task not found.');
    default:
      return undefined;
  }
});

/** Zoom: bearer token; errors as {code, message}. */
function zoom(req: Received): Answer {
  const failure = (status: number, code: number, message: string) => jsonAnswer(status, { code, message });
  if (req.headers.authorization !== `Bearer ${ZOOM_TOKEN}`) return failure(401, 124, 'Invalid access token.');
  switch (`${req.method} ${req.url}`) {
    case 'GET /v2/users/me/meetings?type=upcoming&page_size=10':
      return jsonAnswer(200, {
        page_size: 10,
        total_records: 1,
        next_page_token: '',
        meetings: [
          { id: 85746065432, topic: 'Weekly sync', start_time: '2026-11-26T15:00:00Z', duration: 30 },
        ],
      });
    case 'POST /v2/users/me/meetings':
      return jsonAnswer(201, {
        id: 85746065999,
        topic: 'Design review',
        join_url: 'https://us05web.zoom.us/j/85746065999?pwd=abc',
        start_time: '2026-12-02T16:00:00Z',
      });
    case 'PATCH /v2/meetings/111':
      return failure(404, 3001, 'Meeting does not exist: 111.');
    default:
      return failure(404, 404, `Not found: ${req.url}`);
  }
}

const p = useProvidersHarness([
  { provider: 'box', auth: 'oauth', accessToken: BOX_TOKEN, basePath: '/2.0', answer: box },
  { provider: 'google-sheets', auth: 'oauth', accessToken: SHEETS_TOKEN, answer: sheets },
  { provider: 'google-tasks', auth: 'oauth', accessToken: TASKS_TOKEN, answer: tasks },
  { provider: 'zoom', auth: 'oauth', accessToken: ZOOM_TOKEN, basePath: '/v2', answer: zoom },
]);

describe('Box through /mcp/', () => {
  it('searches files by text', async () => {
    await p.box.expectCall({
      tool: 'box_search',
      args: { query: 'invoice', type: 'file', limit: 5 },
      ok: 'invoice-2026-10.pdf',
      sent: {
        method: 'GET',
        url: '/2.0/search?query=invoice&type=file&limit=5',
        headers: { authorization: `Bearer ${BOX_TOKEN}` },
      },
    });
  });

  it('renames and moves a file with one PUT', async () => {
    const change = { name: 'Invoice October.pdf', parent: { id: '678' } };
    await p.box.expectCall({
      tool: 'box_update_file',
      args: { file_id: '12345', ...change },
      ok: 'Invoice October.pdf',
      sent: { method: 'PUT', url: '/2.0/files/12345', json: change },
    });
  });

  it("passes Box's message on when a folder name is taken", async () => {
    const folder = { name: 'Invoices', parent: { id: '0' } };
    await p.box.expectCall({
      tool: 'box_create_folder',
      args: folder,
      error: /box returned HTTP 409 Conflict: Item with the same name already exists/,
      sent: { method: 'POST', url: '/2.0/folders', json: folder },
    });
  });
});

describe('Google Sheets through /mcp/', () => {
  it('reads a range in A1 notation, percent-encoded in the path', async () => {
    await p['google-sheets'].expectCall({
      tool: 'google_sheets_read_range',
      args: {
        spreadsheetId: '1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms',
        range: 'Class Data!A2:E4',
        majorDimension: 'ROWS',
      },
      ok: 'Alexandra',
      sent: {
        method: 'GET',
        url: '/v4/spreadsheets/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/values/Class%20Data%21A2%3AE4?majorDimension=ROWS',
        headers: { authorization: `Bearer ${SHEETS_TOKEN}` },
      },
    });
  });

  it('appends a row as the user would type it', async () => {
    const rows = { values: [['2026-11-24', 'Coffee', 4.5]] };
    await p['google-sheets'].expectCall({
      tool: 'google_sheets_append_rows',
      args: {
        spreadsheetId: '1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms',
        range: 'Sheet1!A1',
        valueInputOption: 'USER_ENTERED',
        body: rows,
      },
      ok: 'Sheet1!A5:C5',
      sent: {
        method: 'POST',
        url: '/v4/spreadsheets/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/values/Sheet1%21A1:append?valueInputOption=USER_ENTERED',
        json: rows,
      },
    });
  });

  it("passes Google's message on for a spreadsheet that does not exist", async () => {
    const change = { requests: [{ addSheet: { properties: { title: 'Q4' } } }] };
    await p['google-sheets'].expectCall({
      tool: 'google_sheets_batch_update',
      args: { spreadsheetId: 'missing', ...change },
      error: /google-sheets returned HTTP 404 Not Found: Requested entity was not found\./,
      sent: { method: 'POST', url: '/v4/spreadsheets/missing:batchUpdate', json: change },
    });
  });
});

describe('Google Tasks through /mcp/', () => {
  it("lists the default list's open tasks", async () => {
    await p['google-tasks'].expectCall({
      tool: 'google_tasks_list_tasks',
      args: { tasklist: '@default', maxResults: 20, showCompleted: false },
      ok: 'Renew passport',
      sent: {
        method: 'GET',
        url: '/tasks/v1/lists/%40default/tasks?maxResults=20&showCompleted=false',
        headers: { authorization: `Bearer ${TASKS_TOKEN}` },
      },
    });
  });

  it('completes a task with a PATCH of its status', async () => {
    await p['google-tasks'].expectCall({
      tool: 'google_tasks_update_task',
      args: { tasklist: '@default', task: 'T1', status: 'completed' },
      ok: 'completed',
      sent: { method: 'PATCH', url: '/tasks/v1/lists/%40default/tasks/T1', json: { status: 'completed' } },
    });
  });

  it("passes Google's message on for a task that does not exist", async () => {
    await p['google-tasks'].expectCall({
      tool: 'google_tasks_delete_task',
      args: { tasklist: '@default', task: 'gone' },
      error: /google-tasks returned HTTP 404 Not Found: Task not found\./,
      sent: { method: 'DELETE', url: '/tasks/v1/lists/%40default/tasks/gone' },
    });
  });
});

describe('Zoom through /mcp/', () => {
  it("lists the connected user's upcoming meetings", async () => {
    await p.zoom.expectCall({
      tool: 'zoom_list_meetings',
      args: { userId: 'me', type: 'upcoming', page_size: 10 },
      ok: 'Weekly sync',
      sent: {
        method: 'GET',
        url: '/v2/users/me/meetings?type=upcoming&page_size=10',
        headers: { authorization: `Bearer ${ZOOM_TOKEN}` },
      },
    });
  });

  it('schedules a meeting and returns its join URL', async () => {
    const meeting = {
      topic: 'Design review',
      type: 2,
      start_time: '2026-12-02T16:00:00Z',
      duration: 45,
      timezone: 'Europe/Paris',
      settings: { waiting_room: true, auto_recording: 'cloud' },
    };
    await p.zoom.expectCall({
      tool: 'zoom_create_meeting',
      args: { userId: 'me', ...meeting },
      ok: 'https://us05web.zoom.us/j/85746065999?pwd=abc',
      sent: { method: 'POST', url: '/v2/users/me/meetings', json: meeting },
    });
  });

  it("passes Zoom's message on for a meeting that does not exist", async () => {
    await p.zoom.expectCall({
      tool: 'zoom_update_meeting',
      args: { meetingId: 111, duration: 60 },
      error: /zoom returned HTTP 404 Not Found: Meeting does not exist: 111\./,
      sent: { method: 'PATCH', url: '/v2/meetings/111', json: { duration: 60 } },
    });
  });
});
