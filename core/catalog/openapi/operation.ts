/**
 * One OpenAPI operation -> one tool's schemas and request plan.
 *
 * Arguments: path, query and header parameters by their own names (characters outside
 * [A-Za-z0-9_.-] become `_`); a later parameter whose name is taken gets its location as prefix
 * (`header_x`), then a number. An object body whose properties are all free names is spread into
 * top-level arguments; any other body is the argument `body`. Path-level parameters are merged
 * with the operation's, the operation's winning.
 */
import { HTTP_METHODS } from '../http-methods.js';
import type { JsonSchema, ParameterBinding, RequestPlan, SchemaOut, ToolAnnotations } from '../types.js';
import { describeOperation, oneLine, operationTitle } from './describe.js';
import {
  isObject,
  resolveObject,
  UnsupportedError,
  type JsonObject,
  type OpenApiDocument,
  type OperationRef,
} from './document.js';
import { REF_DEPTH, schemaSize, type Cut, type SchemaConverter, type SchemaSize } from './schema.js';

export interface CompiledOperation {
  title?: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  annotations: ToolAnnotations;
  request: RequestPlan;
  /** The `$ref`s left as described open objects in the schemas above. */
  cuts: Cut[];
}

type Location = ParameterBinding['in'];
type Method = RequestPlan['method'];
type BodyContentType = NonNullable<RequestPlan['body']>['contentType'];

interface Body {
  contentType: BodyContentType;
  required: boolean;
  schema: SchemaOut;
  description?: string;
  /** The fields of a multipart body that are files. */
  files?: string[];
}

const LOCATIONS: readonly Location[] = ['path', 'query', 'header'];
/** Header parameters OpenAPI says to ignore: the provider client sets them. */
const IGNORED_HEADERS = new Set(['accept', 'content-type', 'authorization']);
/** Serialization styles a ParameterBinding can carry (matrix and label path styles are not). */
const STYLES = new Set(['form', 'simple', 'spaceDelimited', 'pipeDelimited', 'deepObject']);
const ARG_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/** 2.0 parameter fields that form its schema. */
const LEGACY_SCHEMA_FIELDS = [
  'type',
  'format',
  'items',
  'enum',
  'default',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'uniqueItems',
  'multipleOf',
  'x-nullable',
];

/**
 * What one tool's schemas may weigh serialised (issue 16): a schema over its budget is converted
 * again with `$ref`s inlined less deep. The input budget keeps tools/list and a model's context
 * sane; GitHub's largest inputSchema is 23 KB, its largest outputSchema 86 KB.
 */
export const INPUT_BUDGET: SchemaSize = { bytes: 64 * 1024, nodes: 4_000 };
export const OUTPUT_BUDGET: SchemaSize = { bytes: 256 * 1024, nodes: 16_000 };
/** The `$ref` depths tried, deepest first, until a schema fits its budget. */
const DEPTHS = [REF_DEPTH, 8, 4, 2, 1, 0];

/** Compiles one operation; throws UnsupportedError when it cannot become a correct tool. */
export function compileOperation(
  doc: OpenApiDocument,
  converter: SchemaConverter,
  op: OperationRef,
): CompiledOperation {
  if (!(HTTP_METHODS as readonly string[]).includes(op.method))
    throw new UnsupportedError(`method ${op.method}`);
  const method = op.method as Method;
  let input: ReturnType<typeof compileInput> | undefined;
  let size: SchemaSize | undefined;
  for (const depth of DEPTHS) {
    converter.takeCuts();
    input = compileInput(doc, converter, op, method, depth);
    size = schemaSize(input.inputSchema);
    if (fits(size, INPUT_BUDGET)) break;
    input = undefined;
  }
  if (input === undefined || size === undefined) {
    throw new UnsupportedError(
      `an input schema of ${budgetText(size)} even with no $ref inlined (the budget is ${budgetText(INPUT_BUDGET)})`,
    );
  }
  const cuts = converter.takeCuts();
  let outputSchema: JsonSchema | undefined;
  for (const depth of DEPTHS) {
    outputSchema = responseSchema(doc, converter, op, depth);
    if (outputSchema === undefined || fits(schemaSize(outputSchema), OUTPUT_BUDGET)) break;
    outputSchema = undefined;
    converter.takeCuts();
  }
  const named = new Map([...cuts, ...converter.takeCuts()].map((cut) => [`${cut.name} ${cut.why}`, cut]));
  const title = operationTitle(op.operation);
  return {
    ...(title !== undefined ? { title } : {}),
    description: describeOperation(op, input.required),
    inputSchema: input.inputSchema,
    ...(outputSchema ? { outputSchema } : {}),
    annotations: annotationsFor(method),
    request: input.request,
    cuts: [...named.values()],
  };
}

