/**
 * Marketing, CRM and payments providers added to the catalog for issue 17 (Mailchimp, Postmark,
 * Salesloft, Square), one gateway for all four: each connects (its credential check asserted),
 * makes one read and one write with the exact request its real API expects, and passes on one
 * error in its real shape.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { formBody, jsonAnswer, useProvidersHarness, type Answer } from './helpers.js';

const MAILCHIMP_KEY = '0f4c1e2d3b4a59687766554433221100-us6';
const POSTMARK_TOKEN = '3f2a8c4e-1b7d-4e6f-9a0c-5d8b2e7f1a34';
const SALESLOFT_KEY = 'v2_ak_101_9c3e7a1f5b2d8e4c6a0f3b7d9e1c5a8b';
const SQUARE_TOKEN = 'EAAAl3x8kQ2mV9pT7sR4wN6yB1cF5hJ0gK';

const basic = (user: string, password: string) =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const ANN_HASH = createHash('md5').update('ann@example.com').digest('hex');

/** Mailchimp Marketing API: basic auth with the key as password; errors as problem+json. */
function mailchimp(req: Received): Answer {
  const problem = (status: number, title: string, detail: string) =>
    jsonAnswer(status, {
      type: 'https://mailchimp.com/developer/marketing/docs/errors/',
      title,
      status,
      detail,
      instance: 'a1b2',
    });
  if (req.headers.authorization !== basic('toolgate', MAILCHIMP_KEY))
    return problem(
      401,
      'API Key Invalid',
      'Your API key may be invalid, or you’ve attempted to access the wrong datacenter.',
    );
  switch (`${req.method} ${req.url}`) {
    case 'GET /3.0/ping':
      return jsonAnswer(200, { health_status: "Everything's Chimpy!" });
    case 'GET /3.0/':
      return jsonAnswer(200, { account_id: '8d3a3db4d97663a9074efcc16', account_name: 'Acme Bakery' });
    case 'GET /3.0/search-members?query=ann%40example.com':
      return jsonAnswer(200, {
        exact_matches: {
          members: [{ id: ANN_HASH, email_address: 'ann@example.com', status: 'subscribed' }],
          total_items: 1,
        },
        full_search: { members: [], total_items: 0 },
      });
    case `PUT /3.0/lists/b1c2d3/members/${ANN_HASH}`:
      return jsonAnswer(200, { id: ANN_HASH, email_address: 'ann@example.com', status: 'subscribed' });
    case `POST /3.0/lists/b1c2d3/members/${ANN_HASH}/tags`:
      return problem(400, 'Invalid Resource', 'The tag name must be 100 characters or fewer.');
    default:
      return problem(404, 'Resource Not Found', `The requested resource could not be found: ${req.url}`);
  }
}

/** Postmark: X-Postmark-Server-Token; errors as {ErrorCode, Message}. */
function postmark(req: Received): Answer {
  const failure = (status: number, code: number, message: string) =>
    jsonAnswer(status, { ErrorCode: code, Message: message });
  if (req.headers['x-postmark-server-token'] !== POSTMARK_TOKEN)
    return failure(
      401,
      10,
      'The Server Token you provided in the X-Postmark-Server-Token request header was invalid.',
    );
  switch (`${req.method} ${req.url}`) {
    case 'GET /server':
      return jsonAnswer(200, { ID: 1, Name: 'Acme transactional', Color: 'blue' });
    case 'POST /email': {
      const { From } = JSON.parse(req.body) as { From: string };
      if (From !== 'support@acme.test')
        return failure(
          422,
          400,
          "The 'From' address you supplied (nobody@elsewhere.test) is not a Sender Signature on your account.",
        );
      return jsonAnswer(200, {
        To: 'ann@example.com',
        SubmittedAt: '2026-11-24T10:00:00Z',
        MessageID: 'b7bc2f4a-e38e-4336-af7d-e6c392c2f817',
        ErrorCode: 0,
        Message: 'OK',
      });
    }
    case 'GET /messages/outbound?count=10&offset=0&recipient=ann%40example.com':
      return jsonAnswer(200, {
        TotalCount: 1,
        Messages: [
          { MessageID: 'b7bc2f4a-e38e-4336-af7d-e6c392c2f817', Subject: 'Your order', Status: 'Sent' },
        ],
      });
    default:
      return failure(404, 0, 'Not found');
  }
}

/** Salesloft: bearer key; {data} envelopes; errors as {status, error}. */
function salesloft(req: Received): Answer {
  const failure = (status: number, error: string) => jsonAnswer(status, { status, error });
  if (req.headers.authorization !== `Bearer ${SALESLOFT_KEY}`) return failure(401, 'Unauthorized');
  switch (`${req.method} ${req.url}`) {
    case 'GET /v2/me.json':
      return jsonAnswer(200, { data: { id: 7, guid: 'u-7', email: 'rep@acme.test', name: 'Rae Rep' } });
    case 'GET /v2/people.json?email_addresses=ann%40example.com&per_page=5':
      return jsonAnswer(200, {
        metadata: { paging: { per_page: 5, current_page: 1, next_page: null } },
        data: [{ id: 314, first_name: 'Ann', last_name: 'Lee', email_address: 'ann@example.com' }],
      });
    case 'POST /v2/notes.json':
      return jsonAnswer(200, { data: { id: 99, content: 'Asked for a demo next week.' } });
    case 'POST /v2/cadence_memberships.json?person_id=314&cadence_id=4040':
      return failure(404, 'Not Found');
    default:
      return failure(404, 'Not Found');
  }
}

