import type { FastifyBaseLogger } from 'fastify';
import type { OutboundClient } from './outbound.js';

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
 * Operator events (TOOLGATE_EVENTS_WEBHOOK_URL), fire and forget: a failed delivery is logged with
 * `TG_EVENTS_WEBHOOK_FAILED`, never thrown at the flow that emitted it. Without a URL, events go
 * nowhere.
 */
export function eventsWebhook(
  outbound: OutboundClient,
  url: string | undefined,
  log: FastifyBaseLogger,
): (event: Record<string, unknown>) => void {
  return (event) => {
    if (url === undefined) return;
    postJson(outbound, url, event).catch((error: unknown) =>
      log.warn({ err: error, code: 'TG_EVENTS_WEBHOOK_FAILED', event: event.type }, 'events webhook failed'),
    );
  };
}