function fits(size: SchemaSize, budget: SchemaSize): boolean {
  return size.bytes <= budget.bytes && size.nodes <= budget.nodes;
}

function budgetText(size: SchemaSize | undefined): string {
  return size ? `${Math.ceil(size.bytes / 1024)} KB and ${size.nodes} nodes` : 'unknown size';
}

/** The tool's arguments and request plan, with `$ref`s inlined at most `depth` deep. */
function compileInput(
  doc: OpenApiDocument,
  converter: SchemaConverter,
  op: OperationRef,
  method: Method,
  depth: number,
): { inputSchema: JsonSchema; required: string[]; request: RequestPlan } {
  const parameters = mergedParameters(doc, op);
  const taken = new Set<string>();
  const properties: JsonSchema = {};
  const required: string[] = [];
  const bindings: ParameterBinding[] = [];

  for (const location of LOCATIONS) {
    for (const param of parameters.filter((p) => p.in === location)) {
      const name = String(param.name);
      if (location === 'header' && IGNORED_HEADERS.has(name.toLowerCase())) continue;
      const arg = claimArg(name, location, taken);
      const isRequired = location === 'path' || param.required === true;
      properties[arg] = annotate(
        asObject(converter.convert(parameterSchema(doc, param), 'input', depth)),
        param,
      );
      if (isRequired) required.push(arg);
      bindings.push({
        arg,
        name,
        in: location,
        required: isRequired,
        ...serialization(doc, param, location),
      });
    }
  }
  for (const param of parameters.filter((p) => p.in === 'cookie')) {
    if (param.required === true)
      throw new UnsupportedError(`required cookie parameter "${String(param.name)}"`);
  }

  const request: RequestPlan = { method, ...requestTarget(op.path), parameters: bindings };
  const body = requestBody(doc, converter, op, parameters, depth);
  if (body) {
    const spread = spreadableKeys(body.schema, taken);
    if (spread) {
      const schema = body.schema as JsonSchema;
      const bodyRequired = new Set(body.required ? ((schema.required as string[] | undefined) ?? []) : []);
      for (const key of spread) {
        properties[key] = (schema.properties as JsonSchema)[key];
        taken.add(key);
        if (bodyRequired.has(key)) required.push(key);
      }
      request.body = {
        contentType: body.contentType,
        required: body.required,
        ...(body.files ? { files: body.files } : {}),
        from: { kind: 'spread', args: spread },
      };
    } else {
      const arg = claimArg('body', 'request', taken);
      const schema = asObject(body.schema);
      properties[arg] =
        body.description && !schema.description ? { ...schema, description: body.description } : schema;
      if (body.required) required.push(arg);
      request.body = {
        contentType: body.contentType,
        required: body.required,
        ...(body.files ? { files: body.files } : {}),
        from: { kind: 'property', arg },
      };
    }
  }

  const inputSchema: JsonSchema = {
    type: 'object',
    properties,
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
  return { inputSchema, required, request };
}

/**
 * The request path of an OpenAPI path key and the fixed query it carries (issue 16). A `#...`
 * suffix marks one of several operations on a path (`/accesspoint/{name}#x-amz-account-id`) and is
 * not sent; a literal `?a=b&c` becomes fixed query parameters. A template variable in either part
 * cannot be placed, nor can a query that is not percent-encoded correctly.
 */
function requestTarget(key: string): Pick<RequestPlan, 'path' | 'fixedQuery'> {
  const hash = key.indexOf('#');
  if (hash >= 0 && /[{}]/.test(key.slice(hash)))
    throw new UnsupportedError(`path "${key}" (a template variable after "#")`);
  const bare = hash >= 0 ? key.slice(0, hash) : key;
  const mark = bare.indexOf('?');
  if (mark < 0) return { path: bare };
  const text = bare.slice(mark + 1);
  if (/[{}]/.test(text)) throw new UnsupportedError(`path "${key}" (a template variable in its query)`);
  const decode = (part: string): string => {
    try {
      return decodeURIComponent(part);
    } catch {
      throw new UnsupportedError(`path "${key}" (a query that is not percent-encoded correctly)`);
    }
  };
  const fixedQuery = text
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair) => {
      const eq = pair.indexOf('=');
      return eq < 0
        ? { name: decode(pair) }
        : { name: decode(pair.slice(0, eq)), value: decode(pair.slice(eq + 1)) };
    });
  return { path: bare.slice(0, mark), ...(fixedQuery.length > 0 ? { fixedQuery } : {}) };
}

