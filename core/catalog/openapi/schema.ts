/**
 * Turns OpenAPI 2.0/3.0/3.1 schemas into self-contained JSON Schema 2020-12, the dialect MCP tool
 * schemas use: every `$ref` inlined (several LLM APIs reject them), `allOf` merged where that keeps
 * the meaning, `nullable` turned into type arrays, OpenAPI-only keywords dropped. Recursion is cut
 * by a rule that does not depend on where a schema is used (issue 16): inside the schemas that
 * reference each other, a reference back into them is a described open object, as is a `$ref`
 * deeper than the depth allowed; so each (`$ref`, depth) converts once and a document of any shape
 * converts in time linear in its size.
 *
 * Results are shared between tools (a converted component is memoised), so nothing returned here
 * may be mutated; every step builds new objects.
 */
import { compiles } from '../json-schema.js';
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

/** How deep `$ref`s are inlined at most; real documents stay far below (GitHub's deepest is 9). */
export const REF_DEPTH = 32;

/** Why a `$ref` was not inlined: its schema recurs, or it lies deeper than the depth allowed. */
export type CutReason = 'recursive' | 'nested too deep';

/** One `$ref` left as a described open object, by the name of the schema it points at. */
export interface Cut {
  name: string;
  why: CutReason;
}

/** A converted `$ref` target, valid wherever at least `height` more levels of `$ref` may be inlined. */
interface Expansion {
  result: SchemaOut;
  /** Longest chain of `$ref`s inlined in it, itself included. */
  height: number;
  /** The depth it was converted with, when that limit cut something: then it is valid there only. */
  cutAt?: number;
  cuts: readonly Cut[];
}

/** What the conversion of one `$ref` target gathers while it runs. */
interface Frame {
  component: number;
  remaining: number;
  height: number;
  /** Whether the depth limit cut a `$ref` inside. */
  deep: boolean;
  cuts: Map<string, Cut>;
}

export class SchemaConverter {
  private readonly memo: Record<Direction, Map<string, Expansion[]>> = {
    input: new Map(),
    output: new Map(),
  };
  private readonly components = new Map<string, number>();
  private readonly cyclic = new Set<number>();
  private frame: Frame = { component: -1, remaining: REF_DEPTH, height: 0, deep: false, cuts: new Map() };
  private taken = new Map<string, Cut>();

  constructor(private readonly doc: OpenApiDocument) {}

  /**
   * Converts one schema of the document. `input` drops readOnly properties (the server sets
   * them), `output` drops writeOnly ones. At most `depth` nested `$ref`s are inlined; deeper ones,
   * and a `$ref` back into the group of schemas that reference each other (a strongly connected
   * component of the reference graph) it is being inlined from, become a described open object.
   * Each (`$ref`, depth) is converted once, so the work is linear in the document's size.
   * Throws UnsupportedError for what cannot be expressed.
   */
  convert(schema: unknown, direction: Direction, depth = REF_DEPTH): SchemaOut {
    this.frame = { component: -1, remaining: depth, height: 0, deep: false, cuts: new Map() };
    const result = this.schema(schema, direction);
    for (const [key, cut] of this.frame.cuts) this.taken.set(key, cut);
    return result;
  }

  /** The `$ref`s cut by the conversions since the last call, by schema name. */
  takeCuts(): Cut[] {
    const cuts = [...this.taken.values()];
    this.taken = new Map();
    return cuts;
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
    const outer = this.frame;
    const component = this.componentOf(ref);
    if (component === outer.component && this.cyclic.has(component)) return this.cut(ref, 'recursive');
    if (outer.remaining === 0) return this.cut(ref, 'nested too deep');
    const expansions = this.memo[direction].get(ref) ?? [];
    let expansion = expansions.find((e) =>
      e.cutAt !== undefined ? e.cutAt === outer.remaining : e.height <= outer.remaining,
    );
    if (expansion === undefined) {
      const target = resolvePointer(this.doc, ref);
      if (target === undefined) throw new UnsupportedError(`$ref "${ref}" points at nothing`);
      const inner: Frame = {
        component,
        remaining: outer.remaining - 1,
        height: 0,
        deep: false,
        cuts: new Map(),
      };
      this.frame = inner;
      try {
        const result = this.schema(target, direction);
        expansion = {
          result,
          height: inner.height + 1,
          ...(inner.deep ? { cutAt: outer.remaining } : {}),
          cuts: [...inner.cuts.values()],
        };
      } finally {
        this.frame = outer;
      }
      expansions.push(expansion);
      this.memo[direction].set(ref, expansions);
    }
    outer.height = Math.max(outer.height, expansion.height);
    if (expansion.cutAt !== undefined) outer.deep = true;
    for (const cut of expansion.cuts) outer.cuts.set(`${cut.name} ${cut.why}`, cut);
    return expansion.result;
  }

