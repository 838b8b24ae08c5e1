/**
 * Turns OpenAPI 2.0/3.0/3.1 schemas into self-contained JSON Schema 2020-12, the dialect MCP tool
 * schemas use: every `$ref` inlined (several LLM APIs reject them), cycles cut, `allOf` merged where
 * that keeps the meaning, `nullable` turned into type arrays, OpenAPI-only keywords dropped.
 *
 * Results are shared between tools (a converted component is memoised), so nothing returned here
 * may be mutated; every step builds new objects.
 */
import type { JsonSchema, SchemaOut } from '../types.js';
import {
  isObject,
  resolvePointer,
  UnsupportedError,
  type JsonObject,
  type OpenApiDocument,
} from './document.js';
import { mergeSchemas } from './merge.js';

export type Direction = 'input' | 'output';

/** Keywords copied unchanged: JSON Schema 2020-12 validation and annotation keywords. */
const VERBATIM = new Set([
  'type',
  'enum',
  'const',
  'format',
  'multipleOf',
  'maximum',
  'minimum',
  'maxLength',
  'minLength',
  'maxItems',
  'minItems',
  'uniqueItems',
  'maxContains',
  'minContains',
  'maxProperties',
  'minProperties',
  'dependentRequired',
  'title',
  'description',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
  'contentMediaType',
  'contentEncoding',
]);
/** Keywords whose value is one schema. */
const SUBSCHEMA = new Set([
  'additionalProperties',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'propertyNames',
  'unevaluatedProperties',
  'unevaluatedItems',
]);
/** Keywords whose value is a map of schemas. */
const SCHEMA_MAP = new Set(['properties', 'patternProperties', 'dependentSchemas']);
/** Keywords whose value is a list of schemas. */
const SCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf', 'prefixItems']);
const DYNAMIC = new Set(['$dynamicRef', '$recursiveRef']);
/** What 2.0/3.0 honour next to a `$ref` (the rest is ignored there by the specification). */
const REF_SIBLINGS_LEGACY = new Set([
  'description',
  'title',
  'default',
  'deprecated',
  'readOnly',
  'writeOnly',
  'nullable',
  'x-nullable',
  'example',
]);

/** Beyond this many nested `$ref`s a schema is cut like a cycle; real documents stay far below. */
const MAX_REF_DEPTH = 32;

export class SchemaConverter {
  private readonly memo: Record<Direction, Map<string, SchemaOut>> = { input: new Map(), output: new Map() };
  private readonly stack: string[] = [];
  /** Lowest stack index a cycle was cut at while converting the current `$ref`. */
  private lowestCut = Infinity;

  constructor(private readonly doc: OpenApiDocument) {}

  /**
   * Converts one schema of the document. `input` drops readOnly properties (the server sets
   * them), `output` drops writeOnly ones. Throws UnsupportedError for what cannot be expressed.
   */
  convert(schema: unknown, direction: Direction): SchemaOut {
    this.stack.length = 0;
    this.lowestCut = Infinity;
    return this.schema(schema, direction);
  }

  private schema(schema: unknown, direction: Direction): SchemaOut {
    if (typeof schema === 'boolean') return schema;
    if (!isObject(schema)) throw new UnsupportedError('a schema is not an object');
    if (typeof schema.$ref !== 'string') return this.plain(schema, direction);
    const siblings = Object.keys(schema).filter(
      (k) => k !== '$ref' && (this.doc.version === '3.1' || REF_SIBLINGS_LEGACY.has(k)),
    );
    if (siblings.length === 0) return this.ref(schema.$ref, direction);
    // A $ref with siblings means both apply: the siblings first, so their description wins.
    const own: JsonObject = Object.fromEntries(siblings.map((k) => [k, schema[k]]));
    return this.plain(
      {
        ...own,
        allOf: [{ $ref: schema.$ref }, ...(Array.isArray(own.allOf) ? (own.allOf as unknown[]) : [])],
      },
      direction,
    );
  }

  private ref(ref: string, direction: Direction): SchemaOut {
    const name = ref.slice(ref.lastIndexOf('/') + 1);
    const onStack = this.stack.indexOf(ref);
    if (onStack >= 0 || this.stack.length >= MAX_REF_DEPTH) {
      this.lowestCut = Math.min(this.lowestCut, onStack >= 0 ? onStack : 0);
      const target = resolvePointer(this.doc, ref);
      const type = isObject(target) && typeof target.type === 'string' ? target.type : 'object';
      const why = onStack >= 0 ? `recursive: same shape as ${name} above` : `nested too deep: ${name}`;
      return { type, description: `(${why})` };
    }
    const memoised = this.memo[direction].get(ref);
    if (memoised !== undefined) return memoised;
    const target = resolvePointer(this.doc, ref);
    if (target === undefined) throw new UnsupportedError(`$ref "${ref}" points at nothing`);

    const depth = this.stack.length;
    const outerCut = this.lowestCut;
    this.stack.push(ref);
    this.lowestCut = Infinity;
    let result: SchemaOut;
    try {
      result = this.schema(target, direction);
    } finally {
      this.stack.pop();
    }
    const cut = this.lowestCut;
    this.lowestCut = Math.min(outerCut, cut < depth ? cut : Infinity);
    // Only an expansion that cut nothing is the same in every context; the others are redone.
    if (cut === Infinity) this.memo[direction].set(ref, result);
    return result;
  }