/** MCP hints from HTTP semantics; PUT and DELETE are idempotent by definition (RFC 9110, 9.2.2). */
export function annotationsFor(method: Method): ToolAnnotations {
  if (method === 'GET' || method === 'HEAD') return { readOnlyHint: true, openWorldHint: true };
  return {
    readOnlyHint: false,
    destructiveHint: method === 'DELETE',
    idempotentHint: method === 'PUT' || method === 'DELETE',
    openWorldHint: true,
  };
}

function mergedParameters(doc: OpenApiDocument, op: OperationRef): JsonObject[] {
  const byKey = new Map<string, JsonObject>();
  for (const list of [op.pathItem.parameters, op.operation.parameters]) {
    if (!Array.isArray(list)) continue;
    for (const raw of list) {
      const param = resolveObject(doc, raw);
      if (!param || typeof param.name !== 'string') throw new UnsupportedError('a parameter without a name');
      byKey.set(`${String(param.in)}:${param.name}`, param);
    }
  }
  return [...byKey.values()];
}

function parameterSchema(doc: OpenApiDocument, param: JsonObject): unknown {
  if (doc.version === '2.0') {
    return Object.fromEntries(LEGACY_SCHEMA_FIELDS.filter((k) => k in param).map((k) => [k, param[k]]));
  }
  if (param.schema !== undefined) return param.schema;
  if (param.content !== undefined)
    throw new UnsupportedError(`parameter "${String(param.name)}" serialized as content`);
  return { type: 'string' };
}

function serialization(
  doc: OpenApiDocument,
  param: JsonObject,
  location: Location,
): Pick<ParameterBinding, 'style' | 'explode'> {
  if (doc.version === '2.0') {
    if (param.type !== 'array') return {};
    const format = typeof param.collectionFormat === 'string' ? param.collectionFormat : 'csv';
    if (format === 'multi') return { style: 'form', explode: true };
    if (format === 'ssv') return { style: 'spaceDelimited', explode: false };
    if (format === 'pipes') return { style: 'pipeDelimited', explode: false };
    if (format === 'csv')
      return location === 'query' ? { style: 'form', explode: false } : { style: 'simple', explode: false };
    throw new UnsupportedError(`collectionFormat "${format}" of parameter "${String(param.name)}"`);
  }
  const style = param.style;
  if (style !== undefined && !(typeof style === 'string' && STYLES.has(style))) {
    throw new UnsupportedError(`style ${JSON.stringify(style)} of parameter "${String(param.name)}"`);
  }
  return {
    ...(style !== undefined ? { style: style as NonNullable<ParameterBinding['style']> } : {}),
    ...(typeof param.explode === 'boolean' ? { explode: param.explode } : {}),
  };
}

function requestBody(
  doc: OpenApiDocument,
  converter: SchemaConverter,
  op: OperationRef,
  parameters: JsonObject[],
  depth: number,
): Body | undefined {
  if (doc.version === '2.0') return legacyBody(doc, converter, op, parameters, depth);
  const body = resolveObject(doc, op.operation.requestBody);
  if (!body) return undefined;
  const required = body.required === true;
  const content = isObject(body.content) ? body.content : {};
  const media = pickMediaType(Object.keys(content));
  // Sending an operation without the body it is about (markdown, file uploads) would mislead, even when optional.
  if (!media)
    throw new UnsupportedError(`request body of type ${Object.keys(content).join(', ') || '(none)'}`);
  const mediaObject = resolveObject(doc, content[media.key]) ?? {};
  return {
    contentType: media.contentType,
    required,
    ...shapeBody(media.contentType, converter.convert(mediaObject.schema ?? {}, 'input', depth)),
    ...(typeof body.description === 'string' ? { description: oneLine(body.description) } : {}),
  };
}

