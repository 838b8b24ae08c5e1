import { isInputRequiredResult, type CallToolResult } from '@modelcontextprotocol/server';
import type { Caller } from '../domain.js';
import { auditTime, type AuditLog } from '../store/audit-log.js';
import type { AuditOutcome } from '../store/types.js';
import { ToolCallError, type ToolResult } from './types.js';

/** What a tool call tells its audit entry while it runs (filled by the provider tool runner). */
export interface CallObservation {
  /** The provider's HTTP status, once a response arrived. */
  upstreamStatus?: number;
}

/** Tool names are at most 48 characters (DESIGN.md); room for what a client prefixes. */
const TOOL_NAME_MAX = 64;

/** Longest failure message kept: enough to tell failures apart on the Activity page. */
const MESSAGE_MAX = 500;

/** The message a failed call's entry keeps: the text the agent got, which carries no credential. */
function failureText(result: CallToolResult): string | null {
  const first = result.content.find((block) => block.type === 'text');
  return first && 'text' in first ? first.text.slice(0, MESSAGE_MAX) : null;
}

/** A tool call under way; `end` records its entry in the audit trail (never its arguments or result). */
export class AuditedCall {
  readonly observed: CallObservation = {};
  private readonly at = auditTime();

  constructor(
    private readonly audit: AuditLog,
    private readonly caller: Caller,
    private readonly tool: string,
    private readonly provider: string | null,
  ) {}

  /**
   * Records how the call ended: its result, or what it threw (a protocol refusal or a fault), and
   * how long it took (as its telemetry timed it).
   */
  end(ending: { result: ToolResult } | { error: unknown }, seconds: number): void {
    let outcome: AuditOutcome = 'ok';
    let message: string | null = null;
    if ('result' in ending) {
      // A request for the user's input first (connect_provider's link) is no failure.
      if (!isInputRequiredResult(ending.result) && ending.result.isError === true) {
        outcome = 'error';
        message = failureText(ending.result);
      }
    } else if (ending.error instanceof ToolCallError) {
      outcome = 'refused';
      message = ending.error.message.slice(0, MESSAGE_MAX);
    } else {
      outcome = 'failed';
      message = 'The gateway failed to run the call (its log says why, as TG_ERR_INTERNAL).';
    }
    const { scope } = this.caller;
    // Every field given: the entry is kept as it is, not copied with defaults (AuditLog.add).
    this.audit.add({
      id: '',
      at: this.at,
      event: 'tool_call',
      clientId: scope.clientId,
      keyId: this.caller.keyId,
      orgId: scope.orgId,
      userId: scope.userId,
      provider: this.provider,
      // A name as the caller sent it (an unknown tool's may be anything): no longer than a tool's can be.
      tool: this.tool.slice(0, TOOL_NAME_MAX),
      outcome,
      latencyUs: Math.round(seconds * 1_000_000),
      upstreamStatus: this.observed.upstreamStatus ?? null,
      message,
    });
  }
}
