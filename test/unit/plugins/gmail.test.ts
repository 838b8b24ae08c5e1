import { describe, expect, it } from 'vitest';
import type { CompiledTool } from '../../../core/catalog/types.js';
import type { PluginTool } from '../../../core/catalog/plugins/types.js';
import { gmailPlugin } from '../../../plugins/gmail/index.js';
import { buildMime, encodeSubject, encodeWords, formatAddress, toRaw } from '../../../plugins/gmail/mime.js';
import { READ_BUDGET } from '../../../plugins/gmail/read.js';
import { fakeContext, jsonResponse, textOf } from './context.js';

const BOUNDARY = 'toolgate-test';

/** Decodes RFC 2047 "B" encoded-words the way a mail reader does (whitespace between words dropped). */
function decodeWords(value: string): string {
  return value
    .replace(/\r\n /g, ' ')
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?UTF-8\?B\?([A-Za-z0-9+/=]*)\?=/g, (_m, b64: string) =>
      Buffer.from(b64, 'base64').toString('utf8'),
    );
}

/** Header block and body of a message (or part), split at the first empty line. */
function split(mime: string): { headers: string; body: string } {
  const at = mime.indexOf('\r\n\r\n');
  return { headers: mime.slice(0, at), body: mime.slice(at + 4) };
}

/** The value of one header, unfolded. */
function header(headers: string, name: string): string | undefined {
  const match = new RegExp(`^${name}: (.*(?:\\r\\n .*)*)`, 'm').exec(headers);
  return match?.[1];
}

function expectCrlfOnly(mime: string): void {
  expect(mime).not.toMatch(/[^\r]\n/);
  expect(mime).not.toMatch(/\r(?!\n)/);
}

