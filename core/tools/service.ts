import type { CallToolResult } from '@modelcontextprotocol/server';
import type {
  CatalogSnapshot,
  CompiledTool,
  JsonSchema,
  ProviderEntry,
  ToolDescriptor,
} from '../catalog/types.js';
import type { AuditLog } from '../store/audit-log.js';
import { validateArguments } from './args.js';
import { AuditedCall, type CallObservation } from './audit.js';
import { CALL_TOOL } from './compact.js';
import type { ToolVisibility, VisibilityOf } from './policy.js';
import { trimTool } from './trim.js';
import { toolPrefix } from '../catalog/openapi/names.js';
import {
  INVALID_PARAMS,
  outcomeOf,
  ToolCallError,
  type CallContext,
  type SystemTool,
  type ToolResult,
} from './types.js';
import type { Caller } from '../domain.js';
import { SYSTEM_LABEL, UNKNOWN_LABEL, type Telemetry } from '../telemetry/index.js';
import { Lru } from '../lru.js';

/** Runs one provider tool for a caller (tools/provider-tools.ts; connections decide the credential). */
export type ProviderToolRunner = (
  caller: Caller,
  provider: ProviderEntry,
  tool: CompiledTool,
  args: Record<string, unknown>,
  signal?: AbortSignal,
  observed?: CallObservation,
) => Promise<CallToolResult>;

/** Which providers' tools a scope sees besides the system tools (connected ones, `none`-auth ones). */
export type VisibleProviders = (caller: Caller, catalog: CatalogSnapshot) => Promise<string[]>;

/**
 * The tools of a provider listed at run time (an upstream MCP server's, tools/mcp-tools.ts) that a
 * caller's scope sees now, and a version that changes when they do; undefined when there are none.
 */
export type ListedTools = (
  caller: Caller,
  provider: ProviderEntry,
) => Promise<{ tools: readonly CompiledTool[]; version: string } | undefined>;

export interface ToolServiceDeps {
  catalog: { readonly current: CatalogSnapshot };
  systemTools: readonly SystemTool[];
  /** search_tools and call_tool: listed in compact mode only, callable in both (tools/compact.ts). */
  compactTools: readonly SystemTool[];
  /** A caller that asks for no mode gets the compact list above this many provider tools. */
  compactThreshold: number;
  runProviderTool: ProviderToolRunner;
  visibleProviders: VisibleProviders;
  /** Tools of providers whose tools are listed per connection (ProviderEntry.categoryRules). */
  listedTools: ListedTools;
  /** The caller's tool policy: what it hides is neither listed nor callable; its default surface. */
  visibility: VisibilityOf;
  /** Times each call and traces it (metrics by provider, tool and outcome). */
  telemetry: Telemetry;
  /** Where every call is recorded (who, which tool, outcome, latency; never arguments or results). */
  audit: AuditLog;
}

const MAX_CACHED_LISTS = 1_000;

// Trimmed for models (tools/trim.ts), once per tool of a catalog version.
function descriptor(tool: ToolDescriptor): ToolDescriptor {
  const trimmed = trimTool(tool);
  const out: ToolDescriptor = {
    name: tool.name,
    description: trimmed.description,
    inputSchema: trimmed.inputSchema,
  };
  if (tool.title !== undefined) out.title = tool.title;
  if (tool.outputSchema !== undefined) out.outputSchema = tool.outputSchema;
  if (tool.annotations !== undefined && Object.keys(tool.annotations).length > 0)
    out.annotations = tool.annotations;
  return out;
}

/**
 * tools/list and tools/call for a caller, shared by every protocol generation. The encoded tools
 * array is cached per (catalog version, visible provider set): serializing a 300-tool list per
 * request costs ~6 ms of CPU, a cached encoding well under 0.5 ms (DESIGN.md, Performance facts).
 * It is cached as UTF-8 bytes, not as a string: a response built around a cached string is
 * flattened, measured and UTF-8 encoded again on every request (~1 ms for 1,000 tools), while
 * bytes are copied once into the response and written as they are (scripts/bench, tools/list).
 *
 * The compact list (issue 15) is the system tools and search_tools/call_tool, whatever the scope
 * and catalog: encoded once, the same bytes for everyone.
 */
