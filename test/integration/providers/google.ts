/**
 * What the Google APIs' tests (Calendar, Gmail, Drive) share: Google's error shape, the bearer
 * check and the fallback of a loopback Google API, and the harness of a seeded OAuth connection.
 */
import type { Received } from '../../helpers/receiver.js';
import { jsonAnswer, useProviderHarness, type Answer, type ProviderHarness } from './helpers.js';

/**
 * An error as Google APIs answer it (Calendar, Gmail, Drive):
 * `{error: {code, message, errors: [{message, domain, reason}], status}}`.
 */
export function googleErrorAnswer(
  code: number,
  message: string,
  detail: { reason: string; domain?: string; status: string },
  headers: Record<string, string> = {},
): Answer {
  const errors = [{ message, domain: detail.domain ?? 'global', reason: detail.reason }];
  return jsonAnswer(code, { error: { code, message, errors, status: detail.status } }, headers);
}

/** Google's 404: `{reason: notFound, status: NOT_FOUND}`. */
export function googleNotFound(message: string): Answer {
  return googleErrorAnswer(404, message, { reason: 'notFound', status: 'NOT_FOUND' });
}

/** Google's 429 with a Retry-After: `{reason: rateLimitExceeded, domain: usageLimits, status: RESOURCE_EXHAUSTED}`. */
export function googleRateLimited(message: string, retryAfter: number): Answer {
  return googleErrorAnswer(
    429,
    message,
    { reason: 'rateLimitExceeded', domain: 'usageLimits', status: 'RESOURCE_EXHAUSTED' },
    { 'retry-after': String(retryAfter) },
  );
}

/**
 * A loopback Google API: the bearer token checked first (a 401 UNAUTHENTICATED otherwise), then
 * `route`; what `route` does not answer is a 400 INVALID_ARGUMENT naming the request.
 */
export function googleApi(
  token: string,
  route: (request: Received) => Answer | undefined,
): (request: Received) => Answer {
  return (request) => {
    if (request.headers.authorization !== `Bearer ${token}`)
      return googleErrorAnswer(401, 'Request had invalid authentication credentials.', {
        reason: 'authError',
        status: 'UNAUTHENTICATED',
      });
    return (
      route(request) ??
      googleErrorAnswer(400, `Invalid request: ${request.method} ${request.url}`, {
        reason: 'invalidArgument',
        status: 'INVALID_ARGUMENT',
      })
    );
  };
}

/** A Google API of the catalog connected for user u1 over OAuth, with `route` behind `googleApi`. */
export function useGoogleApi(options: {
  provider: 'google-calendar' | 'gmail' | 'google-drive';
  accessToken: string;
  account: string;
  /** The API's path under the loopback URL ("/calendar/v3"). */
  basePath: string;
  route: (request: Received) => Answer | undefined;
}): ProviderHarness {
  const { route, ...rest } = options;
  return useProviderHarness({ ...rest, auth: 'oauth', answer: googleApi(options.accessToken, route) });
}
