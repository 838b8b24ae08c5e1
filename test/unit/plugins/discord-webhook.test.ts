import { describe, expect, it } from 'vitest';
import { discordWebhookPlugin } from '../../../plugins/discord-webhook/index.js';
import { compiledTool, jsonResponse, shaperOf, textOf } from './context.js';

const shape = shaperOf(
  discordWebhookPlugin,
  compiledTool({
    name: 'discord_webhook_send_message',
    provider: 'discord-webhook',
    source: 'inline:discord_webhook_send_message',
    description: 'Send a message.',
    category: 'messages',
    method: 'POST',
    path: '',
  }),
);

describe('discord-webhook shapeResponse', () => {
  it('says when a 429 is a global limit, waiting as long as the body says', async () => {
    const result = await shape(
      jsonResponse(
        429,
        { message: 'You are being rate limited.', retry_after: 64.57, global: true },
        { 'retry-after': '65' },
      ),
    );
    expect(result?.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /^Discord is rate limiting all webhook requests from this gateway \(a global limit\): retry after 64\.6 seconds\./,
    );
  });

  it('falls back to the Retry-After header, then to a plain pause', async () => {
    expect(textOf(await shape(jsonResponse(429, {}, { 'retry-after': '2' })))).toContain(
      'retry after 2 seconds',
    );
    expect(textOf(await shape(jsonResponse(429, {})))).toContain('wait a few seconds before retrying');
  });

  it('asks for a new URL when the webhook was deleted or its token reset', async () => {
    for (const [status, body] of [
      [404, { message: 'Unknown Webhook', code: 10015 }],
      [401, { message: 'Invalid Webhook Token', code: 50027 }],
    ] as const) {
      const text = textOf(await shape(jsonResponse(status, body)));
      expect(text).toContain(`(${body.message}, HTTP ${status})`);
      expect(text).toContain('reconnect with connect_provider (provider "discord-webhook")');
    }
  });

  it('flattens nested form errors, top-level ones included', async () => {
    const result = await shape(
      jsonResponse(400, {
        code: 50035,
        message: 'Invalid Form Body',
        errors: {
          _errors: [{ code: 'MESSAGE_EMPTY', message: 'Cannot send an empty message' }],
          username: { _errors: [{ code: 'USERNAME_INVALID', message: 'Username cannot contain "discord"' }] },
        },
      }),
    );
    expect(textOf(result)).toBe(
      'Discord rejected the request (HTTP 400): Invalid Form Body (Cannot send an empty message; ' +
        'username: Username cannot contain "discord"). Fix the arguments named and try again.',
    );
  });

  it('drops the token and url of a webhook object, and leaves other answers alone', async () => {
    const webhook = await shape(
      jsonResponse(200, { id: '1', name: 'Deploy bot', token: 'secret', url: 'https://x' }),
    );
    expect(JSON.parse(textOf(webhook))).toEqual({ id: '1', name: 'Deploy bot' });
    expect(await shape(jsonResponse(200, { id: '2', content: 'hi' }))).toBeUndefined();
    expect(await shape(jsonResponse(404, { message: 'Unknown Message', code: 10008 }))).toBeUndefined();
  });
});