export class ToolService {
  /** Per catalog version, by policy and visible providers: the tools shown, encoded on first need. */
  private readonly lists = new Lru<string, { shown: readonly CompiledTool[]; bytes?: Buffer }>(
    MAX_CACHED_LISTS,
  );
  private listsVersion = -1;
  private compactList: Buffer | undefined;
  private readonly systemByName: ReadonlyMap<string, SystemTool>;

  constructor(private readonly deps: ToolServiceDeps) {
    this.systemByName = new Map([...deps.systemTools, ...deps.compactTools].map((t) => [t.name, t]));
  }

  /** The JSON text of the `tools` array this caller sees. */
  async listJson(caller: Caller): Promise<string> {
    return (await this.listBytes(caller)).toString('utf8');
  }

  /**
   * The `tools` array this caller sees, as encoded JSON (cached; never modify the buffer): the
   * surface the request asked for, else the one its tool policy sets, else compact when its scope
   * sees more provider tools than the threshold; full otherwise. Tools the policy hides are left out.
   */
  async listBytes(caller: Caller): Promise<Buffer> {
    if (caller.surface === 'compact') return this.compact();
    const catalog = this.deps.catalog.current;
    const [visible, visibility] = await Promise.all([
      this.deps.visibleProviders(caller, catalog),
      this.deps.visibility(caller),
    ]);
    const surface = caller.surface === 'auto' ? visibility.surface : caller.surface;
    if (surface === 'compact') return this.compact();
    if (this.listsVersion !== catalog.version) {
      this.lists.clear();
      this.listsVersion = catalog.version;
    }
    const listed = await this.listedOf(caller, catalog, visible);
    const versions = [...listed].map(([id, l]) => `${id}@${l?.version ?? '-'}`).join(',');
    const cacheKey = `${visibility.key}\u0000${visible.join(',')}\u0000${versions}`;
    let list = this.lists.get(cacheKey);
    if (list === undefined) {
      list = {
        shown: visible.flatMap((id) =>
          listed.has(id)
            ? (listed.get(id)?.tools ?? []).filter((tool) => visibility.shows(tool))
            : this.shownTools(catalog, id, visibility),
        ),
      };
      this.lists.set(cacheKey, list);
    }
    if (surface === 'auto' && list.shown.length > this.deps.compactThreshold) return this.compact();
    list.bytes ??= Buffer.from(JSON.stringify([...this.deps.systemTools, ...list.shown].map(descriptor)));
    return list.bytes;
  }

  /** The run-time lists of the visible providers that have them, by provider id. */
  private async listedOf(
    caller: Caller,
    catalog: CatalogSnapshot,
    visible: readonly string[],
  ): Promise<Map<string, Awaited<ReturnType<ListedTools>>>> {
    const dynamic = visible
      .map((id) => catalog.providers.get(id))
      .filter((p): p is ProviderEntry => p?.categoryRules !== undefined);
    const lists = await Promise.all(dynamic.map((p) => this.deps.listedTools(caller, p)));
    return new Map(dynamic.map((p, i) => [p.id, lists[i]]));
  }

  /** A tool of a run-time list the caller's scope sees, by name (its provider's prefix first). */
  private async listedTool(
    caller: Caller,
    catalog: CatalogSnapshot,
    name: string,
  ): Promise<CompiledTool | undefined> {
    for (const provider of catalog.providers.values()) {
      if (provider.categoryRules === undefined || !name.startsWith(toolPrefix(provider.id))) continue;
      const found = (await this.deps.listedTools(caller, provider))?.tools.find((t) => t.name === name);
      if (found) return found;
    }
    return undefined;
  }

  private compact(): Buffer {
    this.compactList ??= Buffer.from(
      JSON.stringify([...this.deps.systemTools, ...this.deps.compactTools].map(descriptor)),
    );
    return this.compactList;
  }

