import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLUGINS } from '../../../plugins/index.js';
import type { Received } from '../../helpers/receiver.js';
import { jsonBody, startLoopbackProvider, type Answer, type LoopbackProvider } from './helpers.js';

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

let p: LoopbackProvider;
let hookUrl: string;

beforeAll(async () => {
  p = await startLoopbackProvider({
    provider: 'slack-webhook',
    kind: 'webhook',
    respond: slack,
    plugins: PLUGINS,
  });
  hookUrl = `${p.api.url}${HOOK_PATH}`;
});
afterAll(() => p.close());

describe('slack-webhook through /mcp/', () => {
  it('refuses a URL on another host, or not shaped like a Slack webhook, and posts nothing', async () => {
    const elsewhere = await p.client.callTool('connect_provider', {
      provider: 'slack-webhook',
      credentials: { webhook_url: `https://attacker.example${HOOK_PATH}` },
    });
    expect(elsewhere.isError).toBe(true);
    expect(elsewhere.content[0]!.text).toContain(
      'credentials.webhook_url must point at 127.0.0.1, not attacker.example',
    );
    const shape = await p.client.callTool('connect_provider', {
      provider: 'slack-webhook',
      credentials: { webhook_url: `${p.api.url}/api/chat.postMessage` },
    });
    expect(shape.content[0]!.text).toContain('does not look like a Slack (incoming webhook) Webhook URL');
    expect(p.sent()).toEqual([]);
  });

  it('connects without posting a probe, then posts {text, blocks} to the webhook URL', async () => {
    const connected = await p.client.callTool('connect_provider', {
      provider: 'slack-webhook',
      credentials: { webhook_url: hookUrl },
    });
    expect(connected.content[0]!.text).toContain('Connected Slack (incoming webhook)');
    expect(p.sent()).toEqual([]);

    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: '*Deploy* finished' } }];
    const posted = await p.client.callTool('slack_webhook_send_message', { text: 'Deploy finished', blocks });
    expect(posted).toMatchObject({
      content: [{ type: 'text', text: "Message posted to the webhook's channel." }],
    });
    expect(posted.isError).toBeFalsy();
    const [sent] = p.sent();
    expect(sent).toMatchObject({ method: 'POST', url: HOOK_PATH });
    expect(sent!.headers['content-type']).toBe('application/json');
    expect(jsonBody(sent)).toEqual({ text: 'Deploy finished', blocks });
  });

  it("explains Slack's error codes and its 429", async () => {
    const archived = await p.client.callTool('slack_webhook_send_message', { text: 'to the archive' });
    expect(archived.isError).toBe(true);
    expect(archived.content[0]!.text).toBe(
      "Slack did not post the message: the webhook's channel is archived. Unarchive it in Slack, or: " +
        'Ask the user for a webhook bound to another channel and reconnect with connect_provider ' +
        '(provider "slack-webhook"). (Slack answered HTTP 410 "channel_is_archived".)',
    );
    const limited = await p.client.callTool('slack_webhook_send_message', { text: 'again' });
    expect(limited.content[0]!.text).toBe(
      'Slack is rate limiting this webhook (it accepts about one message per second): retry after 30 seconds.',
    );
    expect(p.sent()).toHaveLength(2);
  });
});
