/**
 * A PluginContext whose HTTP client records each request and answers with canned responses in the
 * provider's real shapes, one per request, in order.
 */
import type {
  PluginContext,
  PluginHttpRequest,
  PluginHttpResponse,
  PluginToolResult,
} from '../../../core/plugins/types.js';

export function fakeContext(providerId: string, ...responses: PluginHttpResponse[]) {
  const requests: PluginHttpRequest[] = [];
  const ignore = () => undefined;
  const ctx: PluginContext = {
    providerId,
    credentials: () => Promise.resolve({ access_token: 'test-token' }),
    fields: {},
    http: {
      request(request) {
        requests.push(request);
        const response = responses.shift();
        if (!response) throw new Error(`unexpected request ${request.method} ${request.path}`);
        return Promise.resolve(response);
      },
    },
    log: { debug: ignore, info: ignore, warn: ignore, error: ignore },
  };
  return { ctx, requests };
}

/** A JSON response, as the outbound client parses it. */
export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}) {
  return {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
    body,
    text: JSON.stringify(body),
  };
}

/** A response whose body is not JSON. */
export function textResponse(
  status: number,
  text: string,
  headers: Record<string, string> = {},
): PluginHttpResponse {
  return { status, headers: { 'content-type': 'text/html', ...headers }, body: undefined, text };
}

export function textOf(result: PluginToolResult | undefined): string {
  const first = result?.content[0];
  if (first?.type !== 'text') throw new Error('expected a text block');
  return first.text;
}
