import type { CallToolResult } from '@modelcontextprotocol/server';
import type { FastifyBaseLogger } from 'fastify';
import type { ProviderEntry } from '../catalog/types.js';
import { providerSetting, type Config } from '../config.js';
import type { PluginRegistry } from '../catalog/plugins/registry.js';
import type {
  PluginContext,
  PluginHttpRequest,
  PluginHttpResponse,
  ProviderPlugin,
} from '../catalog/plugins/types.js';
import type { Telemetry } from '../telemetry/index.js';
import type { OutboundClient, OutboundResponse } from './outbound.js';
import { rawRequest, type ProviderRequest, type UpstreamRequest } from './request.js';
import { lowerHeaderName, Template } from './template.js';

/** What a call may use of a connection: its secrets and its non-secret fields. */
export interface ProviderAccess {
  credentials: Readonly<Record<string, string>>;
  fields: Readonly<Record<string, string>>;
  /**
   * New credentials after the provider refused these with a 401 (an OAuth2 token revoked or
   * expired early): the call is sent once more with them. Absent when nothing can be renewed.
   */
  renew?: () => Promise<ProviderAccess>;
}

/** A provider that cannot be called as configured (no base URL, a field missing): the operator's or user's to fix. */
export class ProviderSetupError extends Error {
  override name = 'ProviderSetupError';
}

// A connection field substituted into a host name must be one DNS label: never a free host.
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/i;
const TEMPLATE = /\$\{([a-zA-Z0-9_]+)\}/g;

/** A credential rule of a manifest, its templates split and its name made ready for the request, once. */
type Injection =
  | { in: 'header'; name: string; format: Template }
  | { in: 'query'; name: string; format: Template }
  | { in: 'bearer'; format: Template }
  | { in: 'basic'; username: Template; password: Template };

/**
 * How a provider's requests are signed, worked out once per catalog entry (a reload makes new
 * entries): its static headers with their names in lower case, and its credential rules. Read from
 * the manifest on every call, they cost the call an array of entries, a lookup per name and per
 * template, and two closures.
 */
interface Signing {
  headers: readonly (readonly [name: string, value: string])[];
  /** An `api_key` provider's rules; none for the other kinds. */
  inject: readonly Injection[];
}

const signings = new WeakMap<ProviderEntry, Signing>();

function signingOf(provider: ProviderEntry): Signing {
  let signing = signings.get(provider);
  if (signing === undefined) {
    const auth = provider.spec.auth;
    const template = (text: string): Template => Template.of(text, TEMPLATE);
    signing = {
      headers: Object.entries(provider.spec.api?.headers ?? {}).map(
        ([name, value]) => [lowerHeaderName(name), value] as const,
      ),
      inject:
        auth.kind !== 'api_key'
          ? []
          : auth.inject.map((rule): Injection => {
              if (rule.in === 'header')
                return { in: 'header', name: lowerHeaderName(rule.name), format: template(rule.format) };
              if (rule.in === 'bearer') return { in: 'bearer', format: template(rule.format) };
              if (rule.in === 'basic')
                return {
                  in: 'basic',
                  username: template(rule.username),
                  password: template(rule.password ?? ''),
                };
              return { in: 'query', name: encodeURIComponent(rule.name), format: template(rule.format) };
            }),
    };
    signings.set(provider, signing);
  }
  return signing;
}

export interface ProviderClientDeps {
  outbound: OutboundClient;
  plugins: PluginRegistry;
  config: Config;
  log: FastifyBaseLogger;
  /** Each request in a client span carrying `traceparent`, its status counted by provider. */
  telemetry: Telemetry;
}

/**
 * Talks to a provider on behalf of a connection: resolves the base URL (configuration override,
 * connection fields, or a webhook's own URL), injects credentials and static headers as the
 * manifest says, runs the plugin's request hook, and sends through the one outbound client. A 401
 * with renewable access (an OAuth2 token) is sent once more with the renewed credentials. Plugins
 * get a narrow context whose HTTP client is this one, bound to their provider.
 */
export class ProviderClient {
  /**
   * TOOLGATE_PROVIDER_<ID>[_<SERVER>]_BASE_URL by provider id and server name ('' for the base
   * URL). The environment is read once per name, as every other setting is (config.ts): a
   * process.env lookup costs microseconds, on every provider call. Keyed by the catalog's own
   * strings, a call's lookup builds no key: a string made per call is hashed and compared in full
   * by every map it is looked up in.
   */
  private readonly overrides = new Map<string, Map<string, string | undefined>>();