  private plain(schema: JsonObject, direction: Direction): SchemaOut {
    const out: JsonSchema = {};
    const dropped = new Set<string>();
    for (const [key, value] of Object.entries(schema)) {
      if (VERBATIM.has(key)) {
        if (key === 'type' && value === 'file') throw new UnsupportedError('type "file" (file upload)');
        // Some documents put prose in `format`; only format names (date-time, int64, ...) are kept.
        if (key === 'format' && !(typeof value === 'string' && /^[A-Za-z0-9-]+$/.test(value))) continue;
        out[key] = value;
      } else if (SUBSCHEMA.has(key)) {
        out[key] = this.schema(value, direction);
      } else if (SCHEMA_MAP.has(key) && isObject(value)) {
        const map: JsonSchema = {};
        for (const [name, sub] of Object.entries(value)) {
          if (key === 'properties' && this.hidden(sub, direction)) dropped.add(name);
          else map[name] = this.schema(sub, direction);
        }
        out[key] = map;
      } else if (SCHEMA_LIST.has(key) && Array.isArray(value)) {
        out[key] = value.map((sub) => this.schema(sub, direction));
      } else if (key === 'items') {
        if (Array.isArray(value)) out.prefixItems = value.map((sub) => this.schema(sub, direction));
        else out.items = this.schema(value, direction);
      } else if (key === 'additionalItems' && Array.isArray(schema.items)) {
        out.items = this.schema(value, direction);
      } else if (key === 'pattern' && typeof value === 'string' && compiles(value)) {
        // Patterns that JavaScript's unicode mode rejects would make the whole schema fail to compile.
        out.pattern = value;
      } else if ((key === 'exclusiveMinimum' || key === 'exclusiveMaximum') && typeof value === 'number') {
        out[key] = value;
      } else if (key === 'required' && Array.isArray(value)) {
        out.required = value.filter((v): v is string => typeof v === 'string');
      } else if (DYNAMIC.has(key)) {
        throw new UnsupportedError(`${key} in a schema`);
      } else if (direction === 'input' && (key === 'example' || key === 'examples')) {
        // Small scalar examples help an agent fill arguments; responses do not need them.
        const values = key === 'example' ? [value] : value;
        if (Array.isArray(values) && values.length > 0 && values.every(isScalar)) out.examples = values;
      }
    }
    // 2.0 and 3.0 write exclusive bounds as booleans next to minimum/maximum.
    for (const [flag, bound] of [
      ['exclusiveMinimum', 'minimum'],
      ['exclusiveMaximum', 'maximum'],
    ] as const) {
      if (schema[flag] === true && typeof schema[bound] === 'number') {
        out[flag] = schema[bound];
        delete out[bound];
      }
    }
    if (Array.isArray(out.required)) {
      const required = (out.required as string[]).filter((name) => !dropped.has(name));
      if (required.length > 0) out.required = [...new Set(required)];
      else delete out.required;
    }
    let result: JsonSchema = out;
    if (Array.isArray(out.allOf)) {
      const { allOf, ...own } = out;
      result = mergeSchemas([own, ...(allOf as SchemaOut[])]) ?? out;
    }
    return schema.nullable === true || schema['x-nullable'] === true ? nullable(result) : result;
  }

  /** readOnly properties are not sent, writeOnly ones not returned. */
  private hidden(schema: unknown, direction: Direction): boolean {
    let target = schema;
    if (isObject(target) && typeof target.$ref === 'string') target = resolvePointer(this.doc, target.$ref);
    if (!isObject(target)) return false;
    return direction === 'input' ? target.readOnly === true : target.writeOnly === true;
  }
}

/** A schema that also admits `null` (3.0 `nullable: true`, expressed the 2020-12 way). */
export function nullable(schema: JsonSchema): JsonSchema {
  const withNullEnum = (s: JsonSchema): JsonSchema =>
    Array.isArray(s.enum) && !s.enum.includes(null) ? { ...s, enum: [...(s.enum as unknown[]), null] } : s;
  if (typeof schema.type === 'string') return withNullEnum({ ...schema, type: [schema.type, 'null'] });
  if (Array.isArray(schema.type)) {
    return schema.type.includes('null')
      ? schema
      : withNullEnum({ ...schema, type: [...(schema.type as string[]), 'null'] });
  }
  if (Object.keys(schema).every((k) => k === 'description' || k === 'title')) return schema;
  return { anyOf: [schema, { type: 'null' }] };
}

function compiles(pattern: string): boolean {
  try {
    new RegExp(pattern, 'u');
    return true;
  } catch {
    return false;
  }
}

function isScalar(value: unknown): boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}
