import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, useProviderHarness, type Answer } from './helpers.js';

const KEY = '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';
const UNVERIFIED_SENDER =
  'The from address does not match a verified Sender Identity. Mail cannot be sent until this error is resolved.';

/** SendGrid's error shape: {errors: [{message, field, help}]}. */
function sendgridError(status: number, message: string, field: string | null = null, headers = {}): Answer {
  return jsonAnswer(status, { errors: [{ message, field, help: null }] }, headers);
}

/** A loopback SendGrid v3 API. */
function sendgrid(req: Received): Answer {
  if (req.headers.authorization !== `Bearer ${KEY}`) return sendgridError(401, 'authorization required');
  const route = `${req.method} ${req.url}`;
  if (route === 'GET /v3/scopes') return jsonAnswer(200, { scopes: ['mail.send', 'marketing.read'] });
  if (route === 'GET /v3/user/email') return jsonAnswer(200, { email: 'ops@acme.test' });
  if (route === 'POST /v3/mail/send') {
    const body = JSON.parse(req.body) as { from: { email: string } };
    if (body.from.email !== 'support@acme.test') return sendgridError(403, UNVERIFIED_SENDER, 'from');
    return { status: 202, headers: { 'x-message-id': 'W86EgYT6SQKk0lRflfLRsA' } };
  }
  if (route === 'GET /v3/templates?generations=dynamic&page_size=10')
    return jsonAnswer(200, {
      result: [
        {
          id: 'd-13b8f94fbcae4ec6b75270d6cb59f932',
          name: 'Welcome',
          generation: 'dynamic',
          updated_at: '2026-03-01 10:00:00',
          versions: [{ id: '8aefe0ee-f12b-4575-b5b7-c97e21cb36f3', name: 'v1', active: 1 }],
        },
      ],
      _metadata: { self: 'https://api.sendgrid.com/v3/templates?page_size=10', count: 1 },
    });
  if (route === 'POST /v3/marketing/contacts/search')
    return jsonAnswer(200, {
      result: [
        {
          id: 'ca4b4a34-8c4a-4a5e-9f0a-5d1f7b7b2e11',
          email: 'ann@example.com',
          list_ids: [],
          created_at: '2026-02-01T10:00:00Z',
          updated_at: '2026-02-01T10:00:00Z',
        },
      ],
      contact_count: 1,
    });
  if (req.method === 'GET' && req.url.startsWith('/v3/stats?'))
    return sendgridError(429, 'too many requests', null, {
      'x-ratelimit-limit': '150',
      'x-ratelimit-remaining': '0',
      'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 30),
    });
  return sendgridError(404, `no route for ${route}`);
}

const p = useProviderHarness({ provider: 'sendgrid', auth: 'connect', answer: sendgrid });

describe('sendgrid through /mcp/', () => {
  it('refuses a key SendGrid rejects, and a region that does not exist', async () => {
    const wrong = await p.connectProvider({ api_key: 'SG.wrong.key' });
    expect(wrong.text).toMatch(/SendGrid refused the credential \(HTTP 401: authorization required\)/);
    const region = await p.connectProvider({ api_key: KEY }, { region: 'us' });
    expect(region.text).toContain('fields.region must be one of global, eu.');
    p.expectSent({ method: 'GET', url: '/v3/scopes' });
  });

  it('connects (EU region) after GET /v3/scopes and names the account from /v3/user/email', async () => {
    const connected = await p.connectProvider({ api_key: KEY }, { region: 'eu' });
    expect(connected.text).toContain('Connected SendGrid as ops@acme.test');
    p.expectSent(
      { method: 'GET', url: '/v3/scopes', headers: { authorization: `Bearer ${KEY}` } },
      { method: 'GET', url: '/v3/user/email' },
    );
  });

  it('sends mail as {personalizations, from, subject, content} and reports the 202', async () => {
    const mail = {
      personalizations: [{ to: [{ email: 'ann@example.com', name: 'Ann' }], subject: 'Your order' }],
      from: { email: 'support@acme.test', name: 'Acme Support' },
      content: [{ type: 'text/plain', value: 'It has shipped.' }],
      categories: ['orders'],
    };
    await p.expectCall({
      tool: 'sendgrid_send_email',
      args: mail,
      ok: true,
      text: 'Done (HTTP 202).',
      sent: {
        method: 'POST',
        url: '/v3/mail/send',
        headers: { 'content-type': 'application/json' },
        json: mail,
      },
    });
  });

  it('passes SendGrid’s own explanation of a refused send to the agent', async () => {
    const mail = {
      personalizations: [{ to: [{ email: 'ann@example.com' }] }],
      from: { email: 'nobody@elsewhere.test' },
      subject: 'Hi',
      content: [{ type: 'text/plain', value: 'Hi' }],
    };
    await p.expectCall({
      tool: 'sendgrid_send_email',
      args: mail,
      error: `sendgrid returned HTTP 403 Forbidden: ${UNVERIFIED_SENDER}`,
      sent: { method: 'POST', url: '/v3/mail/send', json: mail },
    });
  });

  it('lists dynamic templates and searches contacts with SGQL', async () => {
    const templates = await p.call('sendgrid_list_templates', {
      generations: 'dynamic',
      page_size: 10,
    });
    expect(templates.text).toContain('d-13b8f94fbcae4ec6b75270d6cb59f932');
    const found = await p.call('sendgrid_search_contacts', { query: "email LIKE 'ann%'" });
    expect(found.text).toContain('ann@example.com');
    p.expectSent(
      { method: 'GET', url: '/v3/templates?generations=dynamic&page_size=10' },
      { method: 'POST', url: '/v3/marketing/contacts/search', json: { query: "email LIKE 'ann%'" } },
    );
  });

  it('turns a 429 into a wait computed from X-RateLimit-Reset', async () => {
    await p.expectCall({
      tool: 'sendgrid_get_stats',
      args: { start_date: '2026-11-01' },
      error:
        /HTTP 429 Too Many Requests: too many requests\nsendgrid is rate limiting these calls: retry after (29|30) seconds/,
      sent: { method: 'GET', url: '/v3/stats?start_date=2026-11-01' },
    });
  });
});
