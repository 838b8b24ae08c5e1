import { describe, expect, it } from 'vitest';
import { slackWebhookPlugin } from '../../../plugins/slack-webhook/index.js';
import { compiledTool, fakeContext, shaperOf, textOf, textResponse } from './context.js';

const shape = shaperOf(
  slackWebhookPlugin,
  compiledTool({
    name: 'slack_webhook_send_message',
    provider: 'slack-webhook',
    source: 'inline:slack_webhook_send_message',
    description: 'Post a message.',
    category: 'messages',
    method: 'POST',
    path: '',
  }),
);

describe('slack-webhook shapeResponse', () => {
  it('turns "ok" into a short success text', async () => {
    expect(await shape(textResponse(200, 'ok'))).toEqual({
      content: [{ type: 'text', text: "Message posted to the webhook's channel." }],
    });
  });

  // Slack's documented webhook errors with the status each comes with, and words the agent needs.
  const cases: Array<[number, string, string]> = [
    [400, 'invalid_payload', 'Block Kit'],
    [400, 'user_not_found', 'user named in the request does not exist'],
    [400, 'no_text', 'non-empty `text`'],
    [400, 'invalid_blocks', 'Fix the blocks'],
    [400, 'invalid_blocks_format', 'JSON array of blocks'],
    [400, 'too_many_attachments', 'Send fewer'],
    [403, 'invalid_token', 'connect_provider (provider "slack-webhook")'],
    [404, 'no_service', 'connect_provider (provider "slack-webhook")'],
    [404, 'no_active_hooks', 'connect_provider (provider "slack-webhook")'],
    [404, 'channel_not_found', 'webhook bound to another channel'],
    [410, 'channel_is_archived', 'Unarchive it'],
    [403, 'action_prohibited', 'ask a Slack admin'],
    [403, 'posting_to_general_channel_denied', 'restricted posting to #general'],
    [500, 'rollup_error', 'not caused by the message'],
  ];
  it.each(cases)('explains HTTP %i "%s"', async (status, code, advice) => {
    const result = await shape(textResponse(status, code));
    expect(result?.isError).toBe(true);
    const text = textOf(result);
    expect(text).toMatch(/^Slack did not post the message: /);
    expect(text).toContain(advice);
    expect(text).toContain(`(Slack answered HTTP ${status} "${code}".)`);
  });

  it('says when to retry a rate-limited call', async () => {
    const result = await shape(textResponse(429, 'rate_limited', { 'retry-after': '30' }));
    expect(result).toEqual({
      isError: true,
      content: [
        {
          type: 'text',
          text: 'Slack is rate limiting this webhook (it accepts about one message per second): retry after 30 seconds.',
        },
      ],
    });
  });

  it('asks for a pause when a 429 has no Retry-After', async () => {
    expect(textOf(await shape(textResponse(429, '')))).toContain('wait a few seconds before retrying');
  });

  it('leaves answers it does not recognise to the default shaping', async () => {
    expect(await shape(textResponse(404, '<html><title>Not Found</title></html>'))).toBeUndefined();
    expect(await shape(textResponse(200, 'accepted'))).toBeUndefined();
    expect(await shape(textResponse(400, 'some_future_error'))).toBeUndefined();
  });
});

describe('slack-webhook checkCredential', () => {
  it('accepts the connection without posting anything', async () => {
    const { ctx, requests } = fakeContext('slack-webhook');
    expect(await slackWebhookPlugin.checkCredential?.(ctx)).toEqual({ ok: true });
    expect(requests).toEqual([]);
  });
});
