import {
  isInputRequiredResult,
  type CallToolResult,
  type InputRequiredResult,
} from '@modelcontextprotocol/server';
import type { ToolDescriptor } from '../catalog/types.js';
import type { Caller } from '../domain.js';
import type { ToolOutcome } from '../telemetry/index.js';

/** What a call may use of the channel it arrived on. */
export interface CallContext {
  /** Aborted when the client cancels or goes away. */
  signal?: AbortSignal;
  /**
   * Offers a URL to the user through the client (MCP URL-mode elicitation), where the client
   * declared it can; absent otherwise.
   */
  elicitUrl?: (message: string, url: string) => void;
  /**
   * Set on 2026-07-28 calls from a client that declared URL elicitation: a tool may answer
   * `input_required` with a URL for the user instead; the client shows it and retries the call with
   * its answers (`params.inputResponses`, here; undefined on the first call).
   */
  urlInput?: { responses: Record<string, unknown> | undefined } | undefined;
}

/** What a tool answers: its result, or (2026-07-28, see CallContext.urlInput) a request for input. */
export type ToolResult = CallToolResult | InputRequiredResult;

export interface ToolContext extends CallContext {
  caller: Caller;
}

/** A built-in tool, present for every scope whatever is connected (SPEC.md, What the service does 6). */
export interface SystemTool extends ToolDescriptor {
  handler(args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult>;
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

// The outcome of a failed result where it is not plainly a tool error (see ToolOutcome): noted by
// the code that builds the result, read once when the call completes. A WeakMap, so results stay
// plain CallToolResults on the wire.
const OUTCOMES = new WeakMap<CallToolResult, ToolOutcome>();

/** Notes how a call that produced `result` ended, for metrics and traces; returns the result. */
export function withOutcome(result: CallToolResult, outcome: ToolOutcome): CallToolResult {
  OUTCOMES.set(result, outcome);
  return result;
}

/**
 * How a call ended: `input_required` for a request for input, else as noted by {@link withOutcome},
 * else `tool_error` for isError, else `ok`.
 */
export function outcomeOf(result: ToolResult): ToolOutcome {
  if (isInputRequiredResult(result)) return 'input_required';
  return OUTCOMES.get(result) ?? (result.isError ? 'tool_error' : 'ok');
}