  constructor(private readonly deps: ProviderClientDeps) {}

  /** The code plugin of a provider, when it has one and it is registered. */
  pluginOf(provider: ProviderEntry): ProviderPlugin | undefined {
    return provider.plugin !== undefined ? this.deps.plugins.get(provider.plugin) : undefined;
  }

  /** Runs a plugin tool's handler; undefined when no plugin implements a tool of that name. */
  async runPluginTool(
    provider: ProviderEntry,
    name: string,
    args: Record<string, unknown>,
    access: ProviderAccess,
    signal?: AbortSignal,
  ): Promise<CallToolResult | undefined> {
    const plugin = this.pluginOf(provider);
    const handler = plugin?.tools?.find((t) => t.name === name);
    return handler?.handler(args, this.pluginContext(provider, plugin, access, signal));
  }

  /** Sends one request to the provider with the connection's auth (no tool involved). */
  send(
    provider: ProviderEntry,
    access: ProviderAccess,
    request: ProviderRequest,
    signal?: AbortSignal,
  ): Promise<OutboundResponse> {
    const base = request.url !== undefined ? undefined : this.baseUrl(provider, request.server, access);
    return this.transmit(provider, rawRequest(request, base), access, {
      signal,
      timeoutMs: request.timeoutMs,
    });
  }

  /**
   * Authorizes and sends a request; when the provider answers 401 and the access can be renewed
   * (an OAuth2 token), sends it once more with the renewed credentials.
   */
  async transmit(
    provider: ProviderEntry,
    unsigned: UpstreamRequest,
    access: ProviderAccess,
    options: {
      signal?: AbortSignal | undefined;
      timeoutMs?: number | undefined;
      plugin?: ProviderPlugin | undefined;
    },
  ): Promise<OutboundResponse> {
    const send = (request: UpstreamRequest): Promise<OutboundResponse> =>
      // Every field present, absent ones undefined: one shape for every provider request, so the
      // outbound client's reads of it stay cheap (spread objects of varying shapes made them
      // megamorphic, ~1 % of a tools/call's instructions; scripts/bench under callgrind).
      this.deps.telemetry.upstreamCall(provider.id, request, () =>
        this.deps.outbound.send({
          method: request.method,
          url: request.url,
          headers: request.headers,
          body: request.body,
          timeoutMs: options.timeoutMs,
          maxResponseBytes: undefined,
          signal: options.signal,
        }),
      );
    // Not async where no plugin hook runs (nearly every call): the send's own promise is awaited
    // below, without an async frame around it; a throw here lands in this async method as a rejection.
    const attempt = (current: ProviderAccess): Promise<OutboundResponse> => {
      const request = this.authorize(provider, unsigned, current);
      return options.plugin?.onRequest
        ? this.hooked(provider, options.plugin, request, current, options.signal).then(send)
        : send(request);
    };
    const response = await attempt(access);
    if (response.status !== 401 || !access.renew) return response;
    return attempt(await access.renew());
  }

  /** `request` as the plugin's request hook leaves it (its URL and body may change). */
  private async hooked(
    provider: ProviderEntry,
    plugin: ProviderPlugin,
    request: UpstreamRequest,
    access: ProviderAccess,
    signal: AbortSignal | undefined,
  ): Promise<UpstreamRequest> {
    const outgoing = {
      method: request.method,
      url: new URL(request.url),
      headers: request.headers,
      ...(request.body !== undefined ? { body: request.body } : {}),
    };
    await plugin.onRequest?.(outgoing, this.pluginContext(provider, plugin, access, signal));
    request.url = outgoing.url.toString();
    if (outgoing.body === undefined) delete request.body;
    else request.body = outgoing.body;
    return request;
  }