/** Square: bearer token; errors as {errors: [{category, code, detail}]}. */
function square(req: Received): Answer {
  const failure = (status: number, code: string, detail: string) =>
    jsonAnswer(status, { errors: [{ category: 'INVALID_REQUEST_ERROR', code, detail }] });
  if (req.headers.authorization !== `Bearer ${SQUARE_TOKEN}`)
    return failure(401, 'UNAUTHORIZED', 'This request could not be authorized.');
  switch (`${req.method} ${req.url}`) {
    case 'GET /v2/payments?begin_time=2026-11-01T00%3A00%3A00Z&location_id=L88917AVBK2S5&limit=2':
      return jsonAnswer(200, {
        payments: [
          {
            id: 'GQTFp1ZlXdpoW4o6eGiZhbjosiDFf',
            amount_money: { amount: 1500, currency: 'USD' },
            status: 'COMPLETED',
          },
        ],
      });
    case 'POST /v2/refunds':
      return jsonAnswer(200, {
        refund: { id: 'R1', status: 'PENDING', amount_money: { amount: 500, currency: 'USD' } },
      });
    case 'POST /v2/customers':
      return failure(400, 'INVALID_EMAIL_ADDRESS', 'Expected email_address to be a valid email address.');
    default:
      return failure(404, 'NOT_FOUND', `Unknown route ${req.url}`);
  }
}

const p = useProvidersHarness([
  { provider: 'mailchimp', auth: 'connect', basePath: '/3.0', answer: mailchimp },
  { provider: 'postmark', auth: 'connect', answer: postmark },
  { provider: 'salesloft', auth: 'connect', answer: salesloft },
  { provider: 'square', auth: 'oauth', accessToken: SQUARE_TOKEN, answer: square },
]);

describe('Mailchimp through /mcp/', () => {
  it('connects with the key as the basic-auth password, after GET /ping, and names the account', async () => {
    const connected = await p.mailchimp.connectProvider({ api_key: MAILCHIMP_KEY }, { dc: 'us6' });
    expect(connected.text).toContain('Connected Mailchimp as Acme Bakery');
    p.mailchimp.expectSent(
      { method: 'GET', url: '/3.0/ping', headers: { authorization: basic('toolgate', MAILCHIMP_KEY) } },
      { method: 'GET', url: '/3.0/' },
    );
  });

  it('searches members by email and adds or updates one by its subscriber hash', async () => {
    await p.mailchimp.expectCall({
      tool: 'mailchimp_search_members',
      args: { query: 'ann@example.com' },
      ok: 'subscribed',
      sent: { method: 'GET', url: '/3.0/search-members?query=ann%40example.com' },
    });
    const member = {
      email_address: 'ann@example.com',
      status_if_new: 'subscribed',
      merge_fields: { FNAME: 'Ann' },
    };
    await p.mailchimp.expectCall({
      tool: 'mailchimp_add_or_update_member',
      args: { list_id: 'b1c2d3', subscriber_hash: ANN_HASH, ...member },
      ok: ANN_HASH,
      sent: { method: 'PUT', url: `/3.0/lists/b1c2d3/members/${ANN_HASH}`, json: member },
    });
  });

  it("passes Mailchimp's problem detail on", async () => {
    const tags = { tags: [{ name: 'x'.repeat(120), status: 'active' }] };
    await p.mailchimp.expectCall({
      tool: 'mailchimp_tag_member',
      args: { list_id: 'b1c2d3', subscriber_hash: ANN_HASH, ...tags },
      error: /mailchimp returned HTTP 400 Bad Request: The tag name must be 100 characters or fewer\./,
      sent: { method: 'POST', url: `/3.0/lists/b1c2d3/members/${ANN_HASH}/tags`, json: tags },
    });
  });
});

