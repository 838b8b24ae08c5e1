import { inputRequired, inputResponse } from '@modelcontextprotocol/server';
import type { CatalogSnapshot, ProviderEntry } from '../catalog/types.js';
import type { OAuthFlows } from '../connections/oauth/index.js';
import { LINK_TTL_MS, STATE_WORDS, type ConnectionService, type StateWord } from '../connections/service.js';
import type { ConnectionRecord, ReportRecord, Store } from '../store/types.js';
import type { ToolVisibility, VisibilityOf } from './policy.js';
import { categoryMatches } from './search.js';
import { textResult, type CallContext, type SystemTool, type ToolResult } from './types.js';
import type { Caller, Scope } from '../domain.js';
import type { McpListing } from './mcp-tools.js';

/** Delivers a filed report to the operator beyond the store (TOOLGATE_REPORT_WEBHOOK_URL). */
export type ReportSink = (report: ReportRecord, caller: Caller) => Promise<void>;

export interface SystemToolDeps {
  catalog: { readonly current: CatalogSnapshot };
  store: Store;
  connections: ConnectionService;
  oauth: OAuthFlows;
  /** Public base URL, for one-time links. */
  baseUrl: string;
  /** The caller's tool policy: a provider none of whose tools it shows is not in the catalog. */
  visibility: VisibilityOf;
  reportSink?: ReportSink;
  onSinkError: (error: unknown, report: ReportRecord) => void;
  /** The tools an upstream MCP provider lists for a scope (tools/mcp-tools.ts). */
  listed: (scope: Scope, provider: ProviderEntry) => Promise<McpListing | undefined>;
}

/** list_providers pages: at most 50 entries, which stay around 4k tokens. */
export const PAGE_SIZE = 50;

const AUTH_WORDS: Readonly<Record<ProviderEntry['auth']['kind'], string>> = {
  api_key: 'API key',
  webhook_url: 'webhook URL',
  oauth2: 'OAuth2',
  none: 'no credentials',
};

const providerProperty = {
  type: 'string',
  minLength: 1,
  maxLength: 64,
  description: 'As list_providers shows it, e.g. "slack-webhook".',
} as const;

// The arguments of the tools that act on one provider and nothing else (disconnect, inspect).
const providerOnlySchema = {
  type: 'object',
  properties: { provider: providerProperty },
  required: ['provider'],
  additionalProperties: false,
};

function unknownProvider(id: string): ReturnType<typeof textResult> {
  return textResult(
    `No provider "${id}" in this gateway. Call list_providers to see the provider ids.`,
    true,
  );
}

/** The provider of this id, when the catalog has it and the caller's tool policy shows it. */
function seenProvider(
  catalog: CatalogSnapshot,
  visibility: ToolVisibility,
  id: string,
): ProviderEntry | undefined {
  const provider = catalog.providers.get(id);
  return provider && visibility.showsProvider(provider) ? provider : undefined;
}

/** A provider's state in a scope, in the words agents are shown (list_providers, search_tools). */
export function stateWord(
  provider: ProviderEntry,
  record: ConnectionRecord | undefined,
): StateWord | 'no connection needed' {
  if (provider.auth.kind === 'none') return 'no connection needed';
  return record ? STATE_WORDS[record.state] : 'no connection';
}

function describeState(provider: ProviderEntry, record: ConnectionRecord | undefined): string {
  const state = stateWord(provider, record);
  return record?.account ? `${state} as ${record.account}` : state;
}

/** The first sentence of a description, short enough for one line. */
export function oneLine(text: string, max = 110): string {
  const first =
    text
      .replace(/\s+/g, ' ')
      .trim()
      // Not at an abbreviation's dot: "Finds messages, e.g. from:ana" is one sentence.
      .split(/(?<=[.!?])(?<!\b(?:e\.g|i\.e|etc|vs|cf)\.)\s/)[0] ?? '';
  return first.length > max ? `${first.slice(0, max - 1)}…` : first;
}

