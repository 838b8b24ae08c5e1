import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLUGINS } from '../../../plugins/index.js';
import type { Received } from '../../helpers/receiver.js';
import {
  googleErrorAnswer,
  jsonAnswer,
  jsonBody,
  seedOAuthProvider,
  type Answer,
  type SeededOAuthProvider,
} from './helpers.js';

const TOKEN = 'ya29.a0AfB_byE3gmailTestToken1122334455aabbccdd';
const THREAD = '18e2f3a4b5c6d7e8';
const base64url = (text: string) => Buffer.from(text, 'utf8').toString('base64url');

const fullMessage = {
  id: '18e2f3a4b5c6d7e9',
  threadId: THREAD,
  labelIds: ['INBOX', 'UNREAD'],
  snippet: 'Are we still on for Thursday?',
  historyId: '987654',
  internalDate: '1741600800000',
  sizeEstimate: 2048,
  payload: {
    partId: '',
    mimeType: 'multipart/alternative',
    filename: '',
    headers: [
      { name: 'From', value: 'Ana Lima <ana@example.com>' },
      { name: 'Subject', value: 'Café on Thursday?' },
      { name: 'Message-ID', value: '<CAF=abc123@mail.gmail.com>' },
    ],
    body: { size: 0 },
    parts: [
      {
        partId: '0',
        mimeType: 'text/plain',
        filename: '',
        headers: [{ name: 'Content-Type', value: 'text/plain; charset="UTF-8"' }],
        body: { size: 40, data: base64url('Are we still on for Thursday? — Ana\r\n') },
      },
      {
        partId: '1',
        mimeType: 'text/html',
        filename: '',
        headers: [{ name: 'Content-Type', value: 'text/html; charset="UTF-8"' }],
        body: { size: 52, data: base64url('<div>Are we still on for Thursday? — Ana</div>') },
      },
    ],
  },
};

/** A loopback Gmail API v1: bearer token checked; Gmail's resources and Google's error shape. */
function gmail(req: Received): Answer {
  if (req.headers.authorization !== `Bearer ${TOKEN}`)
    return googleErrorAnswer(401, 'Request had invalid authentication credentials.', {
      reason: 'authError',
      status: 'UNAUTHENTICATED',
    });
  switch (`${req.method} ${req.url}`) {
    case 'GET /gmail/v1/users/me/messages?q=from%3Aana%40example.com%20is%3Aunread&labelIds=INBOX&labelIds=UNREAD&maxResults=10':
      return jsonAnswer(200, { messages: [{ id: fullMessage.id, threadId: THREAD }], resultSizeEstimate: 1 });
    case `GET /gmail/v1/users/me/messages/${fullMessage.id}`:
      return jsonAnswer(200, fullMessage);
    case 'GET /gmail/v1/users/me/messages/0000000000000000':
      return googleErrorAnswer(404, 'Requested entity was not found.', {
        reason: 'notFound',
        status: 'NOT_FOUND',
      });
    case `GET /gmail/v1/users/me/threads/${THREAD}?format=metadata&metadataHeaders=Message-ID&metadataHeaders=References&metadataHeaders=Subject`:
      return jsonAnswer(200, {
        id: THREAD,
        historyId: '987654',
        messages: [
          {
            id: fullMessage.id,
            threadId: THREAD,
            payload: { headers: fullMessage.payload.headers.slice(1) },
          },
        ],
      });
    case 'POST /gmail/v1/users/me/messages/send': {
      if (rawMessage(req).includes('\r\nSubject: Over quota\r\n'))
        return googleErrorAnswer(
          429,
          'User-rate limit exceeded.  Retry after 2025-03-10T10:00:30.000Z',
          { reason: 'rateLimitExceeded', domain: 'usageLimits', status: 'RESOURCE_EXHAUSTED' },
          { 'retry-after': '30' },
        );
      const { threadId } = jsonBody(req) as { threadId?: string };
      return jsonAnswer(200, {
        id: '18e2f3a4b5c6d7f0',
        threadId: threadId ?? '18e2f3a4b5c6d7f1',
        labelIds: ['SENT'],
      });
    }
    case `POST /gmail/v1/users/me/messages/${fullMessage.id}/modify`:
      return jsonAnswer(200, { id: fullMessage.id, threadId: THREAD, labelIds: ['INBOX'] });
    default:
      return googleErrorAnswer(400, `Invalid request: ${req.method} ${req.url}`, {
        reason: 'invalidArgument',
        status: 'INVALID_ARGUMENT',
      });
  }
}
/** The MIME message inside a send request's `raw`. */
function rawMessage(request: Received | undefined): string {
  return Buffer.from((jsonBody(request) as { raw: string }).raw, 'base64url').toString('utf8');
}

let mail: SeededOAuthProvider;

beforeAll(async () => {
  mail = await seedOAuthProvider({
    provider: 'gmail',
    accessToken: TOKEN,
    account: 'me@example.com',
    basePath: '/gmail/v1',
    plugins: PLUGINS,
    respond: gmail,
  });
});
afterAll(async () => {
  await mail.close();
});

