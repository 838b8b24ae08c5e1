/**
 * The compact tool surface (issue 15): `search_tools` and `call_tool`, which the compact
 * tools/list shows beside the system tools instead of every provider tool. Together they reach
 * every tool of the catalog in at most two extra calls, while the list stays the same few tools
 * for every scope: small, and the same bytes for every prompt cache.
 */
import type { CatalogSnapshot, JsonSchema } from '../catalog/types.js';
import type { ConnectionService } from '../connections/service.js';
import type { VisibilityOf } from './policy.js';
import { DEFAULT_LIMIT, SearchFilterError, ToolIndex, type SearchHit } from './search.js';
import { oneLine, stateWord } from './system.js';
import { trimTool } from './trim.js';
import { textResult, type CallContext, type SystemTool, type ToolResult } from './types.js';
import type { Caller } from '../domain.js';

/** Calls a tool by name exactly as tools/call does (ToolService.call). */
export type CallTool = (
  caller: Caller,
  name: string,
  args: unknown,
  context: CallContext,
) => Promise<ToolResult>;

export interface CompactToolDeps {
  catalog: { readonly current: CatalogSnapshot };
  connections: ConnectionService;
  /** The caller's tool policy: search_tools finds only the tools it shows (call_tool: ToolService). */
  visibility: VisibilityOf;
  call: CallTool;
  /** The catalog with the tools upstream MCP providers list for the scope (tools/mcp-tools.ts). */
  scopedCatalog: (caller: Caller, catalog: CatalogSnapshot) => Promise<CatalogSnapshot>;
}

const SEARCH_TOOLS = 'search_tools';
export const CALL_TOOL = 'call_tool';

/** Longest description a hit carries; the inputSchema says the rest. */
const SUMMARY_MAX = 200;

/** One hit as search_tools returns it (its structuredContent and outputSchema). */
interface FoundTool {
  name: string;
  title?: string;
  description: string;
  provider: string;
  category: string;
  state: ReturnType<typeof stateWord>;
  inputSchema: JsonSchema;
  connect?: { tool: 'connect_provider'; arguments: { provider: string } };
}

const foundToolSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'The name to pass to call_tool.' },
    title: { type: 'string' },
    description: { type: 'string', description: 'What the tool does, in one line.' },
    provider: { type: 'string', description: 'Provider id.' },
    category: { type: 'string', description: "Category id within the provider's tools." },
    state: {
      type: 'string',
      enum: ['connected', 'no connection', 're-approval needed', 'no connection needed'],
      description: "This user's connection to the provider.",
    },
    inputSchema: { type: 'object', description: 'The arguments call_tool takes for this tool.' },
    connect: {
      type: 'object',
      description: 'Present until the provider is connected: the call that connects it.',
      properties: { tool: { type: 'string' }, arguments: { type: 'object' } },
      required: ['tool', 'arguments'],
    },
  },
  required: ['name', 'description', 'provider', 'category', 'state', 'inputSchema'],
};

/**
 * One hit, described as the full tools/list describes the tool (trimmed: tools/trim.ts), its
 * description cut to the first sentence.
 */
function found(hit: SearchHit, state: FoundTool['state']): FoundTool {
  const { tool, provider } = hit;
  const served = trimTool(tool);
  return {
    name: tool.name,
    ...(tool.title !== undefined ? { title: tool.title } : {}),
    description: oneLine(served.description, SUMMARY_MAX),
    provider: provider.id,
    category: tool.category,
    state,
    inputSchema: served.inputSchema,
    ...(state === 'connected' || state === 'no connection needed'
      ? {}
      : { connect: { tool: 'connect_provider', arguments: { provider: provider.id } } }),
  };
}

