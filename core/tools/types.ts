import type { CallToolResult } from '@modelcontextprotocol/server';
import type { ToolDescriptor } from '../catalog/types.js';
import type { Caller } from '../domain.js';

/** What a call may use of the channel it arrived on. */
export interface CallContext {
  /** Aborted when the client cancels or goes away. */
  signal?: AbortSignal;
  /**
   * Offers a URL to the user through the client (MCP URL-mode elicitation), where the client
   * declared it can; absent otherwise.
   */
  elicitUrl?: (message: string, url: string) => void;
}

export interface ToolContext extends CallContext {
  caller: Caller;
}

/** A built-in tool, present for every scope whatever is connected (SPEC.md, What the service does 6). */
export interface SystemTool extends ToolDescriptor {
  handler(args: Record<string, unknown>, ctx: ToolContext): Promise<CallToolResult>;
}

/**
 * A protocol-level refusal of a tools/call (unknown tool, invalid arguments): answered as a
 * JSON-RPC error (InvalidParams), not as a tool result (STYLE.md, Practices 5).
 */
export class ToolCallError extends Error {
  override name = 'ToolCallError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** JSON-RPC InvalidParams. */
export const INVALID_PARAMS = -32602;

/** A text-only tool result; `isError` marks failures an agent should act on. */
export function textResult(text: string, isError = false): CallToolResult {
  return isError
    ? { content: [{ type: 'text', text }], isError: true }
    : { content: [{ type: 'text', text }] };
}