describe('gmail MIME encoding', () => {
  it('writes a plain-text message with CRLF line ends and a base64 UTF-8 body', () => {
    const mime = buildMime({ to: ['ana@example.com'], subject: 'Hello', text: 'Hi Ana,\nSee you.' });
    expect(mime).toBe(
      [
        'MIME-Version: 1.0',
        'To: ana@example.com',
        'Subject: Hello',
        'Content-Type: text/plain; charset=UTF-8',
        'Content-Transfer-Encoding: base64',
        '',
        Buffer.from('Hi Ana,\r\nSee you.').toString('base64'),
        '',
      ].join('\r\n'),
    );
  });

  it('encodes a non-ASCII subject as UTF-8 encoded-words of whole characters, within line limits', () => {
    const subject = 'Réunion budget 2025 — 日本語のテキスト 🎉🎉 ça va être long, très long, vraiment';
    const mime = buildMime({ to: ['a@example.com'], subject, text: 'x' });
    expectCrlfOnly(mime);
    const value = header(split(mime).headers, 'Subject')!;
    expect(decodeWords(value)).toBe(subject);
    const words = value.split('\r\n ');
    expect(words.length).toBeGreaterThan(1);
    for (const word of words) {
      expect(word).toMatch(/^=\?UTF-8\?B\?[A-Za-z0-9+/=]+\?=$/);
      expect(word.length).toBeLessThanOrEqual(75);
      // Each word decodes on its own: no character is split between two words.
      expect(Buffer.from(word.slice(10, -2), 'base64').toString('utf8')).not.toContain('\uFFFD');
    }
    for (const line of split(mime).headers.split('\r\n')) expect(line.length).toBeLessThanOrEqual(76);
  });

  it('leaves ASCII subjects readable but encodes text that would read as an encoded-word', () => {
    expect(encodeSubject('Quarterly report: Q3, final')).toBe('Quarterly report: Q3, final');
    const tricky = encodeSubject('see =?UTF-8?B?Zm9v?= here');
    expect(tricky).toMatch(/^=\?UTF-8\?B\?/);
    expect(decodeWords(tricky)).toBe('see =?UTF-8?B?Zm9v?= here');
    expect(encodeWords('')).toEqual(['=?UTF-8?B??=']);
  });

  it('formats recipients: bare, named, quoted when the name has specials, encoded when not ASCII', () => {
    expect(formatAddress(' ana@example.com ')).toBe('ana@example.com');
    expect(formatAddress('Ana Lima <ana@example.com>')).toBe('Ana Lima <ana@example.com>');
    expect(formatAddress('Lima, Ana <ana@example.com>')).toBe('"Lima, Ana" <ana@example.com>');
    expect(formatAddress('"Lima, Ana" <ana@example.com>')).toBe('"Lima, Ana" <ana@example.com>');
    expect(formatAddress('Say "hi" <hi@example.com>')).toBe('"Say \\"hi\\"" <hi@example.com>');
    expect(formatAddress('"Say \\"hi\\"" <hi@example.com>')).toBe('"Say \\"hi\\"" <hi@example.com>');
    expect(formatAddress('<ana@example.com>')).toBe('<ana@example.com>');
    const encoded = formatAddress('José Müller <jose@example.com>');
    expect(encoded).toMatch(/^=\?UTF-8\?B\?[^\r\n]+\?=\r\n <jose@example\.com>$/);
    expect(decodeWords(encoded)).toBe('José Müller <jose@example.com>');
  });

  it('lists To, Cc and Bcc, one address a line after the first', () => {
    const mime = buildMime({
      to: ['a@example.com', 'Bé <b@example.com>'],
      cc: ['c@example.com'],
      bcc: ['d@example.com'],
      subject: 's',
      text: '',
    });
    const { headers } = split(mime);
    expect(header(headers, 'To')).toBe(`a@example.com,\r\n ${formatAddress('Bé <b@example.com>')}`);
    expect(header(headers, 'Cc')).toBe('c@example.com');
    expect(header(headers, 'Bcc')).toBe('d@example.com');
    expectCrlfOnly(mime);
  });

  it('sends an HTML version as multipart/alternative, plain text first', () => {
    const mime = buildMime(
      { to: ['a@example.com'], subject: 'Hi', text: 'Plain ünïcode', html: '<p>Rich <b>ünïcode</b></p>' },
      BOUNDARY,
    );
    expectCrlfOnly(mime);
    const { headers, body } = split(mime);
    expect(header(headers, 'Content-Type')).toBe(`multipart/alternative; boundary="${BOUNDARY}"`);
    expect(body.endsWith(`--${BOUNDARY}--\r\n`)).toBe(true);
    const parts = body
      .split(`--${BOUNDARY}`)
      .slice(1, -1)
      .map((part) => split(part.replace(/^\r\n/, '')));
    expect(parts.map((p) => header(p.headers, 'Content-Type'))).toEqual([
      'text/plain; charset=UTF-8',
      'text/html; charset=UTF-8',
    ]);
    const decoded = parts.map((p) => Buffer.from(p.body.replace(/\r\n/g, ''), 'base64').toString('utf8'));
    expect(decoded).toEqual(['Plain ünïcode', '<p>Rich <b>ünïcode</b></p>']);
  });

  it('wraps base64 body lines at 76 characters', () => {
    const text = 'a long line of text '.repeat(40);
    const { body } = split(buildMime({ to: ['a@example.com'], subject: 's', text }));
    const lines = body.split('\r\n').filter((l) => l !== '');
    expect(lines.every((l) => l.length <= 76)).toBe(true);
    expect(Buffer.from(lines.join(''), 'base64').toString('utf8')).toBe(text);
  });

  it('writes threading headers, folding References between ids, without line breaks from outside', () => {
    const mime = buildMime({
      to: ['a@example.com'],
      subject: 'Re: Plan',
      text: 'ok',
      inReplyTo: '<m2@mail.example.com>\r\nBcc: evil@example.com',
      references: '<m1@mail.example.com> <m2@mail.example.com>',
    });
    const { headers } = split(mime);
    expect(header(headers, 'In-Reply-To')).toBe('<m2@mail.example.com> Bcc: evil@example.com');
    expect(headers).not.toMatch(/^Bcc:/m);
    expect(header(headers, 'References')).toBe('<m1@mail.example.com>\r\n <m2@mail.example.com>');
  });

  it('turns the message into base64url for Gmail', () => {
    const mime = buildMime({ to: ['a@example.com'], subject: '???>>>', text: '~~~ÿÿÿ' });
    const raw = toRaw(mime);
    expect(raw).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(raw, 'base64url').toString('utf8')).toBe(mime);
  });
});

