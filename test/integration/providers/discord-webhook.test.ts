import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, useProviderHarness, type Answer } from './helpers.js';

const HOOK_PATH = '/api/webhooks/1128004598419894302/tkQ3lN9xW_2bPq-R7sVdY0uZ5mAeCgHiJoKfLrSt';
const GONE_PATH = '/api/webhooks/1128004598419894399/deletedTokenAbCdEf';
const MESSAGE = {
  id: '1310000000000000001',
  type: 0,
  channel_id: '1100000000000000002',
  content: 'Deploy finished',
  author: { id: '1128004598419894302', username: 'Deploy bot', bot: true },
  embeds: [],
  timestamp: '2026-11-20T10:00:00.000000+00:00',
  webhook_id: '1128004598419894302',
};

/** A loopback Discord webhook API: Get Webhook with Token, Execute Webhook and its message routes. */
function discord(req: Received): Answer {
  if (req.url.startsWith(GONE_PATH)) return jsonAnswer(404, { message: 'Unknown Webhook', code: 10015 });
  const route = `${req.method} ${req.url.replace(HOOK_PATH, '')}`;
  if (route === 'GET ')
    return jsonAnswer(200, {
      type: 1,
      id: '1128004598419894302',
      name: 'Deploy bot',
      avatar: null,
      channel_id: '1100000000000000002',
      guild_id: '1100000000000000001',
      application_id: null,
      token: 'tkQ3lN9xW_2bPq-R7sVdY0uZ5mAeCgHiJoKfLrSt',
    });
  if (route === 'POST ?wait=true') {
    const body = JSON.parse(req.body) as { content?: string; embeds?: { description?: string }[] };
    if (body.content === 'flood')
      return jsonAnswer(
        429,
        { message: 'You are being rate limited.', retry_after: 0.529, global: false },
        { 'retry-after': '1', 'x-ratelimit-scope': 'shared' },
      );
    if ((body.embeds?.[0]?.description?.length ?? 0) > 10)
      return jsonAnswer(400, {
        code: 50035,
        message: 'Invalid Form Body',
        errors: {
          embeds: {
            '0': {
              description: {
                _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 4096 or fewer in length.' }],
              },
            },
          },
        },
      });
    return jsonAnswer(200, { ...MESSAGE, content: body.content ?? '' });
  }
  if (route === `PATCH /messages/${MESSAGE.id}`)
    return jsonAnswer(200, { ...MESSAGE, content: 'Deploy rolled back' });
  if (route === `DELETE /messages/${MESSAGE.id}`) return { status: 204 };
  return jsonAnswer(404, { message: 'Unknown Message', code: 10008 });
}

const p = useProviderHarness({ provider: 'discord-webhook', auth: 'webhook', answer: discord });

describe('discord-webhook through /mcp/', () => {
  it('checks the URL with Get Webhook with Token, and refuses a deleted webhook or another host', async () => {
    const gone = await p.connectProvider({ webhook_url: `${p.api.url}${GONE_PATH}` });
    expect(gone.text).toMatch(
      /Discord \(webhook\) did not accept the credential check \(HTTP 404: Unknown Webhook\)/,
    );
    const elsewhere = await p.connectProvider({ webhook_url: `https://discord.evil.example${HOOK_PATH}` });
    expect(elsewhere.text).toContain('must point at 127.0.0.1, not discord.evil.example');
    p.expectSent({ method: 'GET', url: GONE_PATH });
  });

  it('connects and names the webhook', async () => {
    const connected = await p.connectProvider({ webhook_url: `${p.api.url}${HOOK_PATH}` });
    expect(connected.text).toContain('Connected Discord (webhook) as Deploy bot');
    p.expectSent({ method: 'GET', url: HOOK_PATH }, { method: 'GET', url: HOOK_PATH });
  });

  it('posts {content, username, embeds} with ?wait=true and returns the message id', async () => {
    const args = {
      content: 'Deploy finished',
      username: 'CI',
      embeds: [{ title: 'v2.3.0', description: 'All green', color: 5814783 }],
    };
    await p.expectCall({
      tool: 'discord_webhook_send_message',
      args,
      ok: MESSAGE.id,
      sent: {
        method: 'POST',
        url: `${HOOK_PATH}?wait=true`,
        headers: { 'content-type': 'application/json' },
        json: args,
      },
    });
  });

  it('edits and deletes the message by id', async () => {
    const edited = await p.call('discord_webhook_edit_message', {
      message_id: MESSAGE.id,
      content: 'Deploy rolled back',
    });
    expect(edited.text).toContain('Deploy rolled back');
    const deleted = await p.call('discord_webhook_delete_message', { message_id: MESSAGE.id });
    expect(deleted.text).toBe('Done (HTTP 204).');
    p.expectSent(
      {
        method: 'PATCH',
        url: `${HOOK_PATH}/messages/${MESSAGE.id}`,
        json: { content: 'Deploy rolled back' },
      },
      { method: 'DELETE', url: `${HOOK_PATH}/messages/${MESSAGE.id}`, body: '' },
    );
  });

  it('surfaces a 429 with Retry-After and {message, retry_after, global} clearly', async () => {
    await p.expectCall({
      tool: 'discord_webhook_send_message',
      args: { content: 'flood' },
      error: true,
      text:
        'Discord is rate limiting this webhook (it accepts about 2 requests per second): retry after 0.6 seconds. ' +
        'The message was not posted. Discord said: "You are being rate limited."',
      sent: { method: 'POST', url: `${HOOK_PATH}?wait=true`, json: { content: 'flood' } },
    });
  });

  it('names the fields of a rejected form body', async () => {
    const invalid = await p.call('discord_webhook_send_message', {
      embeds: [{ description: 'far too long for this mock' }],
    });
    expect(invalid.text).toBe(
      'Discord rejected the request (HTTP 400): Invalid Form Body (embeds.0.description: Must be 4096 or fewer in length.). ' +
        'Fix the arguments named and try again.',
    );
    p.expectSent({
      method: 'POST',
      url: `${HOOK_PATH}?wait=true`,
      json: { embeds: [{ description: 'far too long for this mock' }] },
    });
  });

  it('keeps the webhook token out of the webhook it describes, and shows the limit in inspect', async () => {
    const webhook = await p.call('discord_webhook_get_webhook', {});
    expect(webhook.text).toContain('"channel_id":"1100000000000000002"');
    expect(webhook.text).not.toContain('tkQ3lN9xW');
    p.expectSent({ method: 'GET', url: HOOK_PATH });
    const inspected = await p.inspect();
    expect(inspected).toContain('Limits: About 2 requests per second per webhook');
    expect(inspected).toContain('State here: connected as Deploy bot');
  });
});
