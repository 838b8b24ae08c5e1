import { describe, expect, it } from 'vitest';
import type { PluginOutboundRequest } from '../../../core/catalog/plugins/types.js';
import { slackPlugin } from '../../../plugins/slack/index.js';
import { compiledTool, fakeContext, jsonResponse, shaperOf, textOf, textResponse } from './context.js';

const shape = shaperOf(
  slackPlugin,
  compiledTool({
    name: 'slack_post_message',
    provider: 'slack',
    source: 'POST /chat.postMessage',
    description: 'Post a message.',
    category: 'messages',
    method: 'POST',
    path: '/chat.postMessage',
  }),
);

describe('slack shapeResponse', () => {
  it('leaves {ok: true} answers to the default shaping', async () => {
    expect(await shape(jsonResponse(200, { ok: true, channel: 'C1', ts: '1.2' }))).toBeUndefined();
    expect(await shape(jsonResponse(200, { ok: true, warning: 'missing_charset' }))).toBeUndefined();
  });

  it('leaves answers without an ok field (a proxy error page, a 5xx) to the default shaping', async () => {
    expect(await shape(textResponse(502, '<html>Bad gateway</html>'))).toBeUndefined();
  });

  it('turns HTTP 200 {ok: false} into an error result explaining the code', async () => {
    const result = await shape(jsonResponse(200, { ok: false, error: 'not_in_channel' }));
    expect(result?.isError).toBe(true);
    expect(textOf(result)).toBe(
      'Slack refused slack_post_message: the app is not a member of that channel. Call slack_join_channel ' +
        '(public channels) or ask a member to invite the app, then retry. (Slack error "not_in_channel".)',
    );
  });

  it('says how to reconnect when the token no longer works', async () => {
    const result = await shape(jsonResponse(200, { ok: false, error: 'token_revoked' }));
    expect(textOf(result)).toContain('Reconnect Slack with connect_provider (provider "slack")');
  });

  it('names the scope a missing_scope answer asks for', async () => {
    const result = await shape(
      jsonResponse(200, {
        ok: false,
        error: 'missing_scope',
        needed: 'reactions:write',
        provided: 'chat:write',
      }),
    );
    expect(textOf(result)).toMatch(/It needs reactions:write\. .*reconnects with connect_provider/);
  });

  it("quotes Slack's own messages for invalid_arguments", async () => {
    const result = await shape(
      jsonResponse(200, {
        ok: false,
        error: 'invalid_arguments',
        response_metadata: { messages: ['[ERROR] missing required field: channel'] },
      }),
    );
    expect(textOf(result)).toContain('Slack said: [ERROR] missing required field: channel');
  });

  it('keeps unknown codes and points at the reference', async () => {
    const result = await shape(jsonResponse(200, { ok: false, error: 'brand_new_error' }));
    expect(textOf(result)).toContain(
      '"Errors" table in Slack\'s reference. (Slack error "brand_new_error".)',
    );
  });

  it('reports a 429 with its Retry-After', async () => {
    const result = await shape(
      jsonResponse(429, { ok: false, error: 'ratelimited' }, { 'retry-after': '1' }),
    );
    expect(textOf(result)).toMatch(/rate limiting this method\..*\nRetry after 1 second\.$/s);
  });
});

describe('slack onRequest', () => {
  it('adds the UTF-8 charset to JSON bodies and leaves other requests alone', () => {
    const { ctx } = fakeContext('slack');
    const post: PluginOutboundRequest = {
      method: 'POST',
      url: new URL('https://slack.com/api/chat.postMessage'),
      headers: { 'content-type': 'application/json' },
      body: '{"channel":"C1","text":"hi"}',
    };
    void slackPlugin.onRequest!(post, ctx);
    expect(post.headers['content-type']).toBe('application/json; charset=utf-8');

    const get: PluginOutboundRequest = {
      method: 'GET',
      url: new URL('https://slack.com/api/users.info?user=U1'),
      headers: { accept: 'application/json' },
    };
    void slackPlugin.onRequest!(get, ctx);
    expect(get.headers).toEqual({ accept: 'application/json' });
  });
});

describe('slack checkCredential', () => {
  it('accepts a working token and names the workspace', async () => {
    const { ctx, requests } = fakeContext(
      'slack',
      jsonResponse(200, {
        ok: true,
        url: 'https://acme.slack.com/',
        team: 'Acme',
        user: 'toolgate',
        team_id: 'T1',
      }),
    );
    expect(await slackPlugin.checkCredential!(ctx)).toEqual({ ok: true, account: 'Acme' });
    expect(requests).toEqual([{ method: 'POST', path: '/auth.test' }]);
  });

  it('refuses a token Slack answers {ok: false} for, though the status is 200', async () => {
    const { ctx } = fakeContext('slack', jsonResponse(200, { ok: false, error: 'invalid_auth' }));
    const check = await slackPlugin.checkCredential!(ctx);
    expect(check.ok).toBe(false);
    expect(check.ok ? '' : check.message).toContain("Slack does not accept this connection's token");
  });

  it('refuses an answer that is not Slack JSON', async () => {
    const { ctx } = fakeContext('slack', textResponse(503, 'upstream unavailable'));
    expect(await slackPlugin.checkCredential!(ctx)).toEqual({
      ok: false,
      message: 'Slack answered HTTP 503 without a result.',
    });
  });
});
