import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, useProviderHarness, type Answer } from './helpers.js';

const EMAIL = 'agent@acme.test';
const TOKEN = 'wAhT6t0pXbyJkmEjWVr4zX2sqdLxBMGJgr1Tj5ZP';
const TICKET = {
  id: 35436,
  url: 'https://acme.zendesk.com/api/v2/tickets/35436.json',
  subject: 'Printer is on fire',
  description: 'The smoke is very colorful.',
  status: 'open',
  priority: 'high',
  type: 'incident',
  requester_id: 20978392,
  assignee_id: null,
  group_id: null,
  tags: ['printer'],
  created_at: '2026-11-20T10:00:00Z',
  updated_at: '2026-11-20T10:00:00Z',
};

/** A loopback Zendesk Support API under /api/v2: basic auth as {email}/token:{api_token}. */
function zendesk(req: Received): Answer {
  const basic = `Basic ${Buffer.from(`${EMAIL}/token:${TOKEN}`).toString('base64')}`;
  if (req.headers.authorization !== basic) return jsonAnswer(401, { error: "Couldn't authenticate you" });
  const route = `${req.method} ${req.url}`;
  if (route === 'GET /api/v2/users/me.json')
    return jsonAnswer(200, {
      user: { id: 1, name: 'Ann Agent', email: EMAIL, role: 'agent', organization_id: null },
    });
  if (route === 'GET /api/v2/search.json?query=type%3Aticket%20status%3Aopen&sort_by=updated_at&per_page=25')
    return jsonAnswer(200, {
      results: [{ ...TICKET, result_type: 'ticket' }],
      count: 1,
      next_page: null,
      previous_page: null,
    });
  if (route === 'GET /api/v2/tickets.json?page[size]=25&page[after]=xyz')
    return jsonAnswer(200, {
      tickets: [TICKET],
      meta: { has_more: false, after_cursor: null, before_cursor: 'xyz' },
      links: { next: null, prev: null },
    });
  if (route === 'POST /api/v2/tickets.json') return jsonAnswer(201, { ticket: TICKET, audit: { id: 1 } });
  if (route === 'PUT /api/v2/tickets/35436.json')
    return jsonAnswer(422, {
      error: 'RecordInvalid',
      description: 'Record validation errors',
      details: { status: [{ description: 'Status: closed prevents ticket update', error: 'InvalidValue' }] },
    });
  if (route === 'GET /api/v2/tickets/99.json')
    return jsonAnswer(404, { error: 'RecordNotFound', description: 'Not found' });
  if (route === 'GET /api/v2/users/search.json?query=jane%40example.com')
    return {
      status: 429,
      body: 'Number of allowed API requests per minute exceeded',
      headers: { 'content-type': 'text/plain', 'retry-after': '7' },
    };
  return jsonAnswer(404, { error: 'InvalidEndpoint', description: `Not found: ${route}` });
}

const p = useProviderHarness({ provider: 'zendesk', auth: 'connect', answer: zendesk, basePath: '/api/v2' });

describe('zendesk through /mcp/', () => {
  it('needs a subdomain that is one DNS label, and refuses a wrong token', async () => {
    const host = await p.connectProvider({ email: EMAIL, api_token: TOKEN }, { subdomain: 'acme.evil.test' });
    expect(host.text).toContain('fields.subdomain is not a valid Zendesk subdomain');
    const wrong = await p.connectProvider({ email: EMAIL, api_token: 'nope' }, { subdomain: 'acme' });
    expect(wrong.text).toMatch(/Zendesk refused the credential \(HTTP 401: Couldn't authenticate you\)/);
    p.expectSent({ method: 'GET', url: '/api/v2/users/me.json' });
  });

  it('connects with {email}/token and the API token over HTTP basic, named by /users/me', async () => {
    const connected = await p.connectProvider({ email: EMAIL, api_token: TOKEN }, { subdomain: 'acme' });
    expect(connected.text).toContain(`Connected Zendesk as ${EMAIL}`);
    const [verify] = p.expectSent(
      { method: 'GET', url: '/api/v2/users/me.json' },
      { method: 'GET', url: '/api/v2/users/me.json' },
    );
    expect(Buffer.from(verify!.headers.authorization!.slice('Basic '.length), 'base64').toString()).toBe(
      `${EMAIL}/token:${TOKEN}`,
    );
  });

  it('searches with Zendesk’s query syntax and pages tickets with page[size] and page[after]', async () => {
    const found = await p.call('zendesk_search', {
      query: 'type:ticket status:open',
      sort_by: 'updated_at',
      per_page: 25,
    });
    expect(found.text).toContain('Printer is on fire');
    const listed = await p.call('zendesk_list_tickets', { page: { size: 25, after: 'xyz' } });
    expect(listed.isError).toBeFalsy();
    p.expectSent(
      {
        method: 'GET',
        url: '/api/v2/search.json?query=type%3Aticket%20status%3Aopen&sort_by=updated_at&per_page=25',
      },
      { method: 'GET', url: '/api/v2/tickets.json?page[size]=25&page[after]=xyz' },
    );
  });

  it('creates a ticket with its first comment and requester', async () => {
    const ticket = {
      subject: 'Printer is on fire',
      comment: { body: 'The smoke is very colorful.' },
      requester: { name: 'Jane', email: 'jane@example.com' },
      priority: 'high',
      type: 'incident',
    };
    const created = await p.call('zendesk_create_ticket', { ticket });
    expect(created.text).toContain('35436');
    p.expectSent({
      method: 'POST',
      url: '/api/v2/tickets.json',
      headers: { 'content-type': 'application/json' },
      json: { ticket },
    });
  });

  it('shows Zendesk’s validation details and not-found description to the agent', async () => {
    const ticket = { comment: { body: 'Any news?', public: false }, status: 'open' };
    await p.expectCall({
      tool: 'zendesk_update_ticket',
      args: { ticket_id: 35436, ticket },
      error: true,
      text:
        'zendesk returned HTTP 422 Unprocessable Entity: RecordInvalid: Record validation errors ' +
        '(Status: closed prevents ticket update).\n' +
        'Fix the arguments as the message says; a closed ticket cannot be updated at all.',
      sent: { method: 'PUT', url: '/api/v2/tickets/35436.json', json: { ticket } },
    });

    const missing = await p.call('zendesk_get_ticket', { ticket_id: 99 });
    expect(missing.text).toMatch(
      /^zendesk returned HTTP 404 Not Found: RecordNotFound: Not found\.\nCheck the ids/,
    );
    p.expectSent({ method: 'GET', url: '/api/v2/tickets/99.json' });
  });

  it('passes a 429 with Retry-After on as a wait', async () => {
    await p.expectCall({
      tool: 'zendesk_search_users',
      args: { query: 'jane@example.com' },
      error:
        /HTTP 429 Too Many Requests: Number of allowed API requests per minute exceeded\nzendesk is rate limiting these calls: retry after 7 seconds/,
      sent: { method: 'GET', url: '/api/v2/users/search.json?query=jane%40example.com' },
    });
  });
});