  /** A provider's tools the caller's policy shows (all of them when it has none: no copy). */
  private shownTools(
    catalog: CatalogSnapshot,
    id: string,
    visibility: ToolVisibility,
  ): readonly CompiledTool[] {
    const tools = catalog.providers.get(id)?.tools ?? [];
    return visibility.key === '' ? tools : tools.filter((tool) => visibility.shows(tool));
  }

  /**
   * Calls a tool, whichever list the caller was shown (search_tools and call_tool included).
   * Unknown tools and invalid arguments throw ToolCallError (a protocol error);
   * everything that goes wrong past that point is a tool result with isError.
   * Every call is timed and traced under its catalog names (an unknown name is never a label).
   */
  async call(caller: Caller, name: string, args: unknown, context: CallContext = {}): Promise<ToolResult> {
    const system = this.systemByName.get(name);
    const catalog = this.deps.catalog.current;
    const tool = system
      ? undefined
      : (catalog.tools.get(name) ?? (await this.listedTool(caller, catalog, name)));
    const telemetry = this.deps.telemetry.toolCallStarted(
      system ? SYSTEM_LABEL : (tool?.provider ?? UNKNOWN_LABEL),
      system || tool ? name : UNKNOWN_LABEL,
    );
    // call_tool's own audit entry would repeat the one of the tool it calls (recorded by this method too).
    // A known tool's name is the catalog's string, not the request's: an entry keeps its strings
    // alive until it is written (AuditLog.add).
    const audited =
      name === CALL_TOOL || !this.deps.audit.enabled
        ? undefined
        : new AuditedCall(
            this.deps.audit,
            caller,
            system?.name ?? tool?.name ?? name,
            tool?.provider ?? null,
          );
    try {
      const result = await telemetry.within(() =>
        system
          ? system.handler(this.check(name, system.inputSchema, args), { ...context, caller })
          : this.runProviderTool(caller, name, catalog, tool, args, context, audited?.observed ?? {}),
      );
      // Timed whether or not it is audited (`audited?.end(…)` would skip evaluating its arguments).
      const seconds = telemetry.completed(outcomeOf(result));
      audited?.end({ result }, seconds);
      return result;
    } catch (error) {
      const seconds = telemetry.completed(error instanceof ToolCallError ? 'refused' : 'internal_error');
      audited?.end({ error }, seconds);
      throw error;
    }
  }

  /**
   * Checks and runs a provider tool. Not async: with the caller's policy at hand (core/awaitable.ts)
   * the runner's promise is the call's own; `call` awaits it inside its try, where a throw here
   * (an unknown tool, invalid arguments) lands as a rejection would.
   */
  private runProviderTool(
    caller: Caller,
    name: string,
    catalog: CatalogSnapshot,
    tool: CompiledTool | undefined,
    args: unknown,
    context: CallContext,
    observed: CallObservation,
  ): Promise<CallToolResult> {
    const provider = tool && catalog.providers.get(tool.provider);
    const visible = provider && this.deps.visibility(caller);
    const run = (visibility: ToolVisibility | undefined): Promise<CallToolResult> => {
      // A tool the caller's policy hides answers exactly as one that does not exist.
      if (!tool || !provider || !visibility?.shows(tool)) {
        throw new ToolCallError(
          INVALID_PARAMS,
          `Unknown tool: ${name}. Find tools with search_tools or tools/list, or a provider to connect with list_providers.`,
        );
      }
      return this.deps.runProviderTool(
        caller,
        provider,
        tool,
        this.check(name, tool.inputSchema, args),
        context.signal,
        observed,
      );
    };
    return visible instanceof Promise ? visible.then(run) : run(visible);
  }

  private check(name: string, schema: JsonSchema, args: unknown): Record<string, unknown> {
    const verdict = validateArguments(schema, args);
    if (!verdict.ok)
      throw new ToolCallError(INVALID_PARAMS, `Invalid arguments for ${name}: ${verdict.message}.`);
    return verdict.args;
  }
}
