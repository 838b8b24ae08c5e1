import type { OutboundClient } from '../connections/outbound.js';
import type { ReportSink } from './system.js';

/**
 * Delivers each problem report to TOOLGATE_REPORT_WEBHOOK_URL as JSON. The payload is what the
 * operator needs to act (the report, who filed it, from which scope) and nothing secret.
 */
export function reportWebhook(outbound: OutboundClient, url: string): ReportSink {
  return async (report, caller) => {
    const body = JSON.stringify({
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
    const response = await outbound.send({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', 'user-agent': 'toolgate' },
      body,
    });
    if (response.status < 200 || response.status > 299) {
      throw new Error(`The report webhook answered HTTP ${response.status}`);
    }
  };
}