  /**
   * The base URL of a provider (or of one of its named servers): TOOLGATE_PROVIDER_<ID>[_<SERVER>]_BASE_URL
   * when set, else the manifest's, shaped by connection fields; a webhook provider's is the user's URL.
   */
  baseUrl(provider: ProviderEntry, server: string | undefined, access: ProviderAccess): string {
    if (provider.spec.auth.kind === 'webhook_url') {
      const url = access.credentials.webhook_url;
      if (!url)
        throw new ProviderSetupError(`${provider.displayName} is not connected: no webhook URL is stored.`);
      return url;
    }
    const override = this.override(provider.id, server);
    if (override !== undefined) return override;
    // An upstream MCP server's endpoint is its base URL (mcp-client.ts).
    if (provider.spec.mcp) return provider.spec.mcp.url;
    const spec = server ? provider.spec.api?.servers?.[server] : provider.spec.api?.base_url;
    if (spec === undefined)
      throw new ProviderSetupError(
        `${provider.displayName} has no base URL configured; the operator must fix its manifest.`,
      );
    if (typeof spec !== 'string') {
      const choice = access.fields[spec.by_field];
      const url = choice !== undefined ? spec.values[choice] : undefined;
      if (url === undefined)
        throw new ProviderSetupError(
          `${provider.displayName} needs the connection field "${spec.by_field}"; reconnect with it.`,
        );
      return url.replace(/\/+$/, '');
    }
    return Template.of(spec, TEMPLATE)
      .fill((name) => {
        const value = access.fields[name];
        if (value === undefined || !DNS_LABEL.test(value)) {
          throw new ProviderSetupError(
            `${provider.displayName} needs a valid connection field "${name}"; reconnect with it.`,
          );
        }
        return value;
      })
      .replace(/\/+$/, '');
  }

  /**
   * `url` with the manifest's static headers and the connection's credentials, as every request
   * to the provider carries them: the headers to send, and the URL with any query credential.
   */
  sign(
    provider: ProviderEntry,
    url: string,
    access: ProviderAccess,
  ): { url: string; headers: Record<string, string> } {
    const signed = this.authorize(provider, { method: 'POST', url, headers: {} }, access);
    return { url: signed.url, headers: signed.headers };
  }

  /** The configured base URL override of a provider (or one of its servers), without trailing slashes. */
  private override(providerId: string, server: string | undefined): string | undefined {
    let settings = this.overrides.get(providerId);
    if (settings === undefined)
      this.overrides.set(providerId, (settings = new Map<string, string | undefined>()));
    const key = server ?? '';
    if (!settings.has(key)) {
      const name = server ? `${server.toUpperCase()}_BASE_URL` : 'BASE_URL';
      settings.set(key, providerSetting(this.deps.config, providerId, name)?.replace(/\/+$/, ''));
    }
    return settings.get(key);
  }

  /** Adds the manifest's static headers and the connection's credentials to a request. */
  private authorize(
    provider: ProviderEntry,
    request: UpstreamRequest,
    access: ProviderAccess,
  ): UpstreamRequest {
    const signing = signingOf(provider);
    const headers = { ...request.headers };
    for (const [name, value] of signing.headers) headers[name] = value;
    let url = request.url;
    if (provider.spec.auth.kind === 'oauth2') {
      headers.authorization = `Bearer ${access.credentials.access_token ?? ''}`;
    } else if (signing.inject.length > 0) {
      const value = (name: string): string => access.credentials[name] ?? access.fields[name] ?? '';
      for (const rule of signing.inject) {
        if (rule.in === 'header') headers[rule.name] = rule.format.fill(value);
        else if (rule.in === 'bearer') headers.authorization = `Bearer ${rule.format.fill(value)}`;
        else if (rule.in === 'basic') {
          headers.authorization = `Basic ${Buffer.from(`${rule.username.fill(value)}:${rule.password.fill(value)}`).toString('base64')}`;
        } else {
          // Appended as text: re-serialising the URL's query would re-encode what buildRequest encoded.
          url += `${url.includes('?') ? '&' : '?'}${rule.name}=${encodeURIComponent(rule.format.fill(value))}`;
        }
      }
    }
    return { ...request, url, headers };
  }

  /** The narrow context a plugin gets: its provider's credentials, a bound HTTP client, a logger. */
  pluginContext(
    provider: ProviderEntry,
    plugin: ProviderPlugin | undefined,
    access: ProviderAccess,
    signal?: AbortSignal,
  ): PluginContext {
    return {
      providerId: provider.id,
      credentials: () => Promise.resolve(access.credentials),
      fields: access.fields,
      http: {
        request: async (request: PluginHttpRequest) =>
          pluginResponse(await this.send(provider, access, request, signal)),
      },
      log: this.deps.log.child({ provider: provider.id, plugin: plugin?.id }),
      ...(signal ? { signal } : {}),
    };
  }
}

/** The plugin's view of a response: one string per header, the body as text and parsed JSON. */
export function pluginResponse(response: OutboundResponse): PluginHttpResponse {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers))
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  const text = response.body.toString('utf8');
  let body: unknown;
  try {
    body = text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    body = undefined;
  }
  return { status: response.status, headers, body, text };
}