  /** The open object standing for a `$ref` that is not inlined, described so an agent knows why. */
  private cut(ref: string, why: CutReason): JsonSchema {
    const name = ref.slice(ref.lastIndexOf('/') + 1);
    this.frame.cuts.set(`${name} ${why}`, { name, why });
    if (why === 'nested too deep') this.frame.deep = true;
    const target = resolvePointer(this.doc, ref);
    const type = isObject(target) && typeof target.type === 'string' ? target.type : 'object';
    return { type, description: `${name} (${why}; see the API docs)` };
  }

  /**
   * The strongly connected component of the `$ref` graph that `ref` belongs to (Tarjan's
   * algorithm, run from `ref` over what has no component yet). A component is cyclic when its
   * schemas reach themselves through their `$ref`s.
   */
  private componentOf(ref: string): number {
    const known = this.components.get(ref);
    if (known !== undefined) return known;
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const visit = (node: string): void => {
      index.set(node, index.size);
      low.set(node, index.get(node)!);
      stack.push(node);
      onStack.add(node);
      const edges = localRefs(this.doc, node);
      for (const next of edges) {
        if (this.components.has(next)) continue;
        if (!index.has(next)) {
          visit(next);
          low.set(node, Math.min(low.get(node)!, low.get(next)!));
        } else if (onStack.has(next)) {
          low.set(node, Math.min(low.get(node)!, index.get(next)!));
        }
      }
      if (low.get(node) !== index.get(node)) return;
      const id = this.components.size;
      const members = stack.splice(stack.indexOf(node));
      for (const member of members) {
        this.components.set(member, id);
        onStack.delete(member);
      }
      if (members.length > 1 || edges.has(node)) this.cyclic.add(id);
    };
    visit(ref);
    return this.components.get(ref)!;
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

function isScalar(value: unknown): boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/** The local `$ref`s written anywhere inside what `ref` points at: its edges in the reference graph. */
function localRefs(doc: OpenApiDocument, ref: string): Set<string> {
  const found = new Set<string>();
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) {
      for (const item of node) walk(item);
    } else if (isObject(node)) {
      for (const [key, value] of Object.entries(node)) {
        if (key === '$ref' && typeof value === 'string') {
          if (value.startsWith('#/')) found.add(value);
        } else {
          walk(value);
        }
      }
    }
  };
  walk(resolvePointer(doc, ref));
  return found;
}

/** How big a schema is once serialised: its JSON in bytes, and its objects and arrays. */
export interface SchemaSize {
  bytes: number;
  nodes: number;
}

// Converted schemas share subtrees (a memoised `$ref` appears wherever it is used), so sizes are
// kept per object: measuring every tool of a document costs what its distinct subtrees do.
const sizes = new WeakMap<object, SchemaSize>();

/**
 * The serialised size of `value`, without serialising it (a shared subtree is measured once). Every
 * compiled tool is measured, so this walks without building entry arrays, and counts the bytes of
 * a string JSON writes as it is without writing it.
 */
export function schemaSize(value: unknown): SchemaSize {
  if (typeof value !== 'object' || value === null) return { bytes: jsonBytes(value), nodes: 0 };
  const known = sizes.get(value);
  if (known !== undefined) return known;
  const size = { bytes: 2, nodes: 1 };
  let members = 0;
  const add = (item: unknown): void => {
    members++;
    if (typeof item !== 'object' || item === null) {
      size.bytes += jsonBytes(item);
      return;
    }
    const inner = schemaSize(item);
    size.bytes += inner.bytes;
    size.nodes += inner.nodes;
  };
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) add(item);
  } else {
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined) continue;
      size.bytes += jsonBytes(key) + 1;
      add(item);
    }
  }
  size.bytes += Math.max(0, members - 1);
  sizes.set(value, size);
  return size;
}

/** Characters JSON writes as they are: one byte each, no escape. */
const PLAIN_JSON = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** The bytes of a scalar's JSON (`undefined`, in an array, is written as null). */
function jsonBytes(value: unknown): number {
  if (typeof value === 'string' && PLAIN_JSON.test(value)) return value.length + 2;
  return Buffer.byteLength(JSON.stringify(value) ?? 'null');
}
