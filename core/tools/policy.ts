/**
 * Tool policies (issue 15): which provider tools a client, and each organization of a client,
 * exposes, and which tool list it is served by default. Every place that shows or runs a provider
 * tool (tools/list, tools/call, search_tools, call_tool, list_providers, inspect_provider,
 * connect_provider) asks the caller's {@link ToolVisibility}, so a hidden tool is neither listed,
 * searched nor callable, and a provider all of whose tools are hidden is not in the catalog.
 */
import { andThen, type Awaitable } from '../awaitable.js';
import type { CompiledTool, ProviderEntry } from '../catalog/types.js';
import type { Caller, Scope, SurfaceChoice } from '../domain.js';
import type { PolicyStore, ToolPolicyRecord } from '../store/types.js';

/** What a policy entry is matched against: a tool's name and its provider's id. */
export type PolicyTarget = Pick<CompiledTool, 'name' | 'provider'>;

/** A policy entry names a provider id or a tool name, `*` at its end standing for any suffix. */
export function entryMatches(entry: string, tool: PolicyTarget): boolean {
  const matches = entry.endsWith('*')
    ? (value: string) => value.startsWith(entry.slice(0, -1))
    : (value: string) => value === entry;
  return matches(tool.name) || matches(tool.provider);
}

/** One policy: allowed (no allow-list, or an entry names it) and denied by no entry. */
function lets(policy: Pick<ToolPolicyRecord, 'allow' | 'deny'>, tool: PolicyTarget): boolean {
  return (
    (policy.allow === null || policy.allow.some((entry) => entryMatches(entry, tool))) &&
    !policy.deny.some((entry) => entryMatches(entry, tool))
  );
}

/**
 * The policies that apply to a caller, client's first, then its organization's: a tool is shown only
 * when every one lets it through (an organization narrows its client), and the last surface other
 * than `auto` is the default tool list.
 */
export class ToolVisibility {
  /** The surface to serve when the request asks for none (`auto`: the compact threshold decides). */
  readonly surface: SurfaceChoice;
  /** Tells visibilities apart for caches of what they show ('' when everything is shown). */
  readonly key: string;

  constructor(private readonly policies: readonly Pick<ToolPolicyRecord, 'surface' | 'allow' | 'deny'>[]) {
    this.surface = policies.reduce<SurfaceChoice>(
      (chosen, p) => (p.surface === 'auto' ? chosen : p.surface),
      'auto',
    );
    const narrowing = policies.filter((p) => p.allow !== null || p.deny.length > 0);
    this.key = narrowing.length === 0 ? '' : JSON.stringify(narrowing.map((p) => [p.allow, p.deny]));
  }

  shows(tool: PolicyTarget): boolean {
    return this.policies.every((policy) => lets(policy, tool));
  }

  /**
   * A provider is in the caller's catalog while at least one of its tools is shown; one whose
   * tools are listed per connection (an upstream MCP server's) while the policy lets its id through.
   */
  showsProvider(provider: ProviderEntry): boolean {
    if (this.key === '') return true;
    if (provider.categoryRules !== undefined) return this.shows({ name: '', provider: provider.id });
    return provider.tools.some((tool) => this.shows(tool));
  }
}

/** How the tools find a caller's visibility (tools/index.ts: from the store's policies). */
export type VisibilityOf = (caller: Caller) => Awaitable<ToolVisibility>;

/** The visibility of a caller without policies (most of them, on every call): shared, immutable. */
const EVERYTHING = new ToolVisibility([]);

/**
 * The caller's visibility: its client's policy, and its organization's in 3-level scopes. Solo and
 * 2-level scopes (most calls) read one policy, answered at once while the store holds it in memory.
 */
export function visibilityOf(policies: PolicyStore, scope: Scope): Awaitable<ToolVisibility> {
  if (scope.orgId === null) return andThen(policies.get(scope.clientId, null), visibility);
  return Promise.all([policies.get(scope.clientId, null), policies.get(scope.clientId, scope.orgId)]).then(
    ([client, org]) => visibility(client, org),
  );
}

function visibility(client: ToolPolicyRecord | undefined, org?: ToolPolicyRecord): ToolVisibility {
  if (client === undefined && org === undefined) return EVERYTHING;
  return new ToolVisibility([client, org].filter((p) => p !== undefined));
}