describe('Postmark through /mcp/', () => {
  it('refuses a server token Postmark rejects, then connects as the server', async () => {
    const wrong = await p.postmark.connectProvider({ api_key: '00000000-0000-0000-0000-000000000000' });
    expect(wrong.text).toMatch(/Postmark refused the credential \(HTTP 401: The Server Token you provided/);
    const connected = await p.postmark.connectProvider({ api_key: POSTMARK_TOKEN });
    expect(connected.text).toContain('Connected Postmark as Acme transactional');
    p.postmark.expectSent(
      { method: 'GET', url: '/server' },
      { method: 'GET', url: '/server', headers: { 'x-postmark-server-token': POSTMARK_TOKEN } },
      { method: 'GET', url: '/server' },
    );
  });

  it('sends an email with PascalCase fields and finds it among sent messages', async () => {
    const mail = {
      From: 'support@acme.test',
      To: 'ann@example.com',
      Subject: 'Your order',
      TextBody: 'It has shipped.',
    };
    await p.postmark.expectCall({
      tool: 'postmark_send_email',
      args: mail,
      ok: 'b7bc2f4a-e38e-4336-af7d-e6c392c2f817',
      sent: {
        method: 'POST',
        url: '/email',
        headers: { 'x-postmark-server-token': POSTMARK_TOKEN },
        json: mail,
      },
    });
    await p.postmark.expectCall({
      tool: 'postmark_search_sent_messages',
      args: { count: 10, offset: 0, recipient: 'ann@example.com' },
      ok: 'Your order',
      sent: { method: 'GET', url: '/messages/outbound?count=10&offset=0&recipient=ann%40example.com' },
    });
  });

  it("passes Postmark's Message on when the sender is not confirmed", async () => {
    const mail = { From: 'nobody@elsewhere.test', To: 'ann@example.com', Subject: 'Hi', TextBody: 'Hi' };
    await p.postmark.expectCall({
      tool: 'postmark_send_email',
      args: mail,
      error:
        /postmark returned HTTP 422 Unprocessable Entity: The 'From' address you supplied \(nobody@elsewhere\.test\) is not a Sender Signature/,
      sent: { method: 'POST', url: '/email', json: mail },
    });
  });
});

describe('Salesloft through /mcp/', () => {
  it('connects after GET /v2/me.json and names the user', async () => {
    const connected = await p.salesloft.connectProvider({ api_key: SALESLOFT_KEY });
    expect(connected.text).toContain('Connected Salesloft as rep@acme.test');
    p.salesloft.expectSent(
      { method: 'GET', url: '/v2/me.json', headers: { authorization: `Bearer ${SALESLOFT_KEY}` } },
      { method: 'GET', url: '/v2/me.json' },
    );
  });

  it('finds a person by email and logs a note on them as a form body', async () => {
    await p.salesloft.expectCall({
      tool: 'salesloft_list_people',
      args: { email_addresses: ['ann@example.com'], per_page: 5 },
      ok: '314',
      sent: { method: 'GET', url: '/v2/people.json?email_addresses=ann%40example.com&per_page=5' },
    });
    const { requests } = await p.salesloft.expectCall({
      tool: 'salesloft_create_note',
      args: {
        content: 'Asked for a demo next week.',
        associated_with_type: 'person',
        associated_with_id: 314,
      },
      ok: 'Asked for a demo',
      sent: {
        method: 'POST',
        url: '/v2/notes.json',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      },
    });
    expect(new Map(formBody(requests[0]))).toEqual(
      new Map([
        ['content', 'Asked for a demo next week.'],
        ['associated_with_type', 'person'],
        ['associated_with_id', '314'],
      ]),
    );
  });

  it("passes Salesloft's error on for a cadence that does not exist", async () => {
    await p.salesloft.expectCall({
      tool: 'salesloft_add_person_to_cadence',
      args: { person_id: 314, cadence_id: 4040 },
      error: /salesloft returned HTTP 404 Not Found: Not Found/,
      sent: { method: 'POST', url: '/v2/cadence_memberships.json?person_id=314&cadence_id=4040' },
    });
  });
});

describe('Square through /mcp/ (seeded OAuth connection)', () => {
  it("lists a location's payments since a time", async () => {
    await p.square.expectCall({
      tool: 'square_list_payments',
      args: { begin_time: '2026-11-01T00:00:00Z', location_id: 'L88917AVBK2S5', limit: 2 },
      ok: 'GQTFp1ZlXdpoW4o6eGiZhbjosiDFf',
      sent: {
        method: 'GET',
        url: '/v2/payments?begin_time=2026-11-01T00%3A00%3A00Z&location_id=L88917AVBK2S5&limit=2',
        headers: { authorization: `Bearer ${SQUARE_TOKEN}` },
      },
    });
  });

  it('refunds part of a payment with an idempotency key', async () => {
    const refund = {
      idempotency_key: '9b7f2dcf-49da-4411-b23e-a2d6af21333a',
      payment_id: 'GQTFp1ZlXdpoW4o6eGiZhbjosiDFf',
      amount_money: { amount: 500, currency: 'USD' },
      reason: 'Damaged item',
    };
    await p.square.expectCall({
      tool: 'square_refund_payment',
      args: refund,
      ok: 'PENDING',
      sent: { method: 'POST', url: '/v2/refunds', json: refund },
    });
  });

  it("passes Square's error detail on", async () => {
    await p.square.expectCall({
      tool: 'square_create_customer',
      args: { given_name: 'Ann', email_address: 'not-an-email' },
      error: /square returned HTTP 400 Bad Request: Expected email_address to be a valid email address\./,
      sent: {
        method: 'POST',
        url: '/v2/customers',
        json: { given_name: 'Ann', email_address: 'not-an-email' },
      },
    });
  });
});
