/**
 * Zendesk (manifests/zendesk.yaml). The compiled tools need no custom request logic, but Zendesk's
 * error bodies carry what went wrong in `description` and `details`
 * ({"error": "RecordInvalid", "description": "Record validation errors", "details": {"status":
 * [{"description": "Status: closed prevents ticket update", "error": "..."}]}};
 * https://developer.zendesk.com/api-reference/ticketing/introduction/#response-format), which the
 * default shaping does not read. This plugin puts them in the agent's message for the statuses that
 * mean "fix the request"; every other answer keeps the default shaping.
 */
import { STATUS_CODES } from 'node:http';
import type { ProviderPlugin } from '../../core/catalog/plugins/types.js';

const MAX_DETAILS = 5;

// What the agent should do next, by status.
const NEXT_STEP: Readonly<Record<number, string>> = {
  400: 'Fix the arguments as the message says.',
  404: 'Check the ids in the arguments; the connected agent may also lack access to this ticket or user.',
  422: 'Fix the arguments as the message says; a closed ticket cannot be updated at all.',
};

/** The zendesk plugin: Zendesk's own explanation of a refused request, details included. */
export const zendeskPlugin: ProviderPlugin = {
  id: 'zendesk',

  shapeResponse(response) {
    const next = NEXT_STEP[response.status];
    const body = response.body;
    if (next === undefined || !isRecord(body) || typeof body.error !== 'string') return undefined;
    const said = [body.error, ...(typeof body.description === 'string' ? [body.description] : [])].join(': ');
    const details = detailTexts(body.details);
    const reason = STATUS_CODES[response.status] ?? '';
    const text =
      `zendesk returned HTTP ${response.status} ${reason}: ${said}` +
      (details.length > 0 ? ` (${details.join('; ')})` : '') +
      `.\n${next}`;
    return { content: [{ type: 'text', text }], isError: true };
  },
};

// {"status": [{"description": "Status: closed prevents ticket update", "error": "..."}], ...}
function detailTexts(details: unknown): string[] {
  if (!isRecord(details)) return [];
  return Object.entries(details)
    .flatMap(([field, problems]) =>
      (Array.isArray(problems) ? problems : []).map((problem) =>
        isRecord(problem) && typeof problem.description === 'string'
          ? problem.description
          : `${field}: ${isRecord(problem) && typeof problem.error === 'string' ? problem.error : 'invalid'}`,
      ),
    )
    .slice(0, MAX_DETAILS);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
