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
  const found = walkProblem(schema, false);
  if (found === '$ref') return 'uses $ref; write the schema out in full';
  // strict: false because formats and annotations of real documents (int32, example) are fine here.
  ajv ??= new Ajv2020({ strict: false, validateFormats: false });
  if (!ajv.validateSchema(schema)) {
    return `is not valid JSON Schema 2020-12: schema is invalid: ${ajv.errorsText(ajv.errors)}`;
  }
  return found === undefined
    ? undefined
    : `is not valid JSON Schema 2020-12: pattern ${JSON.stringify(found.pattern)} is not a regular expression`;
}

type WalkProblem = '$ref' | { pattern: string } | undefined;

// Compiled tools share converted sub-schemas (schema.ts memoises them): each is walked once.
const walked = [new WeakMap<object, WalkProblem>(), new WeakMap<object, WalkProblem>()];

/**
 * A `$ref`, or the first `pattern` or `patternProperties` key that JavaScript's unicode mode
 * refuses (as ajv does), in `node`; `names`: its keys are property names, not keywords.
 */
function walkProblem(node: unknown, names: boolean): WalkProblem {
  if (typeof node !== 'object' || node === null) return undefined;
  const memo = walked[names ? 1 : 0]!;
  if (memo.has(node)) return memo.get(node);
  let found: WalkProblem;
  if (Array.isArray(node)) {
    for (const item of node as unknown[]) if ((found = walkProblem(item, false)) !== undefined) break;
  } else {
    for (const [key, value] of Object.entries(node) as [string, unknown][]) {
      // Under `properties` and the like, keys are names: a property called `enum` is a schema.
      if (names) found = walkProblem(value, false);
      else if (key === '$ref') found = '$ref';
      else if (DATA.has(key)) continue;
      else if (key === 'pattern' && typeof value === 'string' && !compiles(value)) found = { pattern: value };
      else {
        const bad =
          key === 'patternProperties' && typeof value === 'object' && value !== null
            ? Object.keys(value).find((p) => !compiles(p))
            : undefined;
        found = bad !== undefined ? { pattern: bad } : walkProblem(value, NAMED.has(key));
      }
      if (found !== undefined) break;
    }
  }
  memo.set(node, found);
  return found;
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
