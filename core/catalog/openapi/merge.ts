/**
 * `allOf` merging. Agents and some LLM APIs handle one flat object schema far better than an
 * intersection, so compatible parts are merged into one schema; parts that disagree on anything
 * but properties, required and annotations are left as `allOf`, which is still valid JSON Schema.
 */
import type { JsonSchema, SchemaOut } from '../types.js';

/** Keywords where the first part that sets them wins (annotations). */
const FIRST_WINS = new Set(['title', 'description', 'default', 'examples', 'deprecated']);

/** One schema equivalent (or, for additionalProperties, more permissive) to all parts; `undefined` when they disagree. */
export function mergeSchemas(parts: readonly SchemaOut[]): JsonSchema | undefined {
  let result: JsonSchema = {};
  for (const part of parts) {
    if (part === true) continue;
    if (part === false) return undefined;
    for (const [key, value] of Object.entries(part)) {
      if (!(key in result)) {
        result = { ...result, [key]: value };
      } else if (FIRST_WINS.has(key)) {
        continue;
      } else if (key === 'properties') {
        const properties = mergeProperties(result.properties as JsonSchema, value as JsonSchema);
        result = { ...result, properties };
      } else if (key === 'required') {
        result = {
          ...result,
          required: [...new Set([...(result.required as string[]), ...(value as string[])])],
        };
      } else if (key === 'type') {
        const type = intersectTypes(result.type, value);
        if (type === undefined) return undefined;
        result = { ...result, type };
      } else if (!sameJson(result[key], value)) {
        return undefined;
      }
    }
  }
  return result;
}

function mergeProperties(a: JsonSchema, b: JsonSchema): JsonSchema {
  const merged: JsonSchema = { ...a };
  for (const [name, schema] of Object.entries(b)) {
    const existing = merged[name] as SchemaOut | undefined;
    if (existing === undefined || sameJson(existing, schema)) merged[name] = schema;
    else merged[name] = mergeSchemas([existing, schema as SchemaOut]) ?? { allOf: [existing, schema] };
  }
  return merged;
}

function intersectTypes(a: unknown, b: unknown): string | string[] | undefined {
  const left = new Set(Array.isArray(a) ? (a as string[]) : [String(a)]);
  const right = Array.isArray(b) ? (b as string[]) : [String(b)];
  const both = right.filter((t) => left.has(t) || (t === 'integer' && left.has('number')));
  if (left.has('integer') && right.includes('number') && !both.includes('integer')) both.push('integer');
  if (both.length === 0) return undefined;
  return both.length === 1 ? both[0] : both;
}

function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}
