/**
 * The contract between the core and a code plugin (`plugins/<id>/`). A plugin adds what a manifest
 * cannot say: extra tools with handlers, a hook on outgoing requests, a credential check, response
 * shaping. It gets a narrow context (STYLE.md, practice 8): its provider's credentials, an HTTP
 * client already bound to the provider's base URL and auth, and a logger; never the server or the
 * database.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { CompiledTool, RequestPlan, ToolDescriptor } from '../types.js';

/** What a plugin tool returns: an MCP tool result (`isError: true` for provider failures). */
export type PluginToolResult = CallToolResult;

/**
 * A plugin tool as the catalog sees it: enough to list, categorise and validate it. Its name is
 * the full tool name, `<provider>_<name>` (TOOL_NAME_PATTERN).
 */
export type PluginToolDeclaration = ToolDescriptor;

export interface PluginTool extends PluginToolDeclaration {
  /** Runs the tool; arguments have already been validated against `inputSchema`. */
  handler(args: Record<string, unknown>, ctx: PluginContext): Promise<PluginToolResult>;
}

/** The id and tools of a plugin, without code: what manifest validation needs. */
export interface PluginDeclaration {
  id: string;
  tools?: PluginToolDeclaration[];
}

export interface ProviderPlugin extends PluginDeclaration {
  tools?: PluginTool[];
  /** Adjusts a compiled tool's outgoing request (after auth injection) before it is sent. */
  onRequest?(request: PluginOutboundRequest, ctx: PluginContext): void | Promise<void>;
  /**
   * After OAuth consent, before the connection is stored: connection fields the provider can tell
   * (a Jira site's cloud id), merged over those the user gave.
   */
  discoverFields?(ctx: PluginContext): Promise<Record<string, string>>;
  /** Checks a credential at connect time, replacing the manifest's `verify`. */
  checkCredential?(ctx: PluginContext): Promise<CredentialCheck>;
  /**
   * Turns a compiled tool's provider response into the tool result; `undefined` keeps the
   * default shaping.
   */
  shapeResponse?(
    response: PluginHttpResponse,
    tool: CompiledTool,
    ctx: PluginContext,
  ): PluginToolResult | undefined | Promise<PluginToolResult | undefined>;
}

export type CredentialCheck = { ok: true; account?: string } | { ok: false; message: string };

export interface PluginContext {
  providerId: string;
  /** The connection's credentials by field name (`api_key`, `webhook_url`, `access_token`, ...). */
  credentials(): Promise<Readonly<Record<string, string>>>;
  /** The connection's non-secret fields (manifest `connection_fields`), defaults applied. */
  fields: Readonly<Record<string, string>>;
  /** Bound to the provider's base URL (a webhook provider's: the user's URL) and its auth. */
  http: PluginHttpClient;
  log: PluginLogger;
  /** Aborted when the tool call is cancelled or times out. */
  signal?: AbortSignal;
}

export interface PluginHttpClient {
  request(request: PluginHttpRequest): Promise<PluginHttpResponse>;
}

export interface PluginHttpRequest {
  method: RequestPlan['method'];
  /** Relative to the bound base URL; `''` is the base URL itself. */
  path: string;
  /**
   * An absolute URL instead of `path`, for a call outside the provider's API base (e.g. a
   * discovery endpoint). It still goes through the outbound guard and carries the connection's auth.
   */
  url?: string;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** Sent as `application/json`. At most one of `json` and `form`. */
  json?: unknown;
  /** Sent as `application/x-www-form-urlencoded`. */
  form?: Record<string, string>;
  timeoutMs?: number;
}

export interface PluginHttpResponse {
  status: number;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** The parsed JSON body, or `undefined` when the body is not JSON. */
  body: unknown;
  text: string;
}

/** An outgoing request as built by the provider client; the hook may change it in place. */
export interface PluginOutboundRequest {
  method: RequestPlan['method'];
  url: URL;
  headers: Record<string, string>;
  /** Text, or bytes (a multipart or octet-stream body). */
  body?: string | Buffer;
}

/** A pino-compatible subset. */
export interface PluginLogger {
  debug(details: Record<string, unknown>, message: string): void;
  info(details: Record<string, unknown>, message: string): void;
  warn(details: Record<string, unknown>, message: string): void;
  error(details: Record<string, unknown>, message: string): void;
}