/** The hits as text, for clients that show the model only text: enough to call each one. */
function hitsText(query: string, tools: readonly FoundTool[]): string {
  const lines = [
    `${tools.length} tool(s) for "${query}", best first. Run one with call_tool {"name": "<tool>", "arguments": {...}}.`,
  ];
  for (const tool of tools) {
    const connect = tool.connect
      ? `; connect it first: connect_provider {"provider": "${tool.provider}"}`
      : '';
    lines.push(
      '',
      `${tool.name} (${tool.provider}, ${tool.state}${connect})`,
      `  ${tool.description}`,
      `  inputSchema: ${JSON.stringify(tool.inputSchema)}`,
    );
  }
  return lines.join('\n');
}

function searchTools(deps: CompactToolDeps): SystemTool {
  return {
    name: SEARCH_TOOLS,
    title: 'Search tools',
    description:
      'Find the tools that do what the user asks, among every provider\'s tools, connected or not: say it in plain words ("send an email", "open a jira ticket"). Returns each tool\'s name, what it does, its provider and this user\'s connection to it, and its inputSchema; run one with call_tool. A tool of a provider not connected yet says how to connect it.',
    inputSchema: {
      type: 'object',
      properties: {
        query: {
          type: 'string',
          minLength: 1,
          maxLength: 500,
          description: 'What the user wants done, in plain words.',
        },
        provider: {
          type: 'string',
          minLength: 1,
          maxLength: 64,
          description: 'Only tools of this provider id (as list_providers shows it).',
        },
        category: {
          type: 'string',
          minLength: 1,
          maxLength: 100,
          description: 'Only tools of this category (its id or title, as inspect_provider shows it).',
        },
        limit: {
          type: 'integer',
          minimum: 1,
          maximum: 20,
          default: DEFAULT_LIMIT,
          description: 'How many tools at most.',
        },
      },
      required: ['query'],
      additionalProperties: false,
    },
    outputSchema: {
      type: 'object',
      properties: { tools: { type: 'array', items: foundToolSchema } },
      required: ['tools'],
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
    async handler(args, { caller }) {
      const query = args.query as string;
      const visibility = await deps.visibility(caller);
      let hits: SearchHit[];
      try {
        const catalog = await deps.scopedCatalog(caller, deps.catalog.current);
        hits = ToolIndex.of(catalog).search(query, {
          shows: (tool) => visibility.shows(tool),
          ...(typeof args.provider === 'string' ? { provider: args.provider } : {}),
          ...(typeof args.category === 'string' ? { category: args.category } : {}),
          limit: args.limit as number,
        });
      } catch (error) {
        if (error instanceof SearchFilterError) return textResult(error.message, true);
        throw error;
      }
      const records = new Map((await deps.connections.list(caller.scope)).map((c) => [c.provider, c]));
      const tools = hits.map((hit) => found(hit, stateWord(hit.provider, records.get(hit.provider.id))));
      const text =
        tools.length > 0
          ? hitsText(query, tools)
          : `No tool matches "${query}". Try other words, or list_providers to see what can be connected.`;
      return { content: [{ type: 'text', text }], structuredContent: { tools } };
    },
  };
}

function callTool(deps: CompactToolDeps): SystemTool {
  return {
    name: CALL_TOOL,
    title: 'Call a tool',
    description:
      'Run a tool by name, as search_tools (or inspect_provider) names it, with its arguments as its inputSchema describes them. Validated and run exactly as if the tool were called directly: same results, same errors. A tool of a provider not connected yet answers how to connect it.',
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 64, description: 'The tool to run.' },
        arguments: { type: 'object', description: "The tool's arguments (its inputSchema)." },
      },
      required: ['name'],
      additionalProperties: false,
    },
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: true },
    handler(args, { caller, ...context }) {
      const name = args.name as string;
      // The only way to loop: call_tool calling call_tool (search_tools calls nothing).
      if (name === CALL_TOOL)
        return Promise.resolve(
          textResult('call_tool runs other tools: give the name of the tool to run, not call_tool.', true),
        );
      return deps.call(caller, name, args.arguments, context);
    },
  };
}

/** search_tools and call_tool, in the order the compact tools/list shows them. */
export function createCompactTools(deps: CompactToolDeps): SystemTool[] {
  return [searchTools(deps), callTool(deps)];
}
