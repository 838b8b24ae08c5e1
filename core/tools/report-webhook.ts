import type { ReportSink } from './system.js';
import type { OutboundClient } from '../upstream/outbound.js';

/** POSTs a JSON document to an operator's webhook; a non-2xx answer is an error for the caller to log. */
export async function postJson(
  outbound: OutboundClient,
  url: string,
  payload: Record<string, unknown>,
): Promise<void> {
  const response = await outbound.send({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', 'user-agent': 'toolgate' },
    body: JSON.stringify(payload),
  });
  if (response.status < 200 || response.status > 299)
    throw new Error(`The webhook answered HTTP ${response.status}`);
}

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
