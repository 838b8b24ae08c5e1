/**
 * Trello, YNAB, ClickSend and Linode, added to the catalog for issue 17, behind one gateway: each
 * connects (its credential check asserted), makes one read and one write with the exact request its
 * real API expects, and passes on one error in its real shape.
 */
import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, queryPairs, useProvidersHarness, type Answer } from './helpers.js';

const TRELLO_KEY = '0123456789abcdef0123456789abcdef';
const TRELLO_TOKEN = 'ATTA9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const YNAB_TOKEN = 'ynab-3c1f0b0a9e8d7c6b5a4f3e2d1c0b9a8f';
const CLICKSEND_USER = 'acme-ops';
const CLICKSEND_KEY = 'B1C2D3E4-F5A6-4B7C-8D9E-0A1B2C3D4E5F';
const LINODE_TOKEN = 'lin-7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f';

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const text = (status: number, body: string): Answer => ({
  status,
  body,
  headers: { 'content-type': 'text/plain; charset=utf-8' },
});

/** Trello: key and token as query parameters; errors as plain text. */
function trello(req: Received): Answer {
  const query = new Map(queryPairs(req));
  if (query.get('key') !== TRELLO_KEY || query.get('token') !== TRELLO_TOKEN)
    return text(401, 'invalid token');
  const path = req.url.split('?')[0];
  switch (`${req.method} ${path}`) {
    case 'GET /1/members/me':
      return jsonAnswer(200, { id: 'm1', username: 'adalovelace', fullName: 'Ada Lovelace' });
    case 'GET /1/lists/5f1a/cards':
      return jsonAnswer(200, [
        { id: 'c1', name: 'Write launch post', idList: '5f1a', shortUrl: 'https://trello.com/c/AbCd1234' },
      ]);
    case 'POST /1/cards':
      return jsonAnswer(200, {
        id: 'c2',
        name: 'Book venue',
        idList: '5f1a',
        shortUrl: 'https://trello.com/c/EfGh5678',
      });
    case 'PUT /1/cards/missing':
      return text(404, 'The requested resource was not found.');
    default:
      return text(404, 'Cannot find route');
  }
}

/** YNAB: bearer token; {data} envelopes; errors as {error: {id, name, detail}}. */
function ynab(req: Received): Answer {
  const failure = (status: number, id: string, name: string, detail: string) =>
    jsonAnswer(status, { error: { id, name, detail } });
  if (req.headers.authorization !== `Bearer ${YNAB_TOKEN}`)
    return failure(401, '401', 'unauthorized', 'Unauthorized');
  switch (`${req.method} ${req.url}`) {
    case 'GET /v1/user':
      return jsonAnswer(200, { data: { user: { id: 'aa248caa-eed7-4575-a990-717386438d2c' } } });
    case 'GET /v1/budgets/last-used/transactions?since_date=2026-11-01&type=uncategorized':
      return jsonAnswer(200, {
        data: {
          transactions: [{ id: 't1', date: '2026-11-03', amount: -12340, payee_name: 'Corner Cafe' }],
          server_knowledge: 42,
        },
      });
    case 'POST /v1/budgets/last-used/transactions':
      return jsonAnswer(201, { data: { transaction_ids: ['t2'], transaction: { id: 't2', amount: -4500 } } });
    case 'PUT /v1/budgets/last-used/transactions/gone':
      return failure(404, '404.2', 'resource_not_found', 'Resource not found');
    default:
      return failure(404, '404.1', 'not_found', 'Not found');
  }
}

/** ClickSend: basic auth (username, API key); {http_code, response_code, response_msg, data}. */
function clicksend(req: Received): Answer {
  const envelope = (status: number, code: string, msg: string, data: unknown = null) =>
    jsonAnswer(status, { http_code: status, response_code: code, response_msg: msg, data });
  if (req.headers.authorization !== basic(CLICKSEND_USER, CLICKSEND_KEY))
    return envelope(401, 'UNAUTHORIZED', 'Unauthorized');
  switch (`${req.method} ${req.url}`) {
    case 'GET /v3/account':
      return envelope(200, 'SUCCESS', 'Here are your account details.', {
        user_id: 1,
        username: CLICKSEND_USER,
        balance: '12.50',
      });
    case 'POST /v3/sms/send':
      return envelope(200, 'SUCCESS', 'Messages queued for delivery.', {
        total_price: 0.077,
        queued_count: 1,
        messages: [
          { message_id: 'BF7AD270-0DE2-418B-B606-71D527D9C1AE', to: '+61411111111', status: 'SUCCESS' },
        ],
      });
    case 'GET /v3/sms/inbound':
      return envelope(403, 'FORBIDDEN', 'Resource not allowed.');
    default:
      return envelope(404, 'NOT_FOUND', 'Resource not found.');
  }
}

