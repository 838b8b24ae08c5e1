import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, useProviderHarness, type Answer } from './helpers.js';

const TOKEN = 'xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOpQrStUvWx';

/** A loopback Slack Web API: bearer token, GET query or JSON POST, answers in Slack's shapes. */
function slack(req: Received): Answer {
  if (req.headers.authorization !== `Bearer ${TOKEN}`)
    return jsonAnswer(200, { ok: false, error: 'invalid_auth' });
  const [path, query = ''] = req.url.split('?');
  const params = new URLSearchParams(query);
  switch (`${req.method} ${path}`) {
    case 'GET /conversations.list':
      return jsonAnswer(200, {
        ok: true,
        channels: [
          {
            id: 'C012AB3CD',
            name: 'general',
            is_private: false,
            is_archived: false,
            is_member: true,
            num_members: 42,
          },
          { id: 'C061EG9SL', name: 'launch-plan', is_private: true, is_archived: false, is_member: true },
        ],
        response_metadata: { next_cursor: 'dGVhbTpDMDYxRkE1UEI=' },
      });
    case 'POST /chat.postMessage': {
      const body = JSON.parse(req.body) as { channel: string; text: string };
      if (body.channel === 'C0LIMITED')
        return jsonAnswer(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '30' });
      return jsonAnswer(200, {
        ok: true,
        channel: body.channel,
        ts: '1712345678.000200',
        message: { type: 'message', user: 'U0BOT1234', text: body.text, ts: '1712345678.000200' },
      });
    }
    case 'GET /conversations.history':
      return params.get('channel') === 'C0MISSING'
        ? jsonAnswer(200, { ok: false, error: 'channel_not_found' })
        : jsonAnswer(200, { ok: true, messages: [], has_more: false });
    case 'GET /users.lookupByEmail':
      return jsonAnswer(200, {
        ok: false,
        error: 'missing_scope',
        needed: 'users:read.email',
        provided: 'channels:read,chat:write',
      });
    default:
      return jsonAnswer(404, { ok: false, error: 'unknown_method' });
  }
}

const slackApi = useProviderHarness({
  provider: 'slack',
  auth: 'oauth',
  accessToken: TOKEN,
  account: 'Acme Workspace',
  answer: slack,
});

describe('Slack over /mcp/ with a seeded OAuth connection', () => {
  it('offers the Slack tools and the connected workspace', async () => {
    expect(await slackApi.client.listToolNames()).toEqual(
      expect.arrayContaining([
        'slack_list_channels',
        'slack_get_channel_history',
        'slack_get_thread_replies',
        'slack_post_message',
        'slack_update_message',
        'slack_add_reaction',
        'slack_lookup_user_by_email',
        'slack_auth_test',
      ]),
    );
    const inspected = await slackApi.inspect();
    expect(inspected).toContain('connected as Acme Workspace');
    expect(inspected).toContain('conversations.history and conversations.replies once a minute');
  });

  it('lists channels with a GET, the query Slack documents and the bearer token', async () => {
    await slackApi.expectCall({
      tool: 'slack_list_channels',
      args: { types: ['public_channel', 'private_channel'], exclude_archived: true, limit: 2 },
      ok: 'launch-plan',
      sent: {
        method: 'GET',
        url: '/conversations.list?types=public_channel,private_channel&exclude_archived=true&limit=2',
        headers: { authorization: `Bearer ${TOKEN}` },
        body: '',
      },
    });
  });

  it('posts a threaded reply as JSON with the charset Slack asks for', async () => {
    const reply = { channel: 'C012AB3CD', text: 'Deploy *finished* :tada:', thread_ts: '1712345600.000100' };
    await slackApi.expectCall({
      tool: 'slack_post_message',
      args: reply,
      ok: '1712345678.000200',
      sent: {
        method: 'POST',
        url: '/chat.postMessage',
        headers: { 'content-type': 'application/json; charset=utf-8', authorization: `Bearer ${TOKEN}` },
        json: reply,
      },
    });
  });

  it('turns an HTTP 200 {ok: false} into an error that explains the code', async () => {
    await slackApi.expectCall({
      tool: 'slack_get_channel_history',
      args: { channel: 'C0MISSING' },
      error: /no channel with that ID.*slack_list_channels.*"channel_not_found"/s,
      sent: { method: 'GET', url: '/conversations.history?channel=C0MISSING' },
    });
  });

  it('names the scope a refused method needs', async () => {
    await slackApi.expectCall({
      tool: 'slack_lookup_user_by_email',
      args: { email: 'ada@acme.test' },
      error: /"missing_scope".*It needs users:read\.email.*connect_provider/s,
      sent: { method: 'GET', url: '/users.lookupByEmail?email=ada%40acme.test' },
    });
  });

  it("relays Slack's 429 with its Retry-After", async () => {
    const message = { channel: 'C0LIMITED', text: 'hi' };
    await slackApi.expectCall({
      tool: 'slack_post_message',
      args: message,
      error: /"ratelimited".*Retry after 30 seconds/s,
      sent: { method: 'POST', url: '/chat.postMessage', json: message },
    });
  });
});
