import { describe, expect, it } from 'vitest';
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, useProviderHarness, type Answer } from './helpers.js';

// The path and query a Workflows "post to a channel when a webhook request is received" flow issues.
const FLOW_PATH =
  '/workflows/5f2b4c1e9a8d4e7f8b6a3c2d1e0f9a8b/triggers/manual/paths/invoke' +
  '?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA';
const ADAPTIVE_CARD = 'application/vnd.microsoft.card.adaptive';
const SCHEMA = 'http://adaptivecards.io/schemas/adaptive-card.json';

/** The Workflows message that carries one Adaptive Card. */
function cardMessage(content: object) {
  return { type: 'message', attachments: [{ contentType: ADAPTIVE_CARD, content }] };
}

/** A loopback Workflows trigger: 202 with no body, Logic Apps' {error: {code, message}} otherwise. */
function workflows(req: Received): Answer {
  if (req.method !== 'POST' || req.url !== FLOW_PATH)
    return jsonAnswer(404, { error: { code: 'TriggerNotFound', message: 'The trigger was not found.' } });
  const card = (JSON.parse(req.body) as { attachments: { content: { body: { text?: string }[] } }[] })
    .attachments[0]!.content;
  if (card.body.some((element) => element.text === 'busy'))
    return jsonAnswer(
      429,
      { error: { code: 'WorkflowTriggerIsThrottled', message: 'The workflow trigger is throttled.' } },
      { 'retry-after': '17' },
    );
  return { status: 202 };
}

const p = useProviderHarness({ provider: 'teams-webhook', auth: 'webhook', answer: workflows });

describe('teams-webhook through /mcp/', () => {
  it('refuses a retired Office 365 connector URL and a flow URL without its signature', async () => {
    const connector = await p.connectProvider({
      webhook_url: 'https://acme.webhook.office.com/webhookb2/1f2e3d4c@5b6a/IncomingWebhook/abc/def',
    });
    expect(connector.text).toContain('must point at 127.0.0.1, not acme.webhook.office.com');
    const unsigned = await p.connectProvider({
      webhook_url: `${p.api.url}${FLOW_PATH.replace(/&sig=.*$/, '')}`,
    });
    expect(unsigned.text).toContain('does not look like a Microsoft Teams (Workflows webhook)');
    p.expectSent();
  });

  it('connects without running the flow, then posts text as an Adaptive Card message', async () => {
    const connected = await p.connectProvider({ webhook_url: `${p.api.url}${FLOW_PATH}` });
    expect(connected.text).toContain('Connected Microsoft Teams (Workflows webhook)');
    p.expectSent();

    await p.expectCall({
      tool: 'teams_webhook_post_message',
      args: { title: 'Deploy finished', text: 'Version **2.3.0** is live.' },
      ok: 'the workflow accepted the message (HTTP 202)',
      sent: {
        method: 'POST',
        url: FLOW_PATH,
        headers: { 'content-type': 'application/json' },
        json: cardMessage({
          type: 'AdaptiveCard',
          $schema: SCHEMA,
          version: '1.4',
          body: [
            { type: 'TextBlock', text: 'Deploy finished', weight: 'Bolder', size: 'Medium', wrap: true },
            { type: 'TextBlock', text: 'Version **2.3.0** is live.', wrap: true },
          ],
        }),
      },
    });
  });

  it('posts an Adaptive Card the agent wrote, keeping its own version', async () => {
    const card = {
      type: 'AdaptiveCard',
      version: '1.5',
      body: [{ type: 'FactSet', facts: [{ title: 'Build', value: '#481' }] }],
      actions: [{ type: 'Action.OpenUrl', title: 'Open', url: 'https://ci.acme.test/481' }],
    };
    await p.expectCall({
      tool: 'teams_webhook_post_card',
      args: { card },
      ok: true,
      sent: { method: 'POST', url: FLOW_PATH, json: cardMessage({ $schema: SCHEMA, ...card }) },
    });
  });

  it('reports throttling with Retry-After in the Workflows error shape', async () => {
    await p.expectCall({
      tool: 'teams_webhook_post_message',
      args: { text: 'busy' },
      error: true,
      text:
        'Teams Workflows returned HTTP 429 Too Many Requests: WorkflowTriggerIsThrottled: The workflow trigger is throttled. ' +
        'Power Automate is throttling this workflow: retry after 17 seconds. The message was not posted.',
      sent: {
        method: 'POST',
        url: FLOW_PATH,
        json: cardMessage({
          type: 'AdaptiveCard',
          $schema: SCHEMA,
          version: '1.4',
          body: [{ type: 'TextBlock', text: 'busy', wrap: true }],
        }),
      },
    });
  });
});
