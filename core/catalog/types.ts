/**
 * The catalog as the rest of the gateway sees it: an immutable snapshot of loaded providers and
 * their compiled tools. The loader (manifests + OpenAPI compiler) produces it; the MCP layer,
 * system tools and provider client only read it. A reload builds a new snapshot and swaps it in one
 * assignment (DESIGN.md, Principles), so nothing here is ever mutated after construction.
 */
import type { CategorySpec, Manifest } from './manifest-schema.js';

/** A JSON Schema object as emitted for MCP (draft 2020-12, no unresolved `$ref`). */
export type JsonSchema = { [key: string]: unknown };

/** A schema as the OpenAPI compiler emits it: an object, or (JSON Schema 2020-12) `true`/`false`. */
export type SchemaOut = JsonSchema | boolean;

export type AuthKind = 'api_key' | 'webhook_url' | 'oauth2' | 'none';

/** MCP tool annotations (hints only; clients decide what to do with them). */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** Where one tool argument goes in the upstream HTTP request. */
export interface ParameterBinding {
  /** Property name in the tool's inputSchema. */
  arg: string;
  /** Name on the wire (path template variable, query key, header name). */
  name: string;
  in: 'path' | 'query' | 'header';
  /** OpenAPI serialization style; defaults per location (path: simple, query: form, header: simple). */
  style?: 'form' | 'simple' | 'spaceDelimited' | 'pipeDelimited' | 'deepObject';
  /** OpenAPI explode; defaults to true for form, false otherwise. */
  explode?: boolean;
  required: boolean;
}

/** How a compiled tool turns its arguments into one upstream HTTP request. */
export interface RequestPlan {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';
  /**
   * Path template appended to the provider's base URL, e.g. `/repos/{owner}/{repo}/issues`.
   * For webhook providers it is appended to the user's webhook URL (`''` = the URL itself).
   */
  path: string;
  /**
   * Query parameters every request carries, before the arguments': an OpenAPI path key's literal
   * `?a=b` (a name without `=` has no value). Decoded; the request builder encodes them.
   */
  fixedQuery?: { name: string; value?: string }[];
  parameters: ParameterBinding[];
  body?: {
    contentType:
      | 'application/json'
      | 'application/x-www-form-urlencoded'
      | 'multipart/form-data'
      | 'application/octet-stream';
    required: boolean;
    /**
     * multipart/form-data: the fields that are files, each an object {content (base64),
     * filename?, media_type?} or an array of them. An octet-stream body is one base64 argument.
     */
    files?: string[];
    /**
     * `property`: the body is the tool argument named `arg`.
     * `spread`: the body is built from the listed top-level arguments (an object body whose
     * properties were lifted into the tool's inputSchema).
     */
    from: { kind: 'property'; arg: string } | { kind: 'spread'; args: string[] };
  };
  /** Which base URL of the provider to use when it has several (manifest `api.servers` key). */
  server?: string;
}

/** What tools/list shows of a tool (system, compiled and plugin tools alike). */
export interface ToolDescriptor {
  name: string;
  title?: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations?: ToolAnnotations;
}

export interface CompiledTool {
  /** `<provider>_<operation>`, matching TOOL_NAME_PATTERN. */
  name: string;
  provider: string;
  /** Stable source key: the OpenAPI `METHOD /path`, or `inline:<name>`, or `plugin:<name>`. */
  source: string;
  title?: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations: ToolAnnotations;
  /** Id of the category this tool belongs to (exactly one). */
  category: string;
  /** Absent when a plugin handles the call. */
  request?: RequestPlan;
}

export interface Category {
  id: string;
  title: string;
  description?: string;
  /** Tool names, sorted. */
  tools: string[];
}

/** One finding of manifest validation or OpenAPI compilation, located in its source file. */
export interface Finding {
  file: string;
  line: number;
  col: number;
  /** Stable code, e.g. TG_MANIFEST_UNKNOWN_KEY. */
  code: string;
  /** Path inside the document, e.g. ['auth', 'token_url']; printed as `auth > token_url`. */
  path: string[];
  message: string;
  severity: 'error' | 'warning';
}

/** What the rest of the gateway needs to know about a provider's authentication. */
export interface ProviderAuthSummary {
  kind: AuthKind;
  /** Credential field names the user supplies (api_key: e.g. ['api_key']; webhook_url: ['webhook_url']). */
  credentialFields: string[];
}

export interface ProviderEntry {
  id: string;
  displayName: string;
  description: string;
  docsUrl?: string;
  logoUrl?: string;
  auth: ProviderAuthSummary;
  categories: Category[];
  tools: CompiledTool[];
  /** Documented provider limits, shown by inspect_provider. */
  limits?: string;
  /**
   * Groups of words users say for one another when they look for tools (manifest `synonyms`);
   * search_tools treats the words of a group as the same word (tools/search.ts).
   */
  synonyms?: string[][];
  /** sha256 over the manifest and the documents it references; the compile cache key. */
  contentHash: string;
  /** Id of the code plugin handling custom logic, when any. */
  plugin?: string;
  /** Path of the manifest file the entry was built from. */
  file: string;
  /** The manifest's `openapi.file` (relative to it), so a reload can hash the document unparsed. */
  openapiFile?: string;
  /** How to connect and call the provider, as the manifest says (see manifest-schema.ts). */
  spec: ProviderSpec;
  /**
   * An upstream MCP server's provider (`spec.mcp`): its tools are listed per connection, not
   * compiled (`tools` is empty), and filed by these rules of the manifest (categories.ts, categoryOf).
   */
  categoryRules?: readonly CategorySpec[];
  /** Warnings of validation and compilation (e.g. operations skipped), for validate and /readyz. */
  warnings: Finding[];
}

/**
 * The manifest sections the connect flow and the provider client read: auth (credential fields,
 * injection, OAuth endpoints, webhook pattern), connection fields, base URLs and static headers,
 * the credential check and the identity operation. Defaults are those documented in the schema.
 */
export type ProviderSpec = Pick<
  Manifest,
  'auth' | 'connection_fields' | 'api' | 'verify' | 'identity' | 'mcp'
>;

export interface CatalogSnapshot {
  /** Increases by one on every successful swap; part of the tools/list cache key. */
  readonly version: number;
  /**
   * What the snapshot serves, whatever the process: a hash over each serving provider's id and
   * content hash and the failed providers' ids. Processes of one deployment that serve the same
   * manifests and documents have the same fingerprint (their versions count their own reloads).
   */
  readonly fingerprint: string;
  readonly loadedAt: Date;
  /** Providers by id, in id order. */
  readonly providers: ReadonlyMap<string, ProviderEntry>;
  /** Every provider tool by name. */
  readonly tools: ReadonlyMap<string, CompiledTool>;
  /** Providers that failed to load (and are not serving any version), by id, with findings. */
  readonly failed: ReadonlyMap<string, Finding[]>;
  /** Providers serving their last good version because their manifest now fails, with findings. */
  readonly stale: ReadonlyMap<string, Finding[]>;
}

/** Provider tool names (DESIGN.md, Fixed interfaces): room for client prefixes within 64 chars. */
export const TOOL_NAME_PATTERN = /^[a-z0-9_]{1,48}$/;