/** What connecting needs, in words an agent can relay to the user. */
function connectNeeds(provider: ProviderEntry): string {
  const auth = provider.spec.auth;
  const fields = Object.entries(provider.spec.connection_fields ?? {}).map(([name, f]) => {
    const choice = f.enum ? `one of ${f.enum.join(', ')}` : (f.description ?? f.title ?? 'text');
    return `fields.${name} (${choice}${f.default !== undefined ? `; default ${f.default}` : ''})`;
  });
  const extra = fields.length > 0 ? ` Connection fields: ${fields.join(', ')}.` : '';
  switch (auth.kind) {
    case 'none':
      return 'Nothing: its tools are available without connecting.';
    case 'oauth2':
      return `The user approves access in a browser through a link connect_provider returns${auth.scopes ? ` (scopes: ${auth.scopes.default.join(auth.scopes.separator ?? ' ')})` : ''}.${extra}`;
    case 'webhook_url':
      return `A webhook URL (credentials.webhook_url) on ${auth.allowed_hosts.join(' or ')}${auth.credential?.description ? `: ${auth.credential.description}` : ''}.${extra}`;
    case 'api_key':
      return `${Object.entries(auth.credentials)
        .map(([name, c]) => `credentials.${name} (${c.title}${c.description ? `: ${c.description}` : ''})`)
        .join(', ')}.${extra}`;
  }
}

function listProviders(deps: SystemToolDeps): SystemTool {
  return {
    name: 'list_providers',
    title: 'List providers',
    description:
      'Browse the integrations (providers) this gateway can connect: what each does, how it connects, its tool categories, and whether this user has connected it. Then connect one with connect_provider or look closer with inspect_provider.',
    inputSchema: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          maxLength: 200,
          description: 'Words in provider ids, names and descriptions.',
        },
        category: {
          type: 'string',
          maxLength: 100,
          description: 'A category id or title.',
        },
        connected: {
          type: 'boolean',
          description: 'true: only connected ones; false: only the others.',
        },
        cursor: {
          type: 'string',
          maxLength: 20,
          description: 'From the previous page.',
        },
      },
      additionalProperties: false,
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
    async handler(args, { caller }) {
      const query = typeof args.query === 'string' ? args.query.toLowerCase().trim() : '';
      const category = typeof args.category === 'string' ? args.category.toLowerCase().trim() : '';
      const connections = new Map((await deps.connections.list(caller.scope)).map((c) => [c.provider, c]));
      const visibility = await deps.visibility(caller);
      const seen = [...deps.catalog.current.providers.values()].filter((p) => visibility.showsProvider(p));
      const matching = seen.filter(
        (p) =>
          (query === '' ||
            query
              .split(/\s+/)
              .every((word) => `${p.id} ${p.displayName} ${p.description}`.toLowerCase().includes(word))) &&
          (category === '' || p.categories.some((c) => categoryMatches(c, category))) &&
          (typeof args.connected !== 'boolean' || args.connected === connections.has(p.id)),
      );
      if (seen.length === 0) {
        return textResult(
          deps.catalog.current.providers.size === 0
            ? 'No providers are installed in this gateway yet. The operator adds them as manifests in the catalog.'
            : "No providers are available to you: this client's tool policy hides them all. The operator can change it (toolgate policy, or the dashboard).",
        );
      }
      if (matching.length === 0) {
        return textResult('No provider matches. Call list_providers without arguments to see them all.');
      }
      const start = typeof args.cursor === 'string' && /^\d+$/.test(args.cursor) ? Number(args.cursor) : 0;
      const page = matching.slice(start, start + PAGE_SIZE);
      const connectedCount = matching.filter((p) => connections.has(p.id)).length;
      const lines = page.map((p) => {
        return `- ${p.id}: ${p.displayName} [${AUTH_WORDS[p.auth.kind]}; ${describeState(p, connections.get(p.id))}] — ${oneLine(p.description, 160)} Categories: ${p.categories.map((c) => c.title).join(', ')}.`;
      });
      const end = start + page.length;
      const next = end < matching.length ? `\nMore providers: call list_providers with cursor "${end}".` : '';
      return textResult(
        `Providers ${start + 1}–${end} of ${matching.length} (${connectedCount} connected here). Connect one with connect_provider; see its tools with inspect_provider.\n${lines.join('\n')}${next}`,
      );
    },
  };
}

