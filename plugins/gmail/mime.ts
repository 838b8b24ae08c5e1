/**
 * RFC 5322 / MIME messages for Gmail's `users.messages.send` and `users.drafts.create`, which take
 * the whole message base64url-encoded in `raw`
 * (https://developers.google.com/workspace/gmail/api/guides/sending). Lines end in CRLF; header
 * text outside ASCII becomes RFC 2047 encoded-words; bodies are UTF-8 in base64 (RFC 2045), so
 * any text and any line length travel unchanged.
 */
import { randomBytes } from 'node:crypto';

export interface MailMessage {
  to: readonly string[];
  cc?: readonly string[];
  bcc?: readonly string[];
  subject: string;
  /** The plain-text body. */
  text: string;
  /** An HTML alternative of the body; the message is then multipart/alternative. */
  html?: string;
  /** Message-ID of the message replied to, `<...>`. */
  inReplyTo?: string;
  /** Message-IDs of the conversation, oldest first, space-separated. */
  references?: string;
}

const CRLF = '\r\n';
// RFC 2047: a line holding an encoded-word is at most 76 characters. 39 bytes make 52 base64
// characters, a 64-character word, which fits after "Subject: " and after a folding space.
const WORD_BYTES = 39;
const BODY_LINE = 76;
// Characters that force a display name into a quoted-string (RFC 5322 `specials`).
const SPECIALS = /[()<>[\]:;@\\,."]/;
const NAMED_ADDRESS = /^(.*?)\s*<([^<>]+)>$/;

/** `Name <address>` or a bare address, as written by the caller. */
export function formatAddress(entry: string): string {
  const named = NAMED_ADDRESS.exec(entry.trim());
  if (!named) return entry.trim();
  // A name the caller already quoted is unquoted first, so it is quoted (or encoded) once.
  const name = (named[1] ?? '')
    .trim()
    .replace(/^"(.*)"$/, (_quoted, inner: string) => inner.replace(/\\(.)/g, '$1'));
  const address = `<${(named[2] ?? '').trim()}>`;
  if (name === '') return address;
  if (!isAscii(name)) return `${encodeWords(name).join(`${CRLF} `)}${CRLF} ${address}`;
  if (SPECIALS.test(name)) return `"${name.replace(/(["\\])/g, '\\$1')}" ${address}`;
  return `${name} ${address}`;
}

/**
 * `text` as RFC 2047 "B" encoded-words of UTF-8, each holding whole characters, to be joined by
 * folding whitespace (decoders drop the whitespace between adjacent encoded-words).
 */
export function encodeWords(text: string): string[] {
  const words: string[] = [];
  let chunk = '';
  for (const char of text) {
    if (Buffer.byteLength(chunk + char) > WORD_BYTES) {
      words.push(encodedWord(chunk));
      chunk = '';
    }
    chunk += char;
  }
  if (chunk !== '' || words.length === 0) words.push(encodedWord(chunk));
  return words;
}

/** The Subject header's value: as is when plain ASCII, else encoded-words folded over lines. */
export function encodeSubject(subject: string): string {
  // Text that looks like an encoded-word would be decoded by the reader: encode it too.
  return isAscii(subject) && !subject.includes('=?') ? subject : encodeWords(subject).join(`${CRLF} `);
}

/** The whole message with CRLF line ends. `boundary` is fixed by tests; otherwise random. */
export function buildMime(
  message: MailMessage,
  boundary = `toolgate-${randomBytes(12).toString('hex')}`,
): string {
  const headers = ['MIME-Version: 1.0', addressHeader('To', message.to)];
  if (message.cc?.length) headers.push(addressHeader('Cc', message.cc));
  // Gmail sends "to the recipients in the To, Cc, and Bcc headers" (users.messages.send) and keeps Bcc
  // out of the copies it delivers.
  if (message.bcc?.length) headers.push(addressHeader('Bcc', message.bcc));
  headers.push(`Subject: ${encodeSubject(message.subject)}`);
  if (message.inReplyTo !== undefined) headers.push(`In-Reply-To: ${oneLine(message.inReplyTo)}`);
  // A long conversation's References outgrows a line: fold between its ids.
  if (message.references !== undefined)
    headers.push(`References: ${oneLine(message.references).split(' ').join(`${CRLF} `)}`);

  if (message.html === undefined) {
    return [...headers, ...textPart('plain', message.text), ''].join(CRLF);
  }
  return [
    ...headers,
    `Content-Type: multipart/alternative; boundary="${boundary}"`,
    '',
    `--${boundary}`,
    ...textPart('plain', message.text),
    `--${boundary}`,
    ...textPart('html', message.html),
    `--${boundary}--`,
    '',
  ].join(CRLF);
}

/** The message as Gmail's `raw` field wants it: base64url. */
export function toRaw(mime: string): string {
  return Buffer.from(mime, 'utf8').toString('base64url');
}

function addressHeader(name: string, entries: readonly string[]): string {
  return `${name}: ${entries.map(formatAddress).join(`,${CRLF} `)}`;
}

// Headers and body of one text part. The body's line breaks become CRLF first: text is encoded
// in its canonical form (RFC 2045, 6.8).
function textPart(subtype: 'plain' | 'html', body: string): string[] {
  const encoded = Buffer.from(body.replace(/\r?\n/g, CRLF), 'utf8').toString('base64');
  const lines = encoded.match(new RegExp(`.{1,${BODY_LINE}}`, 'g')) ?? [];
  return [`Content-Type: text/${subtype}; charset=UTF-8`, 'Content-Transfer-Encoding: base64', '', ...lines];
}

// Header values taken from elsewhere (a thread's Message-ID) never carry a line break into ours.
function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function encodedWord(text: string): string {
  return `=?UTF-8?B?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}

function isAscii(text: string): boolean {
  return /^[\x20-\x7e]*$/.test(text);
}
