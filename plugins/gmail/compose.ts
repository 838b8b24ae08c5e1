/**
 * Gmail's composing tools: build the MIME message here and hand it to Gmail as `raw`
 * (users.messages.send, users.drafts.create). A reply names its thread; the plugin then reads the
 * thread's last Message-ID so In-Reply-To, References and Subject thread it for every mail client,
 * as Gmail requires (https://developers.google.com/workspace/gmail/api/guides/threads).
 */
import type { JsonSchema } from '../../core/catalog/types.js';
import type { PluginContext, PluginTool, PluginToolResult } from '../../core/catalog/plugins/types.js';
import { failure, gmailFailure, isRecord } from './errors.js';
import { buildMime, toRaw, type MailMessage } from './mime.js';

export interface ComposeArgs {
  to: string[];
  cc?: string[];
  bcc?: string[];
  subject?: string;
  body: string;
  html?: string;
  thread_id?: string;
}

// One address: `name@example.com` or `Name <name@example.com>`; never a line break (a header
// injection) and never two addresses in one entry.
const ADDRESS: JsonSchema = {
  type: 'string',
  pattern: '^(?:[^\\r\\n<>]*<[^\\s<>@]+@[^\\s<>@]+>|[^\\s<>@,;"]+@[^\\s<>@,;"]+)$',
};
const ADDRESSES = (description: string): JsonSchema => ({
  type: 'array',
  minItems: 1,
  maxItems: 100,
  items: ADDRESS,
  description,
});
const INPUT: JsonSchema = {
  type: 'object',
  properties: {
    to: ADDRESSES('Each "ana@example.com" or "Ana Lima <ana@example.com>".'),
    cc: ADDRESSES('As `to`.'),
    bcc: ADDRESSES('As `to`.'),
    subject: {
      type: 'string',
      maxLength: 900,
      pattern: '^[^\\r\\n]*$',
      description: 'Left out in a reply: "Re: <the thread\'s subject>".',
    },
    body: { type: 'string', description: 'Plain text.' },
    html: { type: 'string', description: 'The same message as HTML, besides `body`.' },
    thread_id: {
      type: 'string',
      pattern: '^[A-Za-z0-9]+$',
      description: 'To reply: the threadId, from gmail_list_messages or gmail_list_threads.',
    },
  },
  required: ['to', 'body'],
  additionalProperties: false,
};
const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

/** Builds the message from the arguments and POSTs it (wrapped as `wrap` says) to `path`. */
async function postMessage(
  args: Record<string, unknown>,
  ctx: PluginContext,
  path: string,
  wrap: (message: unknown) => unknown,
): Promise<{ ok: true; body: Record<string, unknown> } | { ok: false; result: PluginToolResult }> {
  const prepared = await prepare(args as unknown as ComposeArgs, ctx);
  if (!prepared.ok) return prepared;
  const response = await ctx.http.request({ method: 'POST', path, json: wrap(prepared.message) });
  if (response.status < 200 || response.status > 299 || !isRecord(response.body)) {
    return { ok: false, result: gmailFailure(response) };
  }
  return { ok: true, body: response.body };
}

/** The composing tools. */
export const composeTools: PluginTool[] = [
  {
    name: 'gmail_send_message',
    title: 'Send an email',
    description:
      'Send an email from the connected Gmail account, or a reply in a thread (`thread_id`). It goes ' +
      'out at once: use gmail_create_draft when the user should review it first.',
    inputSchema: INPUT,
    outputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        threadId: { type: 'string' },
        labelIds: { type: 'array', items: { type: 'string' } },
      },
      required: ['id', 'threadId'],
    },
    annotations: WRITE,
    async handler(args, ctx) {
      const posted = await postMessage(args, ctx, '/users/me/messages/send', (message) => message);
      if (!posted.ok) return posted.result;
      const sent = posted.body;
      return {
        content: [
          { type: 'text', text: `Sent: message ${String(sent.id)} in thread ${String(sent.threadId)}.` },
        ],
        structuredContent: sent,
      };
    },
  },
  {
    name: 'gmail_create_draft',
    title: 'Draft an email',
    description:
      'Save an email (or a reply, with `thread_id`) as a draft in the connected Gmail account, for ' +
      'the user to review and send.',
    inputSchema: INPUT,
    outputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string' },
        message: { type: 'object', properties: { id: { type: 'string' }, threadId: { type: 'string' } } },
      },
      required: ['id'],
    },
    annotations: WRITE,
    async handler(args, ctx) {
      const posted = await postMessage(args, ctx, '/users/me/drafts', (message) => ({ message }));
      if (!posted.ok) return posted.result;
      const draft = posted.body;
      return {
        content: [
          {
            type: 'text',
            text: `Draft ${String(draft.id)} saved; the user can review and send it in Gmail.`,
          },
        ],
        structuredContent: draft,
      };
    },
  },
];

type Outcome<T> = ({ ok: true } & T) | { ok: false; result: PluginToolResult };

/** The Message resource to send: `raw`, and `threadId` for a reply. */
async function prepare(
  args: ComposeArgs,
  ctx: PluginContext,
): Promise<Outcome<{ message: { raw: string; threadId?: string } }>> {
  const message: MailMessage = {
    to: args.to,
    ...(args.cc ? { cc: args.cc } : {}),
    ...(args.bcc ? { bcc: args.bcc } : {}),
    subject: args.subject ?? '',
    text: args.body,
    ...(args.html !== undefined ? { html: args.html } : {}),
  };
  if (args.thread_id === undefined) {
    if (args.subject === undefined) {
      return { ok: false, result: failure('argument `subject` is required unless `thread_id` is given.') };
    }
    return { ok: true, message: { raw: toRaw(buildMime(message)) } };
  }
  const thread = await latestHeaders(args.thread_id, ctx);
  if (!thread.ok) return thread;
  const { headers } = thread;
  const messageId = headers['message-id'];
  if (messageId !== undefined) {
    message.inReplyTo = messageId;
    message.references = [headers.references, messageId].filter((v) => v !== undefined).join(' ');
  }
  if (args.subject === undefined) {
    const subject = headers.subject ?? '';
    message.subject = /^re:/i.test(subject) ? subject : `Re: ${subject}`;
  }
  return { ok: true, message: { raw: toRaw(buildMime(message)), threadId: args.thread_id } };
}

/** The threading headers of a thread's latest message, names lower-cased. */
async function latestHeaders(
  threadId: string,
  ctx: PluginContext,
): Promise<Outcome<{ headers: Record<string, string | undefined> }>> {
  // metadataHeaders repeats, which the query object cannot say: the query is written out here.
  const query =
    'format=metadata&metadataHeaders=Message-ID&metadataHeaders=References&metadataHeaders=Subject';
  const response = await ctx.http.request({
    method: 'GET',
    path: `/users/me/threads/${encodeURIComponent(threadId)}?${query}`,
  });
  if (response.status < 200 || response.status > 299) return { ok: false, result: gmailFailure(response) };
  const messages =
    isRecord(response.body) && Array.isArray(response.body.messages) ? response.body.messages : [];
  const latest: unknown = messages.at(-1);
  const payload = isRecord(latest) && isRecord(latest.payload) ? latest.payload : {};
  const headers: Record<string, string | undefined> = {};
  for (const header of Array.isArray(payload.headers) ? payload.headers : []) {
    if (isRecord(header) && typeof header.name === 'string' && typeof header.value === 'string')
      headers[header.name.toLowerCase()] = header.value;
  }
  return { ok: true, headers };
}