function tool(name: string): PluginTool {
  const found = gmailPlugin.tools?.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

function sentMime(json: unknown): string {
  const raw = (json as { raw: string }).raw;
  return Buffer.from(raw, 'base64url').toString('utf8');
}

describe('gmail_send_message and gmail_create_draft', () => {
  it('sends {raw} to users/me/messages/send and reports the ids', async () => {
    const { ctx, requests } = fakeContext(
      'gmail',
      jsonResponse(200, { id: 'm1', threadId: 't1', labelIds: ['SENT'] }),
    );
    const result = await tool('gmail_send_message').handler(
      { to: ['ana@example.com'], subject: 'Olá', body: 'Tudo bem?' },
      ctx,
    );
    expect(result.isError).toBeUndefined();
    expect(textOf(result)).toBe('Sent: message m1 in thread t1.');
    expect(result.structuredContent).toEqual({ id: 'm1', threadId: 't1', labelIds: ['SENT'] });
    expect(requests).toHaveLength(1);
    expect(requests[0]).toMatchObject({ method: 'POST', path: '/users/me/messages/send' });
    expect(Object.keys(requests[0]!.json as object)).toEqual(['raw']);
    const mime = sentMime(requests[0]!.json);
    expect(decodeWords(header(split(mime).headers, 'Subject')!)).toBe('Olá');
  });

  it('replies in a thread: reads its latest Message-ID, then sends with threadId and threading headers', async () => {
    const thread = {
      id: 't9',
      messages: [
        { id: 'a', payload: { headers: [{ name: 'Message-ID', value: '<first@mail.example.com>' }] } },
        {
          id: 'b',
          payload: {
            headers: [
              { name: 'Subject', value: 'Café plans' },
              { name: 'References', value: '<first@mail.example.com>' },
              { name: 'Message-Id', value: '<second@mail.example.com>' },
            ],
          },
        },
      ],
    };
    const { ctx, requests } = fakeContext(
      'gmail',
      jsonResponse(200, thread),
      jsonResponse(200, { id: 'd1', message: { id: 'm3', threadId: 't9' } }),
    );
    const result = await tool('gmail_create_draft').handler(
      { to: ['ana@example.com'], body: 'Count me in.', thread_id: 't9' },
      ctx,
    );
    expect(textOf(result)).toBe('Draft d1 saved; the user can review and send it in Gmail.');
    expect(requests[0]).toEqual({
      method: 'GET',
      path: '/users/me/threads/t9?format=metadata&metadataHeaders=Message-ID&metadataHeaders=References&metadataHeaders=Subject',
    });
    expect(requests[1]).toMatchObject({ method: 'POST', path: '/users/me/drafts' });
    const message = (requests[1]!.json as { message: { raw: string; threadId: string } }).message;
    expect(message.threadId).toBe('t9');
    const { headers } = split(sentMime(message));
    expect(header(headers, 'In-Reply-To')).toBe('<second@mail.example.com>');
    expect(header(headers, 'References')).toBe('<first@mail.example.com>\r\n <second@mail.example.com>');
    expect(decodeWords(header(headers, 'Subject')!)).toBe('Re: Café plans');
  });

  it('asks for a subject when the message is not a reply, without calling Gmail', async () => {
    const { ctx, requests } = fakeContext('gmail');
    const result = await tool('gmail_send_message').handler({ to: ['a@example.com'], body: 'x' }, ctx);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('`subject` is required unless `thread_id` is given');
    expect(requests).toEqual([]);
  });

  it("reports Google's error shape in Gmail's words, with what to do", async () => {
    const insufficient = {
      error: {
        code: 403,
        message: 'Request had insufficient authentication scopes.',
        status: 'PERMISSION_DENIED',
        errors: [{ message: 'Insufficient Permission', domain: 'global', reason: 'insufficientPermissions' }],
      },
    };
    const { ctx } = fakeContext(
      'gmail',
      jsonResponse(403, insufficient),
      jsonResponse(
        429,
        {
          error: {
            code: 429,
            message: 'User-rate limit exceeded.',
            status: 'RESOURCE_EXHAUSTED',
            errors: [{ reason: 'userRateLimitExceeded' }],
          },
        },
        { 'retry-after': '12' },
      ),
      jsonResponse(404, {
        error: { code: 404, message: 'Requested entity was not found.', status: 'NOT_FOUND' },
      }),
    );
    const send = tool('gmail_send_message');
    const args = { to: ['a@example.com'], subject: 's', body: 'b' };
    const scope = await send.handler(args, ctx);
    expect(scope.isError).toBe(true);
    expect(textOf(scope)).toBe(
      'Gmail answered HTTP 403: Request had insufficient authentication scopes.\n' +
        'The Gmail connection was not granted the permission this needs. Reconnect with connect_provider (provider "gmail").',
    );
    expect(textOf(await send.handler(args, ctx))).toContain('rate limiting this account');
    expect(textOf(await send.handler({ ...args, thread_id: 'nope' }, ctx))).toMatch(
      /^Gmail answered HTTP 404: Requested entity was not found\.\nCheck the ids/,
    );
  });
});

describe('gmail message reading', () => {
  const getMessage = { name: 'gmail_get_message' } as CompiledTool;
  const b64 = (text: string, encoding: BufferEncoding = 'utf8') =>
    Buffer.from(text, encoding).toString('base64url');
  const message = {
    id: 'm1',
    threadId: 't1',
    payload: {
      mimeType: 'multipart/alternative',
      body: { size: 0 },
      parts: [
        {
          mimeType: 'text/plain',
          headers: [{ name: 'Content-Type', value: 'text/plain; charset="UTF-8"' }],
          body: { size: 12, data: b64('Olá, mundo ✓') },
        },
        {
          mimeType: 'text/html',
          headers: [{ name: 'Content-Type', value: 'text/html; charset=ISO-8859-1' }],
          body: { size: 9, data: b64('<b>ol\u00e1</b>', 'latin1') },
        },
        { mimeType: 'application/pdf', filename: 'a.pdf', body: { size: 99, attachmentId: 'att1' } },
      ],
    },
  };

  async function shape(body: unknown, status = 200, name = getMessage) {
    const { ctx } = fakeContext('gmail');
    return gmailPlugin.shapeResponse?.(jsonResponse(status, body), name, ctx);
  }

  it('decodes every text part into body.text, in its charset, and keeps attachments as they are', async () => {
    const shown = JSON.parse(textOf(await shape(message))) as typeof message;
    const [plain, html, pdf] = shown.payload.parts;
    expect(plain!.body).toEqual({ size: 12, text: 'Olá, mundo ✓' });
    expect(html!.body).toEqual({ size: 9, text: '<b>olá</b>' });
    expect(pdf).toEqual(message.payload.parts[2]);
  });

  it('cuts a very long message to the budget and says how to read less', async () => {
    const long = { ...message, snippet: 'x'.repeat(READ_BUDGET) };
    const text = textOf(await shape(long));
    expect(text.length).toBeLessThan(READ_BUDGET + 400);
    expect(text).toMatch(/\[Output truncated: [\d,]+ of [\d,]+ characters were cut\..*format "metadata"/);
  });

  it('leaves errors and other tools to the default shaping', async () => {
    expect(await shape({ error: { code: 404, message: 'Not Found' } }, 404)).toBeUndefined();
    expect(await shape(message, 200, { name: 'gmail_list_messages' } as CompiledTool)).toBeUndefined();
  });
});
