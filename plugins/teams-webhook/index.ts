/**
 * Microsoft Teams through a Workflows webhook (manifests/teams-webhook.yaml). Office 365 connector
 * webhooks are retired; the Workflows app's "post to a channel when a webhook request is received"
 * flow takes a message with an Adaptive Card attachment
 * (https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/add-incoming-webhook)
 * and answers 202 Accepted with no body; posting happens in the flow run afterwards. The tools build
 * that envelope, from plain text and a title or from a card the agent writes.
 */
import { STATUS_CODES } from 'node:http';
import type { JsonSchema } from '../../core/catalog/types.js';
import type {
  PluginContext,
  PluginHttpResponse,
  PluginTool,
  PluginToolResult,
  ProviderPlugin,
} from '../../core/catalog/plugins/types.js';

const ADAPTIVE_CARD = 'application/vnd.microsoft.card.adaptive';
const CARD_SCHEMA = 'http://adaptivecards.io/schemas/adaptive-card.json';
/** The Adaptive Card version Teams renders in channels and chats. */
const CARD_VERSION = '1.4';
const RECONNECT =
  'Ask the user for the current URL of the workflow (Teams > Workflows) and reconnect with ' +
  'connect_provider (provider "teams-webhook").';

type Card = Record<string, unknown>;

const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true };

const postMessage: PluginTool = {
  name: 'teams_webhook_post_message',
  title: 'Post a message',
  description:
    "Posts a message to the workflow's Teams channel or chat: a `text` in Markdown (**bold**, " +
    '_italic_, [link](https://...), lists) under an optional bold `title`.',
  inputSchema: object(
    {
      text: { type: 'string', minLength: 1 },
      title: { type: 'string', minLength: 1, maxLength: 200 },
    },
    ['text'],
  ),
  annotations: WRITE,
  handler: (args, ctx) => {
    const text = args.text as string;
    const title = args.title as string | undefined;
    const body = [
      ...(title !== undefined
        ? [{ type: 'TextBlock', text: title, weight: 'Bolder', size: 'Medium', wrap: true }]
        : []),
      { type: 'TextBlock', text, wrap: true },
    ];
    return post(ctx, { type: 'AdaptiveCard', $schema: CARD_SCHEMA, version: CARD_VERSION, body });
  },
};

const postCard: PluginTool = {
  name: 'teams_webhook_post_card',
  title: 'Post an Adaptive Card',
  description:
    "Posts an Adaptive Card you write to the workflow's channel or chat, with elements such as " +
    `TextBlock, FactSet, ColumnSet, Image and Action.OpenUrl (\`version\` default ${CARD_VERSION}). Use ` +
    'teams_webhook_post_message for plain text.',
  inputSchema: object(
    {
      card: {
        type: 'object',
        properties: {
          type: { const: 'AdaptiveCard' },
          version: { type: 'string', pattern: '^1\\.[0-6]$' },
          body: {
            type: 'array',
            minItems: 1,
            items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } },
          },
          actions: {
            type: 'array',
            items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } },
          },
        },
        required: ['type', 'body'],
      },
    },
    ['card'],
  ),
  annotations: WRITE,
  handler: (args, ctx) => {
    const card = args.card as Card;
    return post(ctx, { $schema: CARD_SCHEMA, version: CARD_VERSION, ...card });
  },
};

/** The teams-webhook plugin: its two posting tools, and a connection check that posts nothing. */
export const teamsWebhookPlugin: ProviderPlugin = {
  id: 'teams-webhook',
  tools: [postMessage, postCard],

  // A Workflows URL has no side-effect-free operation: any request runs the flow. The manifest's
  // pattern and hosts have checked the URL; the first post reports a deleted or disabled workflow.
  checkCredential() {
    return Promise.resolve({ ok: true });
  },
};

async function post(ctx: PluginContext, card: Card): Promise<PluginToolResult> {
  const response = await ctx.http.request({
    method: 'POST',
    path: '',
    json: { type: 'message', attachments: [{ contentType: ADAPTIVE_CARD, content: card }] },
  });
  if (response.status >= 200 && response.status < 300) {
    return {
      content: [
        {
          type: 'text',
          text:
            `Posted: the workflow accepted the message (HTTP ${response.status}) and posts it to its channel ` +
            "or chat. If it does not appear, the flow's run history in Power Automate says why.",
        },
      ],
    };
  }
  return { content: [{ type: 'text', text: failureText(response) }], isError: true };
}

// Workflows errors come as {"error": {"code": "...", "message": "..."}} (Azure Logic Apps' shape).
function failureText(response: PluginHttpResponse): string {
  const { status } = response;
  const error = isRecord(response.body) && isRecord(response.body.error) ? response.body.error : {};
  const said = [error.code, error.message]
    .filter((part) => typeof part === 'string')
    .join(': ')
    .replace(/[.!?]$/, '');
  const head = `Teams Workflows returned HTTP ${status} ${STATUS_CODES[status] ?? ''}${said !== '' ? `: ${said}` : ''}.`;
  if (status === 429) {
    const seconds = response.headers['retry-after']?.trim();
    const wait =
      seconds !== undefined && /^\d+$/.test(seconds)
        ? `retry after ${seconds} seconds`
        : 'wait before retrying';
    return `${head} Power Automate is throttling this workflow: ${wait}. The message was not posted.`;
  }
  if (status === 401 || status === 403 || status === 404)
    return `${head} The webhook URL no longer works: the workflow was deleted or turned off, or its URL changed. ${RECONNECT}`;
  if (status === 400) return `${head} The flow did not accept the card; check its structure.`;
  return `${head} The message was not posted; try again later.`;
}

function object(properties: Record<string, JsonSchema>, required: string[]): JsonSchema {
  return { type: 'object', properties, required, additionalProperties: false };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