/** Linode: bearer token; errors as {errors: [{reason, field}]}. */
function linode(req: Received): Answer {
  const failure = (status: number, reason: string) => jsonAnswer(status, { errors: [{ reason }] });
  if (req.headers.authorization !== `Bearer ${LINODE_TOKEN}`) return failure(401, 'Invalid Token');
  switch (`${req.method} ${req.url}`) {
    case 'GET /v4/profile':
      return jsonAnswer(200, { username: 'ops-acme', email: 'ops@acme.test' });
    case 'GET /v4/linode/instances?page=1&page_size=25':
      return jsonAnswer(200, {
        data: [{ id: 123, label: 'web-1', status: 'running', region: 'eu-central' }],
        page: 1,
        pages: 1,
        results: 1,
      });
    case 'POST /v4/linode/instances/123/reboot':
      return jsonAnswer(200, {});
    case 'POST /v4/linode/instances/999/shutdown':
      return failure(404, 'Not found');
    default:
      return failure(404, 'Not found');
  }
}

const p = useProvidersHarness([
  { provider: 'trello', auth: 'connect', basePath: '/1', answer: trello },
  { provider: 'ynab', auth: 'connect', basePath: '/v1', answer: ynab },
  { provider: 'clicksend', auth: 'connect', basePath: '/v3', answer: clicksend },
  { provider: 'linode', auth: 'connect', basePath: '/v4', answer: linode },
]);

describe('Trello through /mcp/', () => {
  it('connects with key and token in the query and names the member', async () => {
    const connected = await p.trello.connectProvider({ api_key: TRELLO_KEY, token: TRELLO_TOKEN });
    expect(connected.text).toContain('Connected Trello as adalovelace');
    p.trello.expectSent(
      {
        method: 'GET',
        path: '/1/members/me',
        query: [
          ['key', TRELLO_KEY],
          ['token', TRELLO_TOKEN],
        ],
      },
      { method: 'GET', path: '/1/members/me' },
    );
  });

  it("lists a list's cards and creates one", async () => {
    await p.trello.expectCall({
      tool: 'trello_list_cards',
      args: { idList: '5f1a' },
      ok: 'Write launch post',
      sent: {
        method: 'GET',
        path: '/1/lists/5f1a/cards',
        query: [
          ['key', TRELLO_KEY],
          ['token', TRELLO_TOKEN],
        ],
      },
    });
    const card = { idList: '5f1a', name: 'Book venue', desc: 'Seats 80.', pos: 'top' };
    await p.trello.expectCall({
      tool: 'trello_create_card',
      args: card,
      ok: 'https://trello.com/c/EfGh5678',
      sent: { method: 'POST', path: '/1/cards', json: card },
    });
  });

  it("passes Trello's plain-text error on", async () => {
    await p.trello.expectCall({
      tool: 'trello_update_card',
      args: { idCard: 'missing', closed: true },
      error: /trello returned HTTP 404 Not Found: The requested resource was not found\./,
      sent: { method: 'PUT', path: '/1/cards/missing', json: { closed: true } },
    });
  });
});

