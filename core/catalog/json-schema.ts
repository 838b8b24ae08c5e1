/**
 * The check that a tool schema is usable as MCP sends it: JSON Schema 2020-12 that compiles, with
 * no `$ref` (several LLM APIs reject them).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { JsonSchema } from './types.js';

let ajv: Ajv2020 | undefined;

/** Keywords whose values map names to schemas. */
const NAMED = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs']);
/** Keywords whose values are data, not schemas: a `pattern` inside them is no regular expression. */
const DATA = new Set(['enum', 'const', 'default', 'examples', 'example']);

/**
 * Why `schema` is not a usable tool schema, or `undefined` when it is. What `ajv.compile` would
 * refuse, without generating code (1.6 s for GitHub's 1,221 tools, against 0.07 s): the
 * meta-schema, and the regular expressions that only compiling them finds wrong.
 */
export function toolSchemaProblem(schema: JsonSchema): string | undefined {
  if (JSON.stringify(schema).includes('"$ref"')) return 'uses $ref; write the schema out in full';
  // strict: false because formats and annotations of real documents (int32, example) are fine here.
  ajv ??= new Ajv2020({ strict: false, validateFormats: false });
  if (!ajv.validateSchema(schema)) {
    return `is not valid JSON Schema 2020-12: schema is invalid: ${ajv.errorsText(ajv.errors)}`;
  }
  const pattern = badPattern(schema);
  return pattern === undefined
    ? undefined
    : `is not valid JSON Schema 2020-12: pattern ${JSON.stringify(pattern)} is not a regular expression`;
}

/** The first `pattern` or `patternProperties` key that JavaScript's unicode mode refuses (as ajv does). */
function badPattern(node: unknown, names = false): string | undefined {
  if (Array.isArray(node)) {
    for (const item of node) {
      const bad = badPattern(item);
      if (bad !== undefined) return bad;
    }
    return undefined;
  }
  if (typeof node !== 'object' || node === null) return undefined;
  for (const [key, value] of Object.entries(node) as [string, unknown][]) {
    // Under `properties` and the like, keys are names: a property called `enum` is a schema.
    if (names) {
      const inner = badPattern(value);
      if (inner !== undefined) return inner;
      continue;
    }
    if (DATA.has(key)) continue;
    const patterns =
      key === 'pattern' && typeof value === 'string'
        ? [value]
        : key === 'patternProperties' && typeof value === 'object' && value !== null
          ? Object.keys(value)
          : [];
    const bad = patterns.find((p) => !compiles(p));
    if (bad !== undefined) return bad;
    const inner = badPattern(value, NAMED.has(key));
    if (inner !== undefined) return inner;
  }
  return undefined;
}

/** Whether ajv can compile `pattern`: JavaScript's unicode mode accepts it. */
export function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}
