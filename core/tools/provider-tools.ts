import type { CallToolResult } from '@modelcontextprotocol/server';
import type { CatalogSnapshot, CompiledTool, ProviderEntry } from '../catalog/types.js';
import { ReapprovalNeededError, TemporaryRefreshError, type OAuthFlows } from '../connections/oauth/index.js';
import type { ConnectionService } from '../connections/service.js';
import { OutboundBlockedError, OutboundError } from '../upstream/outbound.js';
import {
  pluginResponse,
  ProviderSetupError,
  type ProviderAccess,
  type ProviderClient,
} from '../upstream/provider-client.js';
import { buildRequest } from '../upstream/request.js';
import type { CallObservation } from './audit.js';
import type { McpToolLists } from './mcp-tools.js';
import { outboundErrorResult, responseResult } from './result.js';
import { textResult, withOutcome } from './types.js';
import type { Caller, Scope } from '../domain.js';

const NO_ACCESS: ProviderAccess = { credentials: {}, fields: {} };

/**
 * Runs one provider tool with the given access: a plugin tool by its handler; a compiled tool by
 * building its request from the plan and arguments, sending it through the provider client, and
 * shaping the answer (the plugin's shaping first, when it has one). Provider failures are results
 * with `isError`, never exceptions (STYLE.md, Practices 5).
 */
export async function runTool(
  client: ProviderClient,
  provider: ProviderEntry,
  tool: CompiledTool,
  args: Record<string, unknown>,
  access: ProviderAccess,
  signal?: AbortSignal,
  observed: CallObservation = {},
): Promise<CallToolResult> {
  try {
    if (!tool.request) {
      const result = await client.runPluginTool(provider, tool.name, args, access, signal);
      return (
        result ??
        textResult(`${tool.name} has no implementation loaded; report it with report_problem.`, true)
      );
    }
    const built = buildRequest(tool.request, args, client.baseUrl(provider, tool.request.server, access));
    if (!built.ok) return textResult(`Cannot call ${tool.name}: ${built.message}.`, true);
    const plugin = client.pluginOf(provider);
    const response = await client.transmit(provider, built.request, access, { signal, plugin });
    observed.upstreamStatus = response.status;
    const shaped = plugin?.shapeResponse
      ? await plugin.shapeResponse(
          pluginResponse(response),
          tool,
          client.pluginContext(provider, plugin, access, signal),
        )
      : undefined;
    const result = shaped ?? responseResult(tool, response, { secrets: Object.values(access.credentials) });
    // A provider's 4xx is the agent's to act on (a tool error); its 5xx and 429 are the provider's.
    return response.status >= 500 || response.status === 429 ? withOutcome(result, 'upstream_error') : result;
  } catch (error) {
    if (error instanceof OutboundError)
      return withOutcome(
        outboundErrorResult(tool, error),
        error instanceof OutboundBlockedError ? 'refused' : 'upstream_error',
      );
    if (error instanceof ProviderSetupError) return textResult(error.message, true);
    throw error;
  }
}

/** Which providers' tools a scope sees: its connected ones (in any state) and `none`-auth ones. */
export async function visibleProviders(
  connections: ConnectionService,
  scope: Scope,
  catalog: CatalogSnapshot,
): Promise<string[]> {
  const connected = new Set((await connections.list(scope)).map((c) => c.provider));
  return [...catalog.providers.values()]
    .filter((p) => p.auth.kind === 'none' || connected.has(p.id))
    .map((p) => p.id);
}

/** The re-approval message: what happened and a fresh link to approve again. */
async function reapproval(oauth: OAuthFlows, scope: Scope, provider: ProviderEntry): Promise<CallToolResult> {
  const link = await oauth.consent.startLink(scope, provider);
  const how =
    'url' in link
      ? `Ask the user to open this link to approve access again (it works once, for 10 minutes):\n${link.url}`
      : link.error;
  return withOutcome(
    textResult(
      `The ${provider.displayName} connection must be re-approved: its access was revoked or expired for good. ${how}\nThe connection keeps its settings; once approved, call the tool again.`,
      true,
    ),
    'not_connected',
  );
}

/**
 * Runs a provider tool for a caller with that scope's connection. Without a connection, or with one
 * that must be re-approved, the result says what to do instead of calling the provider. OAuth2
 * tokens are refreshed before they expire, and once more after a provider's 401.
 */
export function providerToolRunner(
  connections: ConnectionService,
  client: ProviderClient,
  oauth: OAuthFlows,
  mcp: McpToolLists,
) {
  // An upstream MCP server's tool goes to its server; any other through the provider client.
  const run = (
    caller: Caller,
    provider: ProviderEntry,
    tool: CompiledTool,
    args: Record<string, unknown>,
    access: ProviderAccess,
    signal?: AbortSignal,
    observed?: CallObservation,
  ): Promise<CallToolResult> =>
    provider.spec.mcp
      ? mcp.call(caller.scope, provider, tool, args, access, signal, observed)
      : runTool(client, provider, tool, args, access, signal, observed);

  return async (
    caller: Caller,
    provider: ProviderEntry,
    tool: CompiledTool,
    args: Record<string, unknown>,
    signal?: AbortSignal,
    observed?: CallObservation,
  ): Promise<CallToolResult> => {
    if (provider.auth.kind === 'none') return run(caller, provider, tool, args, NO_ACCESS, signal, observed);
    let found: Awaited<ReturnType<ConnectionService['access']>>;
    try {
      // Awaited only when the connection is not at hand (core/awaitable.ts).
      const access = connections.access(caller.scope, provider.id);
      found = access instanceof Promise ? await access : access;
    } catch {
      // A sealed credential that no longer opens (wrong master key, a row moved by hand) is unusable.
      return textResult(
        `The stored ${provider.displayName} credential cannot be read. Reconnect with connect_provider (provider "${provider.id}").`,
        true,
      );
    }
    if (!found) {
      return withOutcome(
        textResult(
          `${provider.displayName} is not connected for this user. Call connect_provider with provider "${provider.id}" to connect it, then call ${tool.name} again.`,
          true,
        ),
        'not_connected',
      );
    }
    if (found.record.state === 'reapproval_needed') return reapproval(oauth, caller.scope, provider);
    try {
      const access =
        provider.auth.kind === 'oauth2'
          ? await oauth.tokens.fresh(caller.scope, provider, found.record, found.access)
          : found.access;
      return await run(caller, provider, tool, args, access, signal, observed);
    } catch (error) {
      if (error instanceof ReapprovalNeededError) return reapproval(oauth, caller.scope, provider);
      if (error instanceof TemporaryRefreshError) {
        return withOutcome(
          textResult(
            `${provider.displayName} could not renew its access just now (${error.message}). This is temporary: try the call again in a minute.`,
            true,
          ),
          'upstream_error',
        );
      }
      throw error;
    }
  };
}
