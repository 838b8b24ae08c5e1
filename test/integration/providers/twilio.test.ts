import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLUGINS } from '../../../plugins/index.js';
import type { Received } from '../../helpers/receiver.js';
import {
  formBody,
  jsonAnswer,
  startLoopbackProvider,
  type Answer,
  type LoopbackProvider,
} from './helpers.js';

const SID = 'AC0123456789abcdef0123456789abcdef';
const TOKEN = 'f0e1d2c3b4a5968778695a4b3c2d1e0f';
const ACCOUNT = `/2010-04-01/Accounts/${SID}`;

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
  const basic = `Basic ${Buffer.from(`${SID}:${TOKEN}`).toString('base64')}`;
  if (req.headers.authorization !== basic) return twilioError(401, 20003, 'Authenticate');
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

let p: LoopbackProvider;

beforeAll(async () => {
  p = await startLoopbackProvider({
    provider: 'twilio',
    respond: twilio,
    basePath: '/2010-04-01/Accounts',
    plugins: PLUGINS,
  });
});
afterAll(() => p.close());

describe('twilio through /mcp/', () => {
  it('checks the SID and token by fetching the account, and refuses a wrong token', async () => {
    const wrong = await p.client.callTool('connect_provider', {
      provider: 'twilio',
      credentials: { account_sid: SID, auth_token: '0'.repeat(32) },
    });
    expect(wrong.isError).toBe(true);
    expect(wrong.content[0]!.text).toMatch(
      /Twilio refused the credential: Twilio answered HTTP 401: Authenticate \(Twilio error 20003\)\..*Nothing was stored/s,
    );
    expect(p.sent().map((r) => `${r.method} ${r.url}`)).toEqual([`GET ${ACCOUNT}.json`]);

    const malformed = await p.client.callTool('connect_provider', {
      provider: 'twilio',
      credentials: { account_sid: 'SK0123', auth_token: TOKEN },
    });
    expect(malformed.content[0]!.text).toContain(
      'credentials.account_sid does not look like a Twilio Account SID',
    );
  });

  it('connects and names the account by its friendly name', async () => {
    const connected = await p.client.callTool('connect_provider', {
      provider: 'twilio',
      credentials: { account_sid: SID, auth_token: TOKEN },
    });
    expect(connected.content[0]!.text).toContain('Connected Twilio as Acme Support');
    expect(p.sent()).toHaveLength(1);
  });

  it('sends a message under the connection’s account, form-encoded with repeated MediaUrl', async () => {
    const sent = await p.client.callTool('twilio_send_message', {
      To: '+14155552671',
      From: '+14155550100',
      Body: 'Your code is 123456',
      MediaUrl: ['https://acme.test/a.png', 'https://acme.test/b.png'],
    });
    expect(sent.isError).toBeFalsy();
    expect(sent.content[0]!.text).toContain('SM1f0e8ae6ade43cb3c0ce4525424e404f');
    const [request] = p.sent();
    expect(request).toMatchObject({ method: 'POST', url: `${ACCOUNT}/Messages.json` });
    expect(request!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(formBody(request)).toEqual([
      ['To', '+14155552671'],
      ['From', '+14155550100'],
      ['Body', 'Your code is 123456'],
      ['MediaUrl', 'https://acme.test/a.png'],
      ['MediaUrl', 'https://acme.test/b.png'],
    ]);
  });

  it('lists messages with Twilio’s PascalCase filters', async () => {
    const listed = await p.client.callTool('twilio_list_messages', { To: '+14155552671', PageSize: 20 });
    expect(listed.isError).toBeFalsy();
    expect(listed.content[0]!.text).toContain('delivered');
    expect(p.sent()[0]!.url).toBe(`${ACCOUNT}/Messages.json?To=%2B14155552671&PageSize=20`);
  });

  it('passes Twilio’s error message to the agent, and its 429 with Retry-After', async () => {
    const invalid = await p.client.callTool('twilio_send_message', {
      To: '+1555',
      From: '+14155550100',
      Body: 'x',
    });
    expect(invalid.isError).toBe(true);
    expect(invalid.content[0]!.text).toContain(
      "twilio returned HTTP 400 Bad Request: Invalid 'To' Phone Number: +1555",
    );

    const limited = await p.client.callTool('twilio_list_calls', {});
    expect(limited.isError).toBe(true);
    expect(limited.content[0]!.text).toMatch(
      /Too Many Requests\ntwilio is rate limiting these calls: retry after 2 seconds/,
    );
    expect(p.sent().map((r) => r.url)).toEqual([`${ACCOUNT}/Messages.json`, `${ACCOUNT}/Calls.json`]);
  });
});
