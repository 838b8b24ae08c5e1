import { describe, expect, it } from 'vitest';
import type { PluginHttpResponse } from '../../../core/catalog/plugins/types.js';
import { teamsWebhookPlugin } from '../../../plugins/teams-webhook/index.js';
import { fakeContext, jsonResponse, textOf, textResponse } from './context.js';

function tool(name: string) {
  const found = teamsWebhookPlugin.tools?.find((t) => t.name === name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

async function post(response: PluginHttpResponse, text = 'Hello') {
  const { ctx, requests } = fakeContext('teams-webhook', response);
  const result = await tool('teams_webhook_post_message').handler({ text }, ctx);
  return { result, requests };
}

describe('teams-webhook tools', () => {
  it('wrap a card in a message with one Adaptive Card attachment, posted to the webhook URL itself', async () => {
    const { result, requests } = await post(textResponse(202, ''), 'Hello');
    expect(result.isError).toBeUndefined();
    expect(requests).toEqual([
      {
        method: 'POST',
        path: '',
        json: {
          type: 'message',
          attachments: [
            {
              contentType: 'application/vnd.microsoft.card.adaptive',
              content: {
                type: 'AdaptiveCard',
                $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
                version: '1.4',
                body: [{ type: 'TextBlock', text: 'Hello', wrap: true }],
              },
            },
          ],
        },
      },
    ]);
  });

  it('ask for the current URL when the workflow is gone or refuses the signature', async () => {
    for (const status of [401, 403, 404]) {
      const { result } = await post(
        jsonResponse(status, { error: { code: 'WorkflowNotFound', message: 'Not found.' } }),
      );
      expect(result.isError).toBe(true);
      expect(textOf(result)).toContain(`HTTP ${status}`);
      expect(textOf(result)).toContain('reconnect with connect_provider (provider "teams-webhook")');
    }
  });

  it('explain a refused card, a server failure and a throttle without Retry-After', async () => {
    expect(
      textOf((await post(jsonResponse(400, { error: { code: 'InvalidTemplate', message: 'Bad.' } }))).result),
    ).toBe(
      'Teams Workflows returned HTTP 400 Bad Request: InvalidTemplate: Bad. The flow did not accept the card; check its structure.',
    );
    expect(textOf((await post(textResponse(502, '<html></html>'))).result)).toBe(
      'Teams Workflows returned HTTP 502 Bad Gateway. The message was not posted; try again later.',
    );
    expect(textOf((await post(jsonResponse(429, {}))).result)).toContain(
      'throttling this workflow: wait before retrying',
    );
  });

  it('accept a connection without running the flow', async () => {
    const { ctx, requests } = fakeContext('teams-webhook');
    expect(await teamsWebhookPlugin.checkCredential?.(ctx)).toEqual({ ok: true });
    expect(requests).toEqual([]);
  });
});