describe('YNAB through /mcp/', () => {
  it('connects after GET /user with the bearer token', async () => {
    const connected = await p.ynab.connectProvider({ api_key: YNAB_TOKEN });
    expect(connected.text).toContain('Connected YNAB');
    p.ynab.expectSent({ method: 'GET', url: '/v1/user', headers: { authorization: `Bearer ${YNAB_TOKEN}` } });
  });

  it('lists uncategorized transactions since a date and records a purchase in milliunits', async () => {
    await p.ynab.expectCall({
      tool: 'ynab_list_transactions',
      args: { budget_id: 'last-used', since_date: '2026-11-01', type: 'uncategorized' },
      ok: 'Corner Cafe',
      sent: {
        method: 'GET',
        url: '/v1/budgets/last-used/transactions?since_date=2026-11-01&type=uncategorized',
      },
    });
    const transaction = {
      account_id: '5c6a2a1e-3b8f-4d2e-9a71-0f4e8b2c7d13',
      date: '2026-11-24',
      amount: -4500,
      payee_name: 'Bakery',
      memo: 'Bread',
    };
    await p.ynab.expectCall({
      tool: 'ynab_create_transaction',
      args: { budget_id: 'last-used', transaction },
      ok: 't2',
      sent: { method: 'POST', url: '/v1/budgets/last-used/transactions', json: { transaction } },
    });
  });

  it("passes YNAB's error detail on", async () => {
    const transaction = {
      account_id: '5c6a2a1e-3b8f-4d2e-9a71-0f4e8b2c7d13',
      date: '2026-11-24',
      amount: -100,
    };
    await p.ynab.expectCall({
      tool: 'ynab_update_transaction',
      args: { budget_id: 'last-used', transaction_id: 'gone', transaction },
      error: /ynab returned HTTP 404 Not Found: Resource not found/,
      sent: { method: 'PUT', url: '/v1/budgets/last-used/transactions/gone', json: { transaction } },
    });
  });
});

describe('ClickSend through /mcp/', () => {
  it('connects with username and API key over basic auth and names the account', async () => {
    const connected = await p.clicksend.connectProvider({ username: CLICKSEND_USER, api_key: CLICKSEND_KEY });
    expect(connected.text).toContain(`Connected ClickSend as ${CLICKSEND_USER}`);
    p.clicksend.expectSent(
      { method: 'GET', url: '/v3/account', headers: { authorization: basic(CLICKSEND_USER, CLICKSEND_KEY) } },
      { method: 'GET', url: '/v3/account' },
    );
  });

  it('sends an SMS as a messages array', async () => {
    const messages = [{ to: '+61411111111', body: 'Your table is ready.', from: 'AcmeCafe' }];
    await p.clicksend.expectCall({
      tool: 'clicksend_send_sms',
      args: { messages },
      ok: 'BF7AD270-0DE2-418B-B606-71D527D9C1AE',
      sent: {
        method: 'POST',
        url: '/v3/sms/send',
        headers: { 'content-type': 'application/json' },
        json: { messages },
      },
    });
  });

  it('reports a refused request with its status', async () => {
    await p.clicksend.expectCall({
      tool: 'clicksend_list_inbound_sms',
      error: /clicksend returned HTTP 403 Forbidden/,
      sent: { method: 'GET', url: '/v3/sms/inbound' },
    });
  });
});

describe('Linode through /mcp/', () => {
  it('connects after GET /profile and names the user', async () => {
    const connected = await p.linode.connectProvider({ api_key: LINODE_TOKEN });
    expect(connected.text).toContain('Connected Linode (Akamai Cloud) as ops-acme');
    p.linode.expectSent(
      { method: 'GET', url: '/v4/profile', headers: { authorization: `Bearer ${LINODE_TOKEN}` } },
      { method: 'GET', url: '/v4/profile' },
    );
  });

  it('lists instances and reboots one', async () => {
    await p.linode.expectCall({
      tool: 'linode_list_instances',
      args: { page: 1, page_size: 25 },
      ok: 'web-1',
      sent: { method: 'GET', url: '/v4/linode/instances?page=1&page_size=25' },
    });
    await p.linode.expectCall({
      tool: 'linode_reboot_instance',
      args: { linodeId: 123 },
      ok: true,
      sent: { method: 'POST', url: '/v4/linode/instances/123/reboot' },
    });
  });

  it("passes Linode's error reason on", async () => {
    await p.linode.expectCall({
      tool: 'linode_shut_down_instance',
      args: { linodeId: 999 },
      error: /linode returned HTTP 404 Not Found: Not found/,
      sent: { method: 'POST', url: '/v4/linode/instances/999/shutdown' },
    });
  });
});