function legacyBody(
  doc: OpenApiDocument,
  converter: SchemaConverter,
  op: OperationRef,
  parameters: JsonObject[],
  depth: number,
): Body | undefined {
  const consumes = [op.operation.consumes, doc.root.consumes].find(Array.isArray) as unknown[] | undefined;
  const types = (consumes ?? []).map(String);
  const bodyParam = parameters.find((p) => p.in === 'body');
  if (bodyParam) {
    const required = bodyParam.required === true;
    const contentType = types.length > 0 ? pickMediaType(types)?.contentType : 'application/json';
    if (contentType !== 'application/json' && contentType !== 'application/octet-stream') {
      throw new UnsupportedError(`request body of type ${types.join(', ')}`);
    }
    return {
      contentType,
      required,
      ...shapeBody(contentType, converter.convert(bodyParam.schema ?? {}, 'input', depth)),
      ...(typeof bodyParam.description === 'string' ? { description: oneLine(bodyParam.description) } : {}),
    };
  }
  const fields = parameters.filter((p) => p.in === 'formData');
  if (fields.length === 0) return undefined;
  // A file cannot be sent in a urlencoded form: with one, the form is multipart.
  const hasFile = fields.some((f) => f.type === 'file');
  const urlencoded = types.length === 0 || types.includes('application/x-www-form-urlencoded');
  const contentType: BodyContentType =
    hasFile || !urlencoded ? 'multipart/form-data' : 'application/x-www-form-urlencoded';
  if (types.length > 0 && !types.includes(contentType)) {
    throw new UnsupportedError(`form body of type ${types.join(', ')}`);
  }
  const schema = {
    type: 'object',
    properties: Object.fromEntries(
      fields.map((f) => [
        String(f.name),
        {
          ...(f.type === 'file' ? FILE_IN_DOCUMENT : (parameterSchema(doc, f) as JsonObject)),
          ...(typeof f.description === 'string' ? { description: f.description } : {}),
        },
      ]),
    ),
    required: fields.filter((f) => f.required === true).map((f) => String(f.name)),
  };
  return {
    contentType,
    required: fields.some((f) => f.required === true),
    ...shapeBody(contentType, converter.convert(schema, 'input', depth)),
  };
}

/** How a document describes a file: in a 3.x multipart schema, and what a 2.0 `type: file` becomes. */
const FILE_IN_DOCUMENT = { type: 'string', format: 'binary' };

/** JSON first, then a form, a multipart form, raw bytes; other media types (XML, text) are not supported. */
function pickMediaType(types: string[]): { key: string; contentType: BodyContentType } | undefined {
  const bare = (t: string) => (t.split(';')[0] ?? '').trim().toLowerCase();
  const json = types.find((t) => /^application\/([a-z0-9.+-]*\+)?json$/.test(bare(t)));
  if (json !== undefined) return { key: json, contentType: 'application/json' };
  for (const contentType of [
    'application/x-www-form-urlencoded',
    'multipart/form-data',
    'application/octet-stream',
  ] as const) {
    const key = types.find((t) => bare(t) === contentType);
    if (key !== undefined) return { key, contentType };
  }
  return undefined;
}

/**
 * A body's schema as the tool takes it: an octet-stream body is one base64 string; in a multipart
 * body, each file field (binary string, or an array of them) becomes {content, filename,
 * media_type} (fileSchema), and is listed so the request builder sends it as a file part.
 */
function shapeBody(contentType: BodyContentType, schema: SchemaOut): Pick<Body, 'schema' | 'files'> {
  if (contentType === 'application/octet-stream') {
    const description = isObject(schema) && typeof schema.description === 'string' ? schema.description : '';
    return {
      schema: {
        type: 'string',
        contentEncoding: 'base64',
        description: `${description ? `${description} ` : ''}The bytes to send, base64-encoded.`.trim(),
      },
    };
  }
  if (contentType !== 'multipart/form-data') return { schema };
  if (typeof schema === 'boolean' || !isObject(schema.properties))
    throw new UnsupportedError('a multipart body without named fields');
  const files: string[] = [];
  const properties = Object.fromEntries(
    Object.entries(schema.properties).map(([name, field]) => {
      if (isFile(field)) {
        files.push(name);
        return [name, fileSchema(field)];
      }
      if (isObject(field) && field.type === 'array' && isFile(field.items)) {
        files.push(name);
        return [name, { ...field, items: fileSchema(field.items) }];
      }
      return [name, field];
    }),
  );
  return { schema: { ...schema, properties }, files };
}

