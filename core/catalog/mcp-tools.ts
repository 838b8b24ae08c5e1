/**
 * An upstream MCP server's tool list as the gateway serves it (issue 17): each tool named
 * `<provider id with - as _>_<upstream name>` within ^[a-z0-9_]{1,48}$, filed in the manifest's
 * categories, its description, annotations and outputSchema passed through, its inputSchema with
 * local `$ref`s written out (recursion and depth cut) and kept within a size bound. Pure: the list
 * comes from core/upstream/mcp-client.ts, per connection, through core/tools/mcp-tools.ts.
 *
 * Names, in order:
 * 1. lower case, every character outside [a-z0-9_] becomes `_` (`get-Sum` -> `get_sum`);
 * 2. longer than 48 characters with the prefix, or taken by an earlier tool (upstream names
 *    sorted), cut to 41 and suffixed with `_` and 6 hex characters of the SHA-256 of the upstream
 *    name: stable across lists and users, distinct where the upstream names are;
 * 3. a name still taken gets `_2`, `_3`, ...
 */
import { createHash } from 'node:crypto';
import { categoryOf } from './categories.js';
import { toolSchemaProblem } from './json-schema.js';
import { toolPrefix, uniqueName } from './openapi/names.js';
import type { Category, CompiledTool, JsonSchema, ProviderEntry, ToolAnnotations } from './types.js';

/** A tool as an upstream MCP server lists it (the fields the gateway reads). */
export interface UpstreamTool {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: { [key: string]: unknown };
  outputSchema?: { [key: string]: unknown } | undefined;
  annotations?: { [key: string]: unknown } | undefined;
}

/** The served list of one connection's upstream tools. */
export interface McpCatalog {
  /** Sorted by name. */
  tools: CompiledTool[];
  /** The provider's categories with these tools. */
  categories: Category[];
  /** Tools left out, each with why (a schema that cannot be served). */
  skipped: string[];
}

const MAX_TOOL_NAME = 48;
/** Largest inputSchema served, as for compiled tools (64 KB of JSON). */
export const MAX_SCHEMA_BYTES = 64 * 1024;
/** Deepest chain of `$ref`s written out; deeper ones are cut like recursive ones. */
const MAX_REF_DEPTH = 16;
/** Schema nodes written out at most, so that refs used many times cannot blow a schema up. */
const MAX_SCHEMA_NODES = 20_000;
const ANNOTATION_KEYS = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const;

/** Names, files and checks the tools an upstream listed for one connection. */
export function mcpCatalog(provider: ProviderEntry, listed: readonly UpstreamTool[]): McpCatalog {
  const prefix = toolPrefix(provider.id);
  const rules = provider.categoryRules ?? [];
  const taken = new Set<string>();
  const skipped: string[] = [];
  const tools: CompiledTool[] = [];
  const sorted = [...listed].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const upstream of sorted) {
    const inputSchema = servedSchema(upstream.inputSchema);
    if (typeof inputSchema === 'string') {
      skipped.push(`${upstream.name}: its inputSchema ${inputSchema}`);
      continue;
    }
    const output = upstream.outputSchema === undefined ? undefined : servedSchema(upstream.outputSchema);
    const name = toolName(prefix, upstream.name, taken);
    taken.add(name);
    const annotations = annotationsOf(upstream);
    tools.push({
      name,
      provider: provider.id,
      // The way back to the upstream's own name, for calls.
      source: `mcp:${upstream.name}`,
      ...(upstream.title !== undefined ? { title: upstream.title } : {}),
      description: upstream.description?.trim() || upstream.title || upstream.name,
      inputSchema,
      ...(output !== undefined && typeof output !== 'string' ? { outputSchema: output } : {}),
      annotations,
      category: categoryOf(rules, {
        name,
        readOnly: annotations.readOnlyHint ?? false,
      }),
    });
  }
  tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const categories = provider.categories.map((category) => ({
    ...category,
    tools: tools.filter((t) => t.category === category.id).map((t) => t.name),
  }));
  return { tools, categories, skipped };
}

