/**
 * What tools/list serves of a tool: the descriptor with the words a model does not need taken out,
 * and nothing that decides what validates (issue 15, "Full mode trimmed without losing meaning").
 * ToolService applies it while building the lists it caches as bytes, and each tool is trimmed once
 * per catalog version, so it costs nothing per request.
 *
 * Only annotations change, never a validation keyword, so a trimmed inputSchema accepts exactly what
 * the compiled one does (test/unit/tools/trim.test.ts checks it over recorded arguments); tools/call
 * validates against the compiled schema anyway.
 * - Description: the compiler's `Required: a, b.` paragraph goes when it lists the schema's own
 *   `required` (models read that keyword), and so does a leading paragraph that only repeats the
 *   tool's title when more follows (the title is still served in `title`). Sentences after the
 *   first that begin "Returns " go too: what comes back is for choosing among tools when
 *   searching (search_tools indexes the compiled description, sentences included) and for clients
 *   (outputSchema); a model calling the tool sees the result itself. Paragraphs are joined into
 *   one line.
 * - Argument descriptions: top-level ones are kept whole up to {@link TOP_LEVEL_MAX} characters
 *   (the bundled ones all fit: their examples are what an agent needs); nested ones are cut to their
 *   first sentence, at most {@link NESTED_MAX} characters.
 * - Dropped: `$comment` and `x-` extensions (for maintainers and code generators), a `title`
 *   that only repeats its property's name, and documentation links in parentheses in any
 *   description (a model cannot follow them while calling). Kept: `default` (tells a model what leaving an argument
 *   out means), `examples` (the compiler keeps only short scalar ones, and they name values a
 *   description does not: google_drive_create_file's spreadsheet MIME type), `format`,
 *   `deprecated`, `readOnly` properties (removing one would reject it where additionalProperties
 *   is false; the compiler already leaves them out of inputs) and every keyword not named here.
 * - Not deduplicated into `$defs` + `$ref`: MCP 2026-07-28 allows local refs (SEP-2106) and ajv
 *   resolves them, but Claude Code, Cursor, Kiro, opencode, Gemini CLI and Copilot CLI have each
 *   failed a whole tools/list on `#/$defs/...` (anthropics/claude-code#76881,
 *   github/copilot-cli#1876, google-gemini/gemini-cli#13142), which is why the compiler inlines
 *   every `$ref` (catalog/openapi/schema.ts); on the bundled catalog it would save 2.6 tokens per
 *   tool (484 in all, in six tools).
 * - outputSchema is served as compiled. Model APIs never receive it (a tool there is a name, a
 *   description and an input schema), so it costs a model nothing, and it is how a client learns and
 *   checks the shape of `structuredContent`. MCP (2025-06-18 on) would allow leaving it out, as
 *   structuredContent needs no declared schema, but a client that wants structured output would
 *   lose the shape it relies on; and the compiled ones hold next to no prose to trim (8
 *   descriptions in 152 schemas).
 */
import type { JsonSchema, ToolDescriptor } from '../catalog/types.js';
import { isRecord } from '../upstream/response.js';

/** Longest top-level argument description kept; longer ones end at a sentence within it. */
export const TOP_LEVEL_MAX = 300;
/** Longest nested argument description kept, after cutting it to its first sentence. */
export const NESTED_MAX = 120;

// Catalog snapshots and system tools are immutable, so a tool object is trimmed once: a reload
// brings new objects, and the old results go with the old snapshot.
const trimmed = new WeakMap<ToolDescriptor, ToolDescriptor>();

/**
 * The descriptor as tools/list serves it: `tool` with its description and inputSchema trimmed
 * (a new object, remembered per tool object; the tool's own are never modified).
 */
export function trimTool(tool: ToolDescriptor): ToolDescriptor {
  let out = trimmed.get(tool);
  if (out === undefined) {
    out = {
      ...tool,
      description: trimDescription(tool),
      inputSchema: trimSchema(tool.inputSchema, 0, tool.name) as JsonSchema,
    };
    trimmed.set(tool, out);
  }
  return out;
}

