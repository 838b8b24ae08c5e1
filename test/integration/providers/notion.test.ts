import { describe, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, useProviderHarness, type Answer } from './helpers.js';

const TOKEN = 'ntn_4512345678901a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e';
const PAGE_ID = '59833787-2cf9-4fdf-8782-e53db20768a5';
const DATA_SOURCE_ID = 'bc1211ca-e3f1-4939-ae34-5260b16f627c';

const page = (extra: object = {}) => ({
  object: 'page',
  id: PAGE_ID,
  url: 'https://www.notion.so/Launch-plan-598337872cf94fdf8782e53db20768a5',
  in_trash: false,
  parent: { type: 'page_id', page_id: '7a774b4f-1b0d-4a2c-9f0e-5d2b1c3e4f50' },
  properties: { title: { id: 'title', type: 'title', title: [{ plain_text: 'Launch plan' }] } },
  ...extra,
});

/** A loopback Notion API: bearer token and version header checked, answers and errors in Notion's shapes. */
function notion(req: Received): Answer {
  const error = (status: number, code: string, message: string, headers: Record<string, string> = {}) =>
    jsonAnswer(
      status,
      { object: 'error', status, code, message, request_id: 'a3f7c8e2-1b4d-4e5f-9a6b-0c1d2e3f4a5b' },
      headers,
    );
  if (req.headers.authorization !== `Bearer ${TOKEN}`)
    return error(401, 'unauthorized', 'API token is invalid.');
  if (req.headers['notion-version'] !== '2026-03-11')
    return error(400, 'missing_version', 'Notion-Version header failed validation.');
  switch (`${req.method} ${req.url}`) {
    case 'POST /v1/search':
      return jsonAnswer(200, {
        object: 'list',
        results: [page()],
        next_cursor: null,
        has_more: false,
        type: 'page_or_data_source',
        page_or_data_source: {},
      });
    case 'POST /v1/pages':
      return jsonAnswer(200, page({ id: 'b55c9c91-384d-452b-81db-d1ef79372b75' }));
    case `GET /v1/pages/${PAGE_ID}/markdown`:
      return jsonAnswer(200, {
        object: 'page_markdown',
        id: PAGE_ID,
        markdown: '# Launch plan\n\n- [ ] Draft announcement\n- [x] Book venue',
        truncated: false,
        unknown_block_ids: [],
      });
    case 'GET /v1/pages/00000000-0000-0000-0000-000000000000/markdown':
      return error(
        404,
        'object_not_found',
        'Could not find page with ID: 00000000-0000-0000-0000-000000000000. Make sure the relevant pages and databases are shared with your integration.',
      );
    case `POST /v1/data_sources/${DATA_SOURCE_ID}/query`:
      return error(429, 'rate_limited', 'You have been rate limited. Please try again in a few minutes.', {
        'retry-after': '2',
      });
    default:
      return error(400, 'invalid_request_url', `Invalid request URL: ${req.method} ${req.url}`);
  }
}

const notionApi = useProviderHarness({
  provider: 'notion',
  auth: 'oauth',
  accessToken: TOKEN,
  account: 'Acme HQ',
  basePath: '/v1',
  answer: notion,
});

describe('Notion over /mcp/ with a seeded OAuth connection', () => {
  it('searches with a JSON POST carrying the bearer token and the Notion-Version header', async () => {
    const search = { query: 'launch', filter: { property: 'object', value: 'page' }, page_size: 5 };
    await notionApi.expectCall({
      tool: 'notion_search',
      args: search,
      ok: 'Launch-plan-598337872cf94fdf8782e53db20768a5',
      sent: {
        method: 'POST',
        url: '/v1/search',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'notion-version': '2026-03-11',
          'content-type': 'application/json',
        },
        json: search,
      },
    });
  });

  it('creates a page from Markdown under a parent page', async () => {
    const markdownPage = {
      parent: { page_id: PAGE_ID },
      markdown: '# Retro notes\n\n## What went well\n\n- Shipped on time',
    };
    await notionApi.expectCall({
      tool: 'notion_create_page',
      args: markdownPage,
      ok: 'b55c9c91-384d-452b-81db-d1ef79372b75',
      sent: { method: 'POST', url: '/v1/pages', json: markdownPage },
    });
  });

  it("reads a page's content as Markdown", async () => {
    await notionApi.expectCall({
      tool: 'notion_get_page_markdown',
      args: { page_id: PAGE_ID },
      ok: '- [x] Book venue',
      sent: { method: 'GET', url: `/v1/pages/${PAGE_ID}/markdown`, body: '' },
    });
  });

  it("passes Notion's own error message on, with what to check", async () => {
    await notionApi.expectCall({
      tool: 'notion_get_page_markdown',
      args: { page_id: '00000000-0000-0000-0000-000000000000' },
      error:
        /HTTP 404 Not Found: Could not find page with ID: .*shared with your integration\.\nCheck the identifiers/,
      sent: { method: 'GET', url: '/v1/pages/00000000-0000-0000-0000-000000000000/markdown' },
    });
  });

  it("relays Notion's 429 with its Retry-After", async () => {
    const query = {
      filter: { property: 'Status', status: { equals: 'Done' } },
      sorts: [{ timestamp: 'last_edited_time', direction: 'descending' }],
    };
    await notionApi.expectCall({
      tool: 'notion_query_data_source',
      args: { data_source_id: DATA_SOURCE_ID, ...query },
      error: /HTTP 429 Too Many Requests: You have been rate limited.*retry after 2 seconds/s,
      sent: { method: 'POST', url: `/v1/data_sources/${DATA_SOURCE_ID}/query`, json: query },
    });
  });
});
