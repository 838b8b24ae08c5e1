/**
 * A PluginContext whose HTTP client records each request and answers with canned responses in the
 * provider's real shapes, one per request, in order.
 */
import type { CompiledTool, RequestPlan } from '../../../core/catalog/types.js';
import type {
  PluginContext,
  PluginHttpRequest,
  PluginHttpResponse,
  PluginToolResult,
  ProviderPlugin,
} from '../../../core/catalog/plugins/types.js';

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

/**
 * A compiled tool with only what a plugin's shapeResponse reads given: its names, category and
 * request line; an open input schema, no annotations and no parameter bindings.
 */
export function compiledTool(
  tool: Pick<CompiledTool, 'name' | 'provider' | 'source' | 'description' | 'category'> &
    Pick<RequestPlan, 'method' | 'path'>,
): CompiledTool {
  const { method, path, ...rest } = tool;
  return {
    ...rest,
    inputSchema: { type: 'object' },
    annotations: {},
    request: { method, path, parameters: [] },
  };
}

/**
 * `plugin.shapeResponse` for `tool`, each response shaped with a fresh fake context of the tool's
 * provider (see fakeContext). Throws at once when the plugin does not shape responses.
 */
export function shaperOf(
  plugin: ProviderPlugin,
  tool: CompiledTool,
): (response: PluginHttpResponse) => Promise<PluginToolResult | undefined> {
  const shapeResponse = plugin.shapeResponse?.bind(plugin);
  if (!shapeResponse) throw new Error(`the ${plugin.id} plugin has no shapeResponse`);
  return async (response) => shapeResponse(response, tool, fakeContext(tool.provider).ctx);
}

export function textOf(result: PluginToolResult | undefined): string {
  const first = result?.content[0];
  if (first?.type !== 'text') throw new Error('expected a text block');
  return first.text;
}