/** A binary string: OpenAPI 3.0's `format: binary`, 3.1's `contentMediaType` without an encoding. */
function isFile(schema: unknown): schema is JsonSchema {
  if (!isObject(schema)) return false;
  const types: unknown[] = Array.isArray(schema.type) ? schema.type : [schema.type];
  if (!types.includes('string')) return false;
  return (
    schema.format === 'binary' ||
    (schema.contentMediaType !== undefined && schema.contentEncoding === undefined)
  );
}

/** The argument a file field takes: its bytes in base64, with the name and media type sent along. */
function fileSchema(field: JsonSchema): JsonSchema {
  const own = typeof field.description === 'string' ? `${field.description} ` : '';
  return {
    type: 'object',
    description: `${own}A file: its bytes base64-encoded in content, with filename and media_type.`,
    properties: {
      content: {
        type: 'string',
        contentEncoding: 'base64',
        description: "The file's bytes, base64-encoded.",
      },
      filename: { type: 'string', description: 'The file name sent with it; the field name when absent.' },
      media_type: {
        type: 'string',
        description: 'Its media type, e.g. image/png; application/octet-stream when absent.',
      },
    },
    required: ['content'],
    additionalProperties: false,
  };
}

/** The object body's property names, when they can all become top-level arguments. */
function spreadableKeys(schema: SchemaOut, taken: ReadonlySet<string>): string[] | undefined {
  if (typeof schema === 'boolean' || !isObject(schema.properties)) return undefined;
  if (schema.type !== undefined && schema.type !== 'object') return undefined;
  const open = schema.additionalProperties !== undefined && schema.additionalProperties !== false;
  const composed = ['patternProperties', 'allOf', 'anyOf', 'oneOf', 'not', 'if'].some((k) => k in schema);
  if (open || composed) return undefined;
  const keys = Object.keys(schema.properties);
  if (keys.length === 0 || keys.some((k) => !ARG_NAME.test(k) || taken.has(k))) return undefined;
  return keys;
}

/** The first 2xx JSON response schema, when it describes an object (MCP requires one). */
function responseSchema(
  doc: OpenApiDocument,
  converter: SchemaConverter,
  op: OperationRef,
  depth: number,
): JsonSchema | undefined {
  const responses = isObject(op.operation.responses) ? op.operation.responses : {};
  const code = Object.keys(responses)
    .filter((c) => c.startsWith('2'))
    .sort()[0];
  if (code === undefined) return undefined;
  try {
    const response = resolveObject(doc, responses[code]);
    let raw: unknown;
    if (doc.version === '2.0') {
      raw = response?.schema;
    } else {
      const content = isObject(response?.content) ? response.content : {};
      const media = pickMediaType(Object.keys(content));
      raw =
        media?.contentType === 'application/json'
          ? resolveObject(doc, content[media.key])?.schema
          : undefined;
    }
    if (raw === undefined) return undefined;
    const schema = converter.convert(raw, 'output', depth);
    if (typeof schema === 'boolean') return undefined;
    if (schema.type === 'object') return schema;
    return schema.type === undefined && isObject(schema.properties)
      ? { type: 'object', ...schema }
      : undefined;
  } catch (error) {
    // A response the compiler cannot express costs the tool its outputSchema, not its existence.
    if (error instanceof UnsupportedError) return undefined;
    throw error;
  }
}

function claimArg(name: string, location: string, taken: Set<string>): string {
  const clean = (text: string) => text.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 64) || 'arg';
  let arg = clean(name);
  if (taken.has(arg)) arg = clean(`${location}_${name}`);
  for (let n = 2; taken.has(arg); n++) arg = `${clean(`${location}_${name}`).slice(0, 60)}_${n}`;
  taken.add(arg);
  return arg;
}

function asObject(schema: SchemaOut): JsonSchema {
  if (schema === true) return {};
  if (schema === false) throw new UnsupportedError('a schema that admits nothing');
  return schema;
}

function annotate(schema: JsonSchema, param: JsonObject): JsonSchema {
  const description = typeof param.description === 'string' ? oneLine(param.description) : '';
  return {
    ...schema,
    ...(description !== '' ? { description } : {}),
    ...(param.deprecated === true ? { deprecated: true } : {}),
  };
}
