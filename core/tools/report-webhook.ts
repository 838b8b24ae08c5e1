import type { ReportSink } from './system.js';
import type { OutboundClient } from '../upstream/outbound.js';
import { postJson } from '../upstream/webhooks.js';

/**
 * Delivers each problem report to TOOLGATE_REPORT_WEBHOOK_URL as JSON. The payload is what the
 * operator needs to act (the report, who filed it, from which scope) and nothing secret.
 */
export function reportWebhook(outbound: OutboundClient, url: string): ReportSink {
  return (report, caller) =>
    postJson(outbound, url, {
      type: 'problem_report',
      id: report.id,
      created_at: report.createdAt,
      summary: report.summary,
      details: report.details,
      provider: report.provider,
      tool: report.tool,
      client: caller.clientName,
      org_id: report.scope.orgId,
      user_id: report.scope.userId,
    });
}