function toolName(prefix: string, upstream: string, taken: ReadonlySet<string>): string {
  const plain = prefix + upstream.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  if (plain.length <= MAX_TOOL_NAME && !taken.has(plain)) return plain;
  const hash = createHash('sha256').update(upstream).digest('hex').slice(0, 6);
  return uniqueName(`${plain.slice(0, MAX_TOOL_NAME - 7).replace(/_+$/, '')}_${hash}`, taken);
}

function annotationsOf(tool: UpstreamTool): ToolAnnotations {
  const out: ToolAnnotations = {};
  for (const key of ANNOTATION_KEYS) {
    const value = tool.annotations?.[key];
    if (typeof value === 'boolean') out[key] = value;
  }
  const title = tool.annotations?.title;
  if (typeof title === 'string') out.title = title;
  return out;
}

/**
 * The schema as served: an object schema, local `$ref`s written out (cut at recursion or depth),
 * within MAX_SCHEMA_BYTES, valid JSON Schema 2020-12; else why not.
 */
function servedSchema(schema: { [key: string]: unknown }): JsonSchema | string {
  if (schema.type !== 'object') return 'is not an object schema';
  const budget = { nodes: MAX_SCHEMA_NODES };
  // Served as JSON Schema 2020-12 (MCP's default dialect): an upstream's `$schema` (zod writes
  // draft-07's) goes; the keywords of the drafts tools use read alike in 2020-12.
  const body = Object.fromEntries(Object.entries(schema).filter(([key]) => key !== '$schema'));
  const out = inlineRefs(body, schema, [], 0, budget) as JsonSchema;
  if (budget.nodes < 0) return `expands to more than ${MAX_SCHEMA_NODES} schema nodes`;
  const size = Buffer.byteLength(JSON.stringify(out));
  if (size > MAX_SCHEMA_BYTES)
    return `is ${Math.round(size / 1024)} KB, over the ${MAX_SCHEMA_BYTES / 1024} KB the gateway serves`;
  try {
    return toolSchemaProblem(out) ?? out;
  } catch (error) {
    return `cannot be compiled (${(error as Error).message})`;
  }
}

/** `node` with every `$ref` into `root` replaced by its target; a cut ref is an open schema. */
function inlineRefs(
  node: unknown,
  root: unknown,
  chain: readonly string[],
  depth: number,
  budget: { nodes: number },
): unknown {
  if (typeof node !== 'object' || node === null || --budget.nodes < 0) return node;
  if (Array.isArray(node)) return node.map((item) => inlineRefs(item, root, chain, depth, budget));
  const record = node as Record<string, unknown>;
  const ref = record.$ref;
  if (typeof ref === 'string') {
    const rest = Object.fromEntries(Object.entries(record).filter(([key]) => key !== '$ref'));
    const target = ref.startsWith('#') ? resolvePointer(root, ref.slice(1)) : undefined;
    if (target === undefined || chain.includes(ref) || depth >= MAX_REF_DEPTH) {
      const why = target === undefined ? 'not resolvable' : 'recursive or nested too deep';
      const said = typeof rest.description === 'string' ? rest.description : ref;
      return { ...rest, description: `${said} (schema ${why}: any value)` };
    }
    const resolved = inlineRefs(target, root, [...chain, ref], depth + 1, budget);
    return typeof resolved === 'object' && resolved !== null
      ? { ...resolved, ...(inlineRefs(rest, root, chain, depth, budget) as object) }
      : resolved;
  }
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (key === '$defs' || key === 'definitions') continue;
    out[key] = inlineRefs(value, root, chain, depth, budget);
  }
  return out;
}

function resolvePointer(root: unknown, pointer: string): unknown {
  let current = root;
  for (const raw of pointer.split('/').slice(1)) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}
