import type { CallToolResult } from '@modelcontextprotocol/server';
import type { Caller } from '../auth/caller.js';
import type { CatalogSnapshot, CompiledTool, ProviderEntry } from '../catalog/types.js';
import type { ConnectionService } from '../connections/service.js';
import type { Scope } from '../store/types.js';
import type { Executor, ProviderAccess } from './executor.js';
import { textResult } from './types.js';

const NO_ACCESS: ProviderAccess = { credentials: {}, fields: {} };

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

/**
 * Runs a provider tool for a caller with that scope's connection. Without a connection, or with one
 * that must be re-approved, the result says what to do instead of calling the provider.
 */
export function providerToolRunner(connections: ConnectionService, executor: Executor) {
  return async (
    caller: Caller,
    provider: ProviderEntry,
    tool: CompiledTool,
    args: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<CallToolResult> => {
    if (provider.auth.kind === 'none') return executor.run(provider, tool, args, NO_ACCESS, signal);
    let found: Awaited<ReturnType<ConnectionService['access']>>;
    try {
      found = await connections.access(caller.scope, provider.id);
    } catch {
      // A sealed credential that no longer opens (wrong master key, a row moved by hand) is unusable.
      return textResult(
        `The stored ${provider.displayName} credential cannot be read. Reconnect with connect_provider (provider "${provider.id}").`,
        true,
      );
    }
    if (!found) {
      return textResult(
        `${provider.displayName} is not connected for this user. Call connect_provider with provider "${provider.id}" to connect it, then call ${tool.name} again.`,
        true,
      );
    }
    if (found.record.state === 'reapproval_needed') {
      return textResult(
        `The ${provider.displayName} connection must be re-approved. Call connect_provider with provider "${provider.id}" for a reconnect link.`,
        true,
      );
    }
    return executor.run(provider, tool, args, found.access, signal);
  };
}
