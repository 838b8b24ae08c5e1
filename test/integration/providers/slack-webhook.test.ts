import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { expectToolError } from '../../helpers/results.js';
import { useProviderHarness, type Answer } from './helpers.js';

const HOOK_PATH = '/services/T024BE7LD/B01HF2Q5H1Q/Xz9vQm3KpL0aBcDeFgHiJkLm';

/** A loopback Slack incoming webhook: plain-text answers, "ok" or an error code. */
function slack(req: Received): Answer {
  const text = (answer: string, status = 200, headers: Record<string, string> = {}): Answer => ({
    status,
    body: answer,
    headers: { 'content-type': 'text/html', ...headers },
  });
  if (req.method !== 'POST' || req.url !== HOOK_PATH) return text('no_service', 404);
  const { text: message } = JSON.parse(req.body) as { text: string };
  if (message === 'to the archive') return text('channel_is_archived', 410);
  if (message === 'again') return text('rate_limited', 429, { 'retry-after': '30' });
  return text('ok');
}

const p = useProviderHarness({ provider: 'slack-webhook', auth: 'webhook', answer: slack });

describe('slack-webhook through /mcp/', () => {
  it('refuses a URL on another host, or not shaped like a Slack webhook, and posts nothing', async () => {
    expectToolError(
      await p.connectProvider({ webhook_url: `https://attacker.example${HOOK_PATH}` }),
      'credentials.webhook_url must point at 127.0.0.1, not attacker.example',
    );
    const shape = await p.connectProvider({ webhook_url: `${p.api.url}/api/chat.postMessage` });
    expect(shape.text).toContain('does not look like a Slack (incoming webhook) Webhook URL');
    p.expectSent();
  });

  it('connects without posting a probe, then posts {text, blocks} to the webhook URL', async () => {
    const connected = await p.connectProvider({ webhook_url: `${p.api.url}${HOOK_PATH}` });
    expect(connected.text).toContain('Connected Slack (incoming webhook)');
    p.expectSent();

    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: '*Deploy* finished' } }];
    const { result } = await p.expectCall({
      tool: 'slack_webhook_send_message',
      args: { text: 'Deploy finished', blocks },
      ok: true,
      sent: {
        method: 'POST',
        url: HOOK_PATH,
        headers: { 'content-type': 'application/json' },
        json: { text: 'Deploy finished', blocks },
      },
    });
    expect(result).toMatchObject({
      content: [{ type: 'text', text: "Message posted to the webhook's channel." }],
    });
  });

  it("explains Slack's error codes and its 429", async () => {
    await p.expectCall({
      tool: 'slack_webhook_send_message',
      args: { text: 'to the archive' },
      error: true,
      text:
        "Slack did not post the message: the webhook's channel is archived. Unarchive it in Slack, or: " +
        'Ask the user for a webhook bound to another channel and reconnect with connect_provider ' +
        '(provider "slack-webhook"). (Slack answered HTTP 410 "channel_is_archived".)',
    });
    const limited = await p.call('slack_webhook_send_message', { text: 'again' });
    expect(limited.text).toBe(
      'Slack is rate limiting this webhook (it accepts about one message per second): retry after 30 seconds.',
    );
    p.expectSent(
      { method: 'POST', url: HOOK_PATH, json: { text: 'to the archive' } },
      { method: 'POST', url: HOOK_PATH, json: { text: 'again' } },
    );
  });
});
