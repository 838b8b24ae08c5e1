/**
 * The check that a tool schema is usable as MCP sends it: JSON Schema 2020-12 that compiles, with
 * no `$ref` (several LLM APIs reject them).
 */
import { createRequire } from 'node:module';
import type { ErrorObject } from 'ajv';
import type { Ajv2020 } from 'ajv/dist/2020.js';
import { validateJsonSchema } from './json-schema-validator.js';
import type { JsonSchema } from './types.js';

/**
 * For a schema naming its own `$schema`, which ajv looks up (and refuses unless it knows it). ajv
 * is CommonJS, required when first needed: a build worker loads it (~30 ms) only for such a schema.
 */
let ajv: Ajv2020 | undefined;
function schemaAjv(): Ajv2020 {
  const ajvModule = createRequire(import.meta.url)('ajv/dist/2020.js') as { Ajv2020: typeof Ajv2020 };
  // strict: false because formats and annotations of real documents (int32, example) are fine here.
  return new ajvModule.Ajv2020({ strict: false, validateFormats: false });
}

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
  const errors = metaSchemaErrors(schema);
  if (errors) return `is not valid JSON Schema 2020-12: schema is invalid: ${errorsText(errors)}`;
  return found === undefined
    ? undefined
    : `is not valid JSON Schema 2020-12: pattern ${JSON.stringify(found.pattern)} is not a regular expression`;
}

/**
 * What ajv's `validateSchema` finds wrong with `schema`, or `undefined`. Without `$schema`, by the
 * meta-schema's validator compiled ahead of time (json-schema-validator.ts, generated with
 * schemaAjv's options): compiling it here cost every build ~30 ms. A schema naming its `$schema`
 * goes to ajv itself, which resolves that (and throws for a meta-schema it does not know).
 */
function metaSchemaErrors(schema: JsonSchema): ErrorObject[] | undefined {
  if (schema.$schema === undefined)
    return validateJsonSchema(schema) ? undefined : (validateJsonSchema.errors ?? []);
  ajv ??= schemaAjv();
  return ajv.validateSchema(schema) ? undefined : (ajv.errors ?? []);
}

/** ajv's `errorsText`, for errors of either validator. */
function errorsText(errors: readonly ErrorObject[]): string {
  return errors.map((error) => `data${error.instancePath} ${error.message ?? ''}`).join(', ');
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