describe('Gmail over /mcp/ with a seeded OAuth connection', () => {
  it('searches with Gmail query syntax and repeated labelIds', async () => {
    const result = await mail.client.callTool('gmail_list_messages', {
      q: 'from:ana@example.com is:unread',
      labelIds: ['INBOX', 'UNREAD'],
      maxResults: 10,
    });
    expect(result.isError).toBeFalsy();
    expect(result.content[0]!.text).toContain(`"threadId": "${THREAD}"`);
    const [request] = mail.sent();
    expect(request).toMatchObject({
      method: 'GET',
      url: '/gmail/v1/users/me/messages?q=from%3Aana%40example.com%20is%3Aunread&labelIds=INBOX&labelIds=UNREAD&maxResults=10',
      body: '',
    });
    expect(request!.headers.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it("reads a message with its text parts decoded from Gmail's base64url", async () => {
    const result = await mail.client.callTool('gmail_get_message', { id: fullMessage.id });
    expect(result.isError).toBeFalsy();
    const text = result.content[0]!.text!;
    expect(text).toContain('"text": "Are we still on for Thursday? — Ana\\r\\n"');
    expect(text).toContain('"text": "<div>Are we still on for Thursday? — Ana</div>"');
    expect(text).not.toContain('"data"');
    expect(mail.sent()[0]!.url).toBe(`/gmail/v1/users/me/messages/${fullMessage.id}`);
  });

  it('sends a new email as a base64url RFC 2822 message in raw', async () => {
    const result = await mail.client.callTool('gmail_send_message', {
      to: ['Ana Lima <ana@example.com>'],
      cc: ['bob@example.com'],
      subject: 'Grüße aus Köln',
      body: 'Hallo Ana,\nbis Donnerstag!',
    });
    expect(result.isError).toBeFalsy();
    expect(result.content[0]!.text).toBe('Sent: message 18e2f3a4b5c6d7f0 in thread 18e2f3a4b5c6d7f1.');
    const [request] = mail.sent();
    expect(request).toMatchObject({ method: 'POST', url: '/gmail/v1/users/me/messages/send' });
    expect(request!.headers['content-type']).toBe('application/json');
    expect(Object.keys(jsonBody(request) as object)).toEqual(['raw']);
    expect(rawMessage(request)).toBe(
      [
        'MIME-Version: 1.0',
        'To: Ana Lima <ana@example.com>',
        'Cc: bob@example.com',
        `Subject: =?UTF-8?B?${Buffer.from('Grüße aus Köln').toString('base64')}?=`,
        'Content-Type: text/plain; charset=UTF-8',
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.from('Hallo Ana,\r\nbis Donnerstag!').toString('base64'),
        '',
      ].join('\r\n'),
    );
  });

  it("replies in a thread: looks up the thread's Message-ID, then sends with threadId", async () => {
    const result = await mail.client.callTool('gmail_send_message', {
      to: ['ana@example.com'],
      body: 'Yes, see you there.',
      html: '<p>Yes, see you there.</p>',
      thread_id: THREAD,
    });
    expect(result.isError).toBeFalsy();
    const [lookup, send] = mail.sent();
    expect(lookup).toMatchObject({ method: 'GET', body: '' });
    expect(lookup!.url).toContain(`/gmail/v1/users/me/threads/${THREAD}?format=metadata`);
    expect(jsonBody(send)).toMatchObject({ threadId: THREAD });
    const message = rawMessage(send);
    expect(message).toContain('\r\nIn-Reply-To: <CAF=abc123@mail.gmail.com>\r\n');
    expect(message).toContain('\r\nReferences: <CAF=abc123@mail.gmail.com>\r\n');
    expect(message).toContain(
      `\r\nSubject: =?UTF-8?B?${Buffer.from('Re: Café on Thursday?').toString('base64')}?=\r\n`,
    );
    expect(message).toMatch(/\r\nContent-Type: multipart\/alternative; boundary="toolgate-[0-9a-f]{24}"\r\n/);
  });

  it('marks a message read by removing the UNREAD label', async () => {
    const result = await mail.client.callTool('gmail_modify_message', {
      id: fullMessage.id,
      removeLabelIds: ['UNREAD'],
    });
    expect(result.isError).toBeFalsy();
    const [request] = mail.sent();
    expect(request).toMatchObject({
      method: 'POST',
      url: `/gmail/v1/users/me/messages/${fullMessage.id}/modify`,
    });
    expect(jsonBody(request)).toEqual({ removeLabelIds: ['UNREAD'] });
  });

  it("passes Gmail's errors on: a 404 read, and a 429 send with its Retry-After", async () => {
    const missing = await mail.client.callTool('gmail_get_message', { id: '0000000000000000' });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toMatch(
      /^gmail returned HTTP 404 Not Found: Requested entity was not found\.\n/,
    );

    const limited = await mail.client.callTool('gmail_send_message', {
      to: ['ana@example.com'],
      subject: 'Over quota',
      body: '…',
    });
    expect(limited.isError).toBe(true);
    expect(limited.content[0]!.text).toBe(
      'Gmail answered HTTP 429: User-rate limit exceeded. Retry after 2025-03-10T10:00:30.000Z\n' +
        'Gmail is rate limiting this account (sending costs 100 quota units a message): retry after 30 seconds.',
    );
    mail.sent();
  });

  it('refuses a recipient that would inject a header, before calling Gmail', async () => {
    await expect(
      mail.client.callTool('gmail_send_message', {
        to: ['ana@example.com\r\nBcc: everyone@example.com'],
        subject: 'x',
        body: 'y',
      }),
    ).rejects.toThrow(/to\[0\]/);
    expect(mail.sent()).toEqual([]);
  });
});
