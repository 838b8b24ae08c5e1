import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { expectToolError } from '../../helpers/results.js';
import { jsonAnswer, useProviderHarness, type Answer } from './helpers.js';

const SID = 'AC0123456789abcdef0123456789abcdef';
const TOKEN = 'f0e1d2c3b4a5968778695a4b3c2d1e0f';
const ACCOUNT = `/2010-04-01/Accounts/${SID}`;
const BASIC = `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`;

/** Twilio's error shape: {code, message, more_info, status}. */
function twilioError(status: number, code: number, message: string, headers = {}): Answer {
  return jsonAnswer(
    status,
    { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status },
    headers,
  );
}

function message(fields: Record<string, unknown>) {
  return {
    account_sid: SID,
    api_version: '2010-04-01',
    sid: 'SM1f0e8ae6ade43cb3c0ce4525424e404f',
    status: 'queued',
    direction: 'outbound-api',
    num_segments: '1',
    num_media: '0',
    price: null,
    price_unit: 'USD',
    error_code: null,
    error_message: null,
    date_created: 'Fri, 20 Nov 2026 10:00:00 +0000',
    date_sent: null,
    uri: `${ACCOUNT}/Messages/SM1f0e8ae6ade43cb3c0ce4525424e404f.json`,
    ...fields,
  };
}

/** A loopback Twilio API: HTTP basic with the SID and token, every path under the account. */
function twilio(req: Received): Answer {
  if (req.headers.authorization !== BASIC) return twilioError(401, 20003, 'Authenticate');
  const route = `${req.method} ${req.url}`;
  if (route === `GET ${ACCOUNT}.json`)
    return jsonAnswer(200, {
      sid: SID,
      friendly_name: 'Acme Support',
      status: 'active',
      type: 'Full',
      auth_token: TOKEN,
    });
  if (route === `POST ${ACCOUNT}/Messages.json`) {
    const form = new URLSearchParams(req.body);
    if (form.get('To') === '+1555') return twilioError(400, 21211, "Invalid 'To' Phone Number: +1555");
    return jsonAnswer(201, message({ to: form.get('To'), from: form.get('From'), body: form.get('Body') }));
  }
  if (route === `GET ${ACCOUNT}/Messages.json?To=%2B14155552671&PageSize=20`)
    return jsonAnswer(200, {
      messages: [message({ to: '+14155552671', from: '+14155550100', body: 'Hi', status: 'delivered' })],
      next_page_uri: null,
      page: 0,
      page_size: 20,
    });
  if (route === `GET ${ACCOUNT}/Calls.json`)
    return twilioError(429, 20429, 'Too Many Requests', { 'retry-after': '2' });
  return twilioError(404, 20404, `The requested resource ${req.url} was not found`);
}

const p = useProviderHarness({
  provider: 'twilio',
  auth: 'connect',
  answer: twilio,
  basePath: '/2010-04-01/Accounts',
});

describe('twilio through /mcp/', () => {
  it('checks the SID and token by fetching the account, and refuses a wrong token', async () => {
    expectToolError(
      await p.connectProvider({ account_sid: SID, auth_token: '0'.repeat(32) }),
      /Twilio refused the credential: Twilio answered HTTP 401: Authenticate \(Twilio error 20003\)\..*Nothing was stored/s,
    );
    p.expectSent({ method: 'GET', url: `${ACCOUNT}.json` });

    const malformed = await p.connectProvider({ account_sid: 'SK0123', auth_token: TOKEN });
    expect(malformed.text).toContain('credentials.account_sid does not look like a Twilio Account SID');
  });

  it('connects and names the account by its friendly name', async () => {
    const connected = await p.connectProvider({ account_sid: SID, auth_token: TOKEN });
    expect(connected.text).toContain('Connected Twilio as Acme Support');
    p.expectSent({ method: 'GET', url: `${ACCOUNT}.json`, headers: { authorization: BASIC } });
  });

  it('sends a message under the connection’s account, form-encoded with repeated MediaUrl', async () => {
    await p.expectCall({
      tool: 'twilio_send_message',
      args: {
        To: '+14155552671',
        From: '+14155550100',
        Body: 'Your code is 123456',
        MediaUrl: ['https://acme.test/a.png', 'https://acme.test/b.png'],
      },
      ok: 'SM1f0e8ae6ade43cb3c0ce4525424e404f',
      sent: {
        method: 'POST',
        url: `${ACCOUNT}/Messages.json`,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        form: [
          ['To', '+14155552671'],
          ['From', '+14155550100'],
          ['Body', 'Your code is 123456'],
          ['MediaUrl', 'https://acme.test/a.png'],
          ['MediaUrl', 'https://acme.test/b.png'],
        ],
      },
    });
  });

  it('lists messages with Twilio’s PascalCase filters', async () => {
    await p.expectCall({
      tool: 'twilio_list_messages',
      args: { To: '+14155552671', PageSize: 20 },
      ok: 'delivered',
      sent: { method: 'GET', url: `${ACCOUNT}/Messages.json?To=%2B14155552671&PageSize=20` },
    });
  });

  it('passes Twilio’s error message to the agent, and its 429 with Retry-After', async () => {
    await p.expectCall({
      tool: 'twilio_send_message',
      args: { To: '+1555', From: '+14155550100', Body: 'x' },
      error: "twilio returned HTTP 400 Bad Request: Invalid 'To' Phone Number: +1555",
      sent: {
        method: 'POST',
        url: `${ACCOUNT}/Messages.json`,
        form: [
          ['To', '+1555'],
          ['From', '+14155550100'],
          ['Body', 'x'],
        ],
      },
    });
    await p.expectCall({
      tool: 'twilio_list_calls',
      error: /Too Many Requests\ntwilio is rate limiting these calls: retry after 2 seconds/,
      sent: { method: 'GET', url: `${ACCOUNT}/Calls.json` },
    });
  });
});
