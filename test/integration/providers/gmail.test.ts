import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { googleNotFound, googleRateLimited, useGoogleApi } from './google.js';
import { jsonAnswer, jsonBody, type Answer } from './helpers.js';

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

/** A loopback Gmail API v1 (behind googleApi: bearer token, Google's error shape). */
function gmail(req: Received): Answer | undefined {
  switch (`${req.method} ${req.url}`) {
    case 'GET /gmail/v1/users/me/messages?q=from%3Aana%40example.com%20is%3Aunread&labelIds=INBOX&labelIds=UNREAD&maxResults=10':
      return jsonAnswer(200, { messages: [{ id: fullMessage.id, threadId: THREAD }], resultSizeEstimate: 1 });
    case `GET /gmail/v1/users/me/messages/${fullMessage.id}`:
      return jsonAnswer(200, fullMessage);
    case 'GET /gmail/v1/users/me/messages/0000000000000000':
      return googleNotFound('Requested entity was not found.');
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
        return googleRateLimited('User-rate limit exceeded.  Retry after 2025-03-10T10:00:30.000Z', 30);
      const { threadId } = jsonBody(req) as { threadId?: string };
      return jsonAnswer(200, {
        id: '18e2f3a4b5c6d7f0',
        threadId: threadId ?? '18e2f3a4b5c6d7f1',
        labelIds: ['SENT'],
      });
    }
    case `POST /gmail/v1/users/me/messages/${fullMessage.id}/modify`:
      return jsonAnswer(200, { id: fullMessage.id, threadId: THREAD, labelIds: ['INBOX'] });
  }
}
/** The MIME message inside a send request's `raw`. */
function rawMessage(request: Received | undefined): string {
  return Buffer.from((jsonBody(request) as { raw: string }).raw, 'base64url').toString('utf8');
}

const mail = useGoogleApi({
  provider: 'gmail',
  accessToken: TOKEN,
  account: 'me@example.com',
  basePath: '/gmail/v1',
  route: gmail,
});

describe('Gmail over /mcp/ with a seeded OAuth connection', () => {
  it('searches with Gmail query syntax and repeated labelIds', async () => {
    await mail.expectCall({
      tool: 'gmail_list_messages',
      args: { q: 'from:ana@example.com is:unread', labelIds: ['INBOX', 'UNREAD'], maxResults: 10 },
      ok: `"threadId":"${THREAD}"`,
      sent: {
        method: 'GET',
        url: '/gmail/v1/users/me/messages?q=from%3Aana%40example.com%20is%3Aunread&labelIds=INBOX&labelIds=UNREAD&maxResults=10',
        headers: { authorization: `Bearer ${TOKEN}` },
        body: '',
      },
    });
  });

  it("reads a message with its text parts decoded from Gmail's base64url", async () => {
    const { result } = await mail.expectCall({
      tool: 'gmail_get_message',
      args: { id: fullMessage.id },
      ok: [
        '"text":"Are we still on for Thursday? — Ana\\r\\n"',
        '"text":"<div>Are we still on for Thursday? — Ana</div>"',
      ],
      sent: { method: 'GET', url: `/gmail/v1/users/me/messages/${fullMessage.id}`, body: '' },
    });
    expect(result.text).not.toContain('"data"');
  });

  it('sends a new email as a base64url RFC 2822 message in raw', async () => {
    const { requests } = await mail.expectCall({
      tool: 'gmail_send_message',
      args: {
        to: ['Ana Lima <ana@example.com>'],
        cc: ['bob@example.com'],
        subject: 'Grüße aus Köln',
        body: 'Hallo Ana,\nbis Donnerstag!',
      },
      ok: true,
      text: 'Sent: message 18e2f3a4b5c6d7f0 in thread 18e2f3a4b5c6d7f1.',
      sent: {
        method: 'POST',
        url: '/gmail/v1/users/me/messages/send',
        headers: { 'content-type': 'application/json' },
      },
    });
    const [request] = requests;
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
    const { requests } = await mail.expectCall({
      tool: 'gmail_send_message',
      args: {
        to: ['ana@example.com'],
        body: 'Yes, see you there.',
        html: '<p>Yes, see you there.</p>',
        thread_id: THREAD,
      },
      ok: true,
      sent: [
        {
          method: 'GET',
          url: `/gmail/v1/users/me/threads/${THREAD}?format=metadata&metadataHeaders=Message-ID&metadataHeaders=References&metadataHeaders=Subject`,
          body: '',
        },
        { method: 'POST', url: '/gmail/v1/users/me/messages/send' },
      ],
    });
    const [, send] = requests;
    expect(Object.keys(jsonBody(send) as object)).toEqual(['raw', 'threadId']);
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
    await mail.expectCall({
      tool: 'gmail_modify_message',
      args: { id: fullMessage.id, removeLabelIds: ['UNREAD'] },
      ok: true,
      sent: {
        method: 'POST',
        url: `/gmail/v1/users/me/messages/${fullMessage.id}/modify`,
        json: { removeLabelIds: ['UNREAD'] },
      },
    });
  });

  it("passes Gmail's errors on: a 404 read, and a 429 send with its Retry-After", async () => {
    await mail.expectCall({
      tool: 'gmail_get_message',
      args: { id: '0000000000000000' },
      error: /^gmail returned HTTP 404 Not Found: Requested entity was not found\.\n/,
      sent: { method: 'GET', url: '/gmail/v1/users/me/messages/0000000000000000' },
    });
    await mail.expectCall({
      tool: 'gmail_send_message',
      args: { to: ['ana@example.com'], subject: 'Over quota', body: '…' },
      error: true,
      text:
        'Gmail answered HTTP 429: User-rate limit exceeded. Retry after 2025-03-10T10:00:30.000Z\n' +
        'Gmail is rate limiting this account (sending costs 100 quota units a message): retry after 30 seconds.',
      sent: { method: 'POST', url: '/gmail/v1/users/me/messages/send' },
    });
  });

  it('refuses a recipient that would inject a header, before calling Gmail', async () => {
    await expect(
      mail.call('gmail_send_message', {
        to: ['ana@example.com\r\nBcc: everyone@example.com'],
        subject: 'x',
        body: 'y',
      }),
    ).rejects.toThrow(/to\[0\]/);
    mail.expectSent();
  });
});
