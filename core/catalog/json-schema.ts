/**
 * The check that a tool schema is usable as MCP sends it: JSON Schema 2020-12 that compiles, with
 * no `$ref` (several LLM APIs reject them).
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { JsonSchema } from './types.js';

let ajv: Ajv2020 | undefined;

/** Why `schema` is not a usable tool schema, or `undefined` when it is. */
export function toolSchemaProblem(schema: JsonSchema): string | undefined {
  if (JSON.stringify(schema).includes('"$ref"')) return 'uses $ref; write the schema out in full';
  // strict: false because formats and annotations of real documents (int32, example) are fine here.
  ajv ??= new Ajv2020({ strict: false, validateFormats: false });
  try {
    ajv.compile(schema);
    return undefined;
  } catch (error) {
    return `is not valid JSON Schema 2020-12: ${(error as Error).message}`;
  } finally {
    ajv.removeSchema();
  }
}