/** The key of connect_provider's URL elicitation in an `input_required` result and its retry. */
const CONNECT_INPUT = 'connect';

/**
 * Offers a connect link to the user: to a 2026-07-28 client that declared URL elicitation, as an
 * `input_required` result the client shows and retries once the user is done; to a 2025 session
 * that declared it, as an elicitation request beside the tool result; and in the tool result's
 * text for every client, so an agent can always relay it.
 */
function offerLink(context: CallContext, message: string, url: string, text: string): ToolResult {
  if (context.urlInput) {
    return inputRequired({ inputRequests: { [CONNECT_INPUT]: inputRequired.elicitUrl({ message, url }) } });
  }
  context.elicitUrl?.(message, url);
  return textResult(text);
}

function connectedText(provider: ProviderEntry, account: string | null, replaced: boolean): string {
  const tools = provider.tools.map((t) => t.name);
  return (
    `${replaced ? 'Reconnected' : 'Connected'} ${provider.displayName}${account ? ` as ${account}` : ''}. ` +
    (provider.spec.mcp
      ? 'Its tools, as its MCP server lists them for this account, are available now: see them with inspect_provider or in the tool list.'
      : `Its ${tools.length} tool(s) are available now: ${tools.join(', ')}.`)
  );
}

function connectProvider(deps: SystemToolDeps): SystemTool {
  /**
   * The retry of a call answered with the link (2026-07-28): the user has been shown it, and either
   * connected in the browser by now, or declined; a link not used yet is offered again as text.
   */
  async function afterLink(
    caller: Caller,
    provider: ProviderEntry,
    answer: ReturnType<typeof inputResponse>,
  ): Promise<ToolResult | undefined> {
    if (answer.kind === 'elicit' && answer.action !== 'accept')
      return textResult(
        `The user did not open the link to connect ${provider.displayName}. Call connect_provider again when they want to connect it.`,
      );
    const record = await deps.store.connections.get(caller.scope, provider.id);
    if (record?.state === 'connected') return textResult(connectedText(provider, record.account, false));
    return undefined;
  }

  return {
    name: 'connect_provider',
    title: 'Connect a provider',
    description:
      'Connect a provider for this user so its tools become available. Prefer calling it with only `provider`: it returns a one-time secure link where the user enters the API key or webhook URL (or approves access, for OAuth2), so the secret never passes through this conversation. Pass `credentials` only when the user explicitly gives them; `fields` holds non-secret settings (e.g. a region). Reconnecting replaces the stored credential.',
    inputSchema: {
      type: 'object',
      properties: {
        provider: providerProperty,
        credentials: {
          type: 'object',
          description: 'Secrets by name: api_key, webhook_url, or the names inspect_provider lists.',
          additionalProperties: { type: 'string', maxLength: 4096 },
        },
        fields: {
          type: 'object',
          description: 'By name, as inspect_provider lists them.',
          additionalProperties: { type: 'string', maxLength: 256 },
        },
      },
      required: ['provider'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
    async handler(args, context) {
      const { caller } = context;
      const id = args.provider as string;
      const provider = seenProvider(deps.catalog.current, await deps.visibility(caller), id);
      if (!provider) return unknownProvider(id);
      const kind = provider.auth.kind;
      if (kind === 'none')
        return textResult(`${provider.displayName} needs no connection: its tools are available already.`);
      const responses = context.urlInput?.responses;
      if (responses?.[CONNECT_INPUT] !== undefined && args.credentials === undefined) {
        const done = await afterLink(caller, provider, inputResponse(responses, CONNECT_INPUT));
        if (done) return done;
        // Not connected yet: a fresh link, in the text (asking again could go round forever).
        context = { ...context, urlInput: undefined };
      }
      if (kind === 'oauth2') {
        const link = await deps.oauth.consent.startLink(
          caller.scope,
          provider,
          (args.fields ?? {}) as Record<string, string>,
        );
        if ('error' in link) return textResult(link.error, true);
        const scopes = deps.oauth.consent.scopesOf(provider);
        return offerLink(
          context,
          `Open this page to connect ${provider.displayName} and approve access in your browser.`,
          link.url,
          `To connect ${provider.displayName}, ask the user to open this link and approve access in the browser:\n${link.url}\n` +
            `It works once and expires in ${Math.round(LINK_TTL_MS / 60_000)} minutes. The user approves ${provider.displayName} access` +
            `${scopes.length > 0 ? ` with these permissions: ${scopes.join(', ')}` : ''}. Once approved, ${provider.displayName}'s tools appear in the tool list.`,
        );
      }
      if (args.credentials === undefined) {
        const { token } = await deps.connections.createLink(caller.scope, provider.id, 'credentials');
        const url = `${deps.baseUrl}/connect/${token}`;
        const minutes = Math.round(LINK_TTL_MS / 60_000);
        const what = kind === 'webhook_url' ? 'webhook URL' : 'credentials';
        return offerLink(
          context,
          `Open this page to connect ${provider.displayName}: paste the ${what} there, not in the chat.`,
          url,
          `To connect ${provider.displayName}, ask the user to open this link and paste the ${what} there:\n${url}\n` +
            `The link works once and expires in ${minutes} minutes; the secret never passes through this conversation. ` +
            `It asks for: ${connectNeeds(provider)} Once the user has saved it, ${provider.displayName}'s tools appear in the tool list.`,
        );
      }
      const outcome = await deps.connections.connect(caller.scope, provider, {
        credentials: args.credentials,
        fields: args.fields,
      });
      if (!outcome.ok) return textResult(outcome.message, true);
      return textResult(connectedText(provider, outcome.account ?? null, outcome.replaced));
    },
  };
}

function disconnectProvider(deps: SystemToolDeps): SystemTool {
  return {
    name: 'disconnect_provider',
    title: 'Disconnect a provider',
    description:
      'Disconnect a provider for this user: its stored credentials are deleted and its tools go away.',
    inputSchema: providerOnlySchema,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    async handler(args, { caller }) {
      const id = args.provider as string;
      const provider = deps.catalog.current.providers.get(id);
      // Read the credential before deleting it: an OAuth2 token is revoked at the provider after.
      const found =
        provider?.auth.kind === 'oauth2'
          ? await Promise.resolve(deps.connections.access(caller.scope, id)).catch(() => undefined)
          : undefined;
      const removed = await deps.connections.disconnect(caller.scope, id);
      if (removed && provider && found) await deps.oauth.tokens.revoke(provider, found.record, found.access);
      const name = provider?.displayName ?? id;
      if (!removed)
        return provider ? textResult(`${name} was not connected here; nothing to do.`) : unknownProvider(id);
      return textResult(`Disconnected ${name}: its credentials were deleted and its tools removed.`);
    },
  };
}

function inspectProvider(deps: SystemToolDeps): SystemTool {
  return {
    name: 'inspect_provider',
    title: 'Inspect a provider',
    description:
      'See what a provider can do, connected or not: its tools by category, how it connects and what that needs, whether this user has connected it (as which account), and its limits.',
    inputSchema: providerOnlySchema,
    annotations: { readOnlyHint: true, openWorldHint: false },
    async handler(args, { caller }) {
      const id = args.provider as string;
      const visibility = await deps.visibility(caller);
      const provider = seenProvider(deps.catalog.current, visibility, id);
      if (!provider) return unknownProvider(id);
      const record = (await deps.connections.list(caller.scope)).find((c) => c.provider === id);
      const listing = provider.spec.mcp ? await deps.listed(caller.scope, provider) : undefined;
      const all = listing?.tools ?? provider.tools;
      const tools = new Map(all.filter((t) => visibility.shows(t)).map((t) => [t.name, t]));
      const lines = [
        `${provider.displayName} (${provider.id}): ${provider.description}`,
        `Connects with: ${AUTH_WORDS[provider.auth.kind]}. Needs: ${connectNeeds(provider)}`,
        `State here: ${describeState(provider, record)}.`,
      ];
      if (provider.limits) lines.push(`Limits: ${provider.limits}`);
      if (provider.docsUrl) lines.push(`Docs: ${provider.docsUrl}`);
      if (provider.spec.mcp) lines.push(mcpNote(listing));
      lines.push('', `Tools by category (${tools.size}):`);
      for (const category of listing?.categories ?? provider.categories) {
        const shown = category.tools.filter((name) => tools.has(name));
        if (shown.length === 0) continue;
        lines.push(`${category.title}${category.description ? ` — ${category.description}` : ''}`);
        for (const name of shown) lines.push(`  - ${name}: ${oneLine(tools.get(name)?.description ?? '')}`);
      }
      return textResult(lines.join('\n'));
    },
  };
}

/** Where an upstream MCP provider's tools come from, and what of its list is not served. */
function mcpNote(listing: McpListing | undefined): string {
  const from = `Its tools come from its MCP server, listed for this connection.`;
  if (!listing) return `${from} Connect it (connect_provider) to see the tools it lists for this account.`;
  if (listing.error !== undefined)
    return `${from} Listing them failed just now (${listing.error}); try again in a minute.`;
  const notes: string[] = [];
  if (listing.offered > listing.tools.length + listing.skipped.length)
    notes.push(
      `it offers at least ${listing.offered} tools and the gateway serves the first ${listing.tools.length + listing.skipped.length}`,
    );
  if (listing.skipped.length > 0)
    notes.push(
      `${listing.skipped.length} are left out because their schemas cannot be served (${listing.skipped.slice(0, 3).join('; ')})`,
    );
  return notes.length > 0 ? `${from} Of them: ${notes.join('; ')}.` : from;
}

function reportProblem(deps: SystemToolDeps): SystemTool {
  return {
    name: 'report_problem',
    title: 'Report a problem',
    description:
      'Send a problem report to the operator of this gateway: a tool that fails or misbehaves, a missing provider, a confusing result. Never include passwords, API keys or tokens.',
    inputSchema: {
      type: 'object',
      properties: {
        summary: {
          type: 'string',
          minLength: 1,
          maxLength: 500,
          description: 'What went wrong, in one line.',
        },
        details: {
          type: 'string',
          maxLength: 10_000,
          description: 'What was tried, what happened, what was expected.',
        },
        provider: { type: 'string', maxLength: 100 },
        tool: { type: 'string', maxLength: 100 },
      },
      required: ['summary'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    async handler(args, { caller }) {
      const text = (name: string): string | null => {
        const value = args[name];
        return typeof value === 'string' ? value : null;
      };
      const report = await deps.store.reports.insert(caller.scope, {
        summary: (text('summary') ?? '').trim(),
        details: text('details'),
        provider: text('provider'),
        tool: text('tool'),
      });
      if (deps.reportSink) {
        // The report is stored already; a failing webhook is the operator's to see, not the agent's.
        deps.reportSink(report, caller).catch((error: unknown) => deps.onSinkError(error, report));
      }
      return textResult(
        `Report ${report.id} was filed and the operator will see it. Quote this id if you follow up.`,
      );
    },
  };
}

/** The system tools, in the order tools/list shows them. */
export function createSystemTools(deps: SystemToolDeps): SystemTool[] {
  return [
    listProviders(deps),
    connectProvider(deps),
    disconnectProvider(deps),
    inspectProvider(deps),
    reportProblem(deps),
  ];
}