function trimDescription(tool: ToolDescriptor): string {
  const paragraphs = tool.description.split('\n\n');
  const required = Array.isArray(tool.inputSchema.required) ? (tool.inputSchema.required as unknown[]) : [];
  const listed = /^Required: (.+)\.$/.exec(paragraphs.at(-1) ?? '')?.[1]?.split(', ');
  if (listed && sameSet(listed, required)) paragraphs.pop();
  if (paragraphs.length > 1 && paragraphs[0]?.replace(/\.$/, '') === tool.title) paragraphs.shift();
  const [first = '', ...rest] = sentences(withoutLinks(paragraphs.join(' ')));
  return [first, ...rest.filter((sentence) => !sentence.startsWith('Returns '))].join(' ');
}

// A documentation link in parentheses, as OpenAPI descriptions cite them: a model cannot follow it
// while choosing or calling a tool. A link inside an example (`[text](https://...)`) is part of
// the example, and stays.
const LINK = /\s+\((?:see )?https?:\/\/[^\s)]+\)/g;

function withoutLinks(text: string): string {
  return text.replace(LINK, '');
}

// Keywords whose value is a map of named sub-schemas one level deeper (the names are data: a
// property called `description` or `x-id` is kept).
const DEEPER_MAPS = new Set(['properties', 'patternProperties']);
const SAME_LEVEL_MAPS = new Set(['$defs', 'dependentSchemas']);
// Keywords whose value is a schema (or a list of schemas) describing the same argument.
const SAME_LEVEL = new Set([
  'items',
  'prefixItems',
  'contains',
  'unevaluatedItems',
  'anyOf',
  'oneOf',
  'allOf',
  'not',
  'if',
  'then',
  'else',
  'propertyNames',
]);
// Keywords whose value is the schema of further, unnamed properties.
const DEEPER = new Set(['additionalProperties', 'unevaluatedProperties']);

// `depth` counts property levels: 0 the arguments object, 1 an argument, 2 and more a field inside
// one. Values of `enum`, `const`, `default` and `examples` are data and are copied untouched.
function trimSchema(schema: unknown, depth: number, name: string): unknown {
  if (Array.isArray(schema)) return schema.map((item) => trimSchema(item, depth, name));
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$comment' || key.startsWith('x-')) continue;
    if (key === 'title' && typeof value === 'string' && words(value) === words(name)) continue;
    if (key === 'description' && typeof value === 'string') out[key] = shorten(withoutLinks(value), depth);
    else if ((DEEPER_MAPS.has(key) || SAME_LEVEL_MAPS.has(key)) && isRecord(value)) {
      const level = DEEPER_MAPS.has(key) ? depth + 1 : depth;
      out[key] = Object.fromEntries(
        Object.entries(value).map(([sub, subschema]) => [sub, trimSchema(subschema, level, sub)]),
      );
    } else if (SAME_LEVEL.has(key)) out[key] = trimSchema(value, depth, name);
    else if (DEEPER.has(key)) out[key] = trimSchema(value, depth + 1, name);
    else out[key] = value;
  }
  return out;
}

function shorten(description: string, depth: number): string {
  return depth <= 1
    ? within(description, TOP_LEVEL_MAX)
    : within(sentences(description)[0] ?? description, NESTED_MAX);
}

// A sentence ends at `.`, `!` or `?` before a space and a capital letter, unless the dot ends an
// abbreviation (e.g., i.e.) or an ellipsis: a missed end only keeps more text, a wrong one cuts
// meaning ("MIME type, e.g. Text..." stays whole).
const SENTENCE_END = /(?<!\b(?:e\.g|i\.e|etc|vs|cf)|\.\.)[.!?](?=\s+[A-Z])/g;

function sentences(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  for (const match of text.matchAll(SENTENCE_END)) {
    out.push(text.slice(start, match.index + 1).trim());
    start = match.index + 1;
  }
  out.push(text.slice(start).trim());
  return out.filter((sentence) => sentence !== '');
}

// Whole sentences up to `max` characters; a first sentence longer than that ends at a word, with `…`.
function within(text: string, max: number): string {
  if (text.length <= max) return text;
  let kept = '';
  for (const sentence of sentences(text)) {
    const next = kept === '' ? sentence : `${kept} ${sentence}`;
    if (next.length > max) break;
    kept = next;
  }
  if (kept !== '') return kept;
  const cut = text.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${(space > 0 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

// `calendarId`, `calendar_id` and "Calendar ID" are the same words.
function words(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]/g, '');
}

function sameSet(listed: readonly string[], required: readonly unknown[]): boolean {
  return listed.length === required.length && listed.every((name) => required.includes(name));
}
