/**
 * Tool results from Linear's answers: the relevant node(s) as compact JSON text (as every provider
 * answer is shown: core/tools/json-compact.ts) and as structuredContent (every Linear tool declares
 * an outputSchema), connections flattened to arrays, and a note saying how to fetch the next page.
 */
import type { PluginToolResult } from '../../core/catalog/plugins/types.js';
import { isRecord } from './graphql.js';

/** A result holding one object (the viewer, an issue), after an optional headline. */
export function objectResult(value: unknown, what: string, headline?: string): PluginToolResult {
  if (!isRecord(value)) return failure(`Linear's answer did not include the ${what}; try again.`);
  const shown = withoutConnections(value) as Record<string, unknown>;
  const text = JSON.stringify(shown);
  return {
    content: [{ type: 'text', text: headline === undefined ? text : `${headline}\n\n${text}` }],
    structuredContent: shown,
  };
}

/** A result holding one page of a connection, under `key`, with how to ask for the next page. */
export function pageResult(connection: unknown, key: string, tool: string): PluginToolResult {
  if (!isRecord(connection) || !Array.isArray(connection.nodes)) {
    return failure(`Linear's answer did not include the ${key}; try again.`);
  }
  const items = connection.nodes.map(withoutConnections);
  const pageInfo = isRecord(connection.pageInfo) ? connection.pageInfo : {};
  const hasNextPage = pageInfo.hasNextPage === true;
  const endCursor = typeof pageInfo.endCursor === 'string' ? pageInfo.endCursor : null;
  const lines = [items.length === 0 ? `No ${key} found.` : JSON.stringify(items)];
  if (hasNextPage && endCursor !== null) {
    lines.push(`More ${key} exist: call ${tool} again with the same arguments and after: "${endCursor}".`);
  }
  return {
    content: [{ type: 'text', text: lines.join('\n\n') }],
    structuredContent: { [key]: items, pageInfo: { hasNextPage, endCursor } },
  };
}

/** An `isError` result an agent reads. */
export function failure(text: string): PluginToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

// GraphQL wraps every list in `{ nodes: [...] }`; the agent reads the list itself.
function withoutConnections(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutConnections);
  if (!isRecord(value)) return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === 'nodes' && Array.isArray(value.nodes))
    return value.nodes.map(withoutConnections);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withoutConnections(item)]));
}
