import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PLUGINS } from '../../../plugins/index.js';
import type { Received } from '../../helpers/receiver.js';
import {
  jsonAnswer,
  jsonBody,
  startLoopbackProvider,
  type Answer,
  type LoopbackProvider,
} from './helpers.js';

// The path and query a Workflows "post to a channel when a webhook request is received" flow issues.
const FLOW_PATH =
  '/workflows/5f2b4c1e9a8d4e7f8b6a3c2d1e0f9a8b/triggers/manual/paths/invoke' +
  '?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA';
const ADAPTIVE_CARD = 'application/vnd.microsoft.card.adaptive';

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

let p: LoopbackProvider;

beforeAll(async () => {
  p = await startLoopbackProvider({
    provider: 'teams-webhook',
    kind: 'webhook',
    respond: workflows,
    plugins: PLUGINS,
  });
});
afterAll(() => p.close());

describe('teams-webhook through /mcp/', () => {
  it('refuses a retired Office 365 connector URL and a flow URL without its signature', async () => {
    const connector = await p.client.callTool('connect_provider', {
      provider: 'teams-webhook',
      credentials: {
        webhook_url: 'https://acme.webhook.office.com/webhookb2/1f2e3d4c@5b6a/IncomingWebhook/abc/def',
      },
    });
    expect(connector.content[0]!.text).toContain('must point at 127.0.0.1, not acme.webhook.office.com');
    const unsigned = await p.client.callTool('connect_provider', {
      provider: 'teams-webhook',
      credentials: { webhook_url: `${p.api.url}${FLOW_PATH.replace(/&sig=.*$/, '')}` },
    });
    expect(unsigned.content[0]!.text).toContain('does not look like a Microsoft Teams (Workflows webhook)');
    expect(p.sent()).toEqual([]);
  });

  it('connects without running the flow, then posts text as an Adaptive Card message', async () => {
    const connected = await p.client.callTool('connect_provider', {
      provider: 'teams-webhook',
      credentials: { webhook_url: `${p.api.url}${FLOW_PATH}` },
    });
    expect(connected.content[0]!.text).toContain('Connected Microsoft Teams (Workflows webhook)');
    expect(p.sent()).toEqual([]);

    const posted = await p.client.callTool('teams_webhook_post_message', {
      title: 'Deploy finished',
      text: 'Version **2.3.0** is live.',
    });
    expect(posted.isError).toBeFalsy();
    expect(posted.content[0]!.text).toContain('the workflow accepted the message (HTTP 202)');
    const [sent] = p.sent();
    expect(sent).toMatchObject({ method: 'POST', url: FLOW_PATH });
    expect(sent!.headers['content-type']).toBe('application/json');
    expect(jsonBody(sent)).toEqual({
      type: 'message',
      attachments: [
        {
          contentType: ADAPTIVE_CARD,
          content: {
            type: 'AdaptiveCard',
            $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
            version: '1.4',
            body: [
              { type: 'TextBlock', text: 'Deploy finished', weight: 'Bolder', size: 'Medium', wrap: true },
              { type: 'TextBlock', text: 'Version **2.3.0** is live.', wrap: true },
            ],
          },
        },
      ],
    });
  });

  it('posts an Adaptive Card the agent wrote, keeping its own version', async () => {
    const card = {
      type: 'AdaptiveCard',
      version: '1.5',
      body: [{ type: 'FactSet', facts: [{ title: 'Build', value: '#481' }] }],
      actions: [{ type: 'Action.OpenUrl', title: 'Open', url: 'https://ci.acme.test/481' }],
    };
    const posted = await p.client.callTool('teams_webhook_post_card', { card });
    expect(posted.isError).toBeFalsy();
    expect(jsonBody(p.sent()[0])).toEqual({
      type: 'message',
      attachments: [
        {
          contentType: ADAPTIVE_CARD,
          content: { $schema: 'http://adaptivecards.io/schemas/adaptive-card.json', ...card },
        },
      ],
    });
  });

  it('reports throttling with Retry-After in the Workflows error shape', async () => {
    const limited = await p.client.callTool('teams_webhook_post_message', { text: 'busy' });
    expect(limited.isError).toBe(true);
    expect(limited.content[0]!.text).toBe(
      'Teams Workflows returned HTTP 429 Too Many Requests: WorkflowTriggerIsThrottled: The workflow trigger is throttled. ' +
        'Power Automate is throttling this workflow: retry after 17 seconds. The message was not posted.',
    );
    expect(p.sent()).toHaveLength(1);
  });
});
