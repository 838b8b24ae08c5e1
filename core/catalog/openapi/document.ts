/**
 * An OpenAPI document as parsed JSON, plus the operations it declares. A JSON document is parsed
 * with JSON.parse, what swagger-parser does with one; any other goes through swagger-parser (YAML,
 * its version check), loaded then. Neither is dereferenced: on GitHub's description that costs
 * ~0.6 s (DESIGN.md, Performance facts), so `$ref`s are resolved lazily, only where a selected
 * operation reaches (see schema.ts).
 */

import { isAscii } from 'node:buffer';

export type OpenApiVersion = '2.0' | '3.0' | '3.1';
export type JsonObject = Record<string, unknown>;

export interface OpenApiDocument {
  version: OpenApiVersion;
  root: JsonObject;
}

/** One operation of the document; `key` is `METHOD /path`. */
export interface OperationRef {
  key: string;
  method: string;
  path: string;
  operationId?: string;
  tags: string[];
  pathItem: JsonObject;
  operation: JsonObject;
}

/** An operation or schema the compiler cannot turn into a correct tool; the operation is skipped. */
export class UnsupportedError extends Error {}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/**
 * Parses the document `file` from its bytes; throws with a readable message when it is not OpenAPI
 * 2.0/3.0/3.1. The loader has read the bytes for the content hash: swagger-parser's file resolver
 * is handed them instead of reading the file again (11 MB for GitHub's description).
 */
export async function loadDocument(file: string, bytes: Buffer): Promise<OpenApiDocument> {
  const root = jsonObject(bytes) ?? (await parseWithSwaggerParser(file, bytes));
  const declared = [root.swagger, root.openapi].find((v): v is string => typeof v === 'string') ?? '';
  const version =
    declared === '2.0'
      ? '2.0'
      : declared.startsWith('3.0')
        ? '3.0'
        : declared.startsWith('3.1')
          ? '3.1'
          : undefined;
  if (!version) throw new Error(`unsupported OpenAPI version "${declared}"; use 2.0, 3.0 or 3.1`);
  return { version, root };
}

/**
 * The object a JSON document holds; undefined when the bytes are no JSON object (YAML, a byte
 * order mark, an error to report): swagger-parser's to read and word.
 */
function jsonObject(bytes: Buffer): JsonObject | undefined {
  try {
    const value: unknown = JSON.parse(jsonText(bytes));
    return isObject(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Bytes {@link nextBeyondAscii} checks at once with `isAscii` (native, vectorised). A stretch with a
 * byte beyond ASCII is halved down to {@link BYTE_BY_BYTE} bytes, still natively, and read byte by
 * byte only then: reading every byte of each such stretch in JavaScript was most of the scan's time
 * in a fresh build worker, whose code has not been optimised yet (GitHub's description: 140 runs).
 */
const SCAN = 64 * 1024;
const BYTE_BY_BYTE = 64;

/**
 * Fewest bytes of text per run of characters beyond ASCII for {@link jsonText} to escape them: a run
 * costs it a few microseconds, and a text full of them (descriptions in Chinese: a run every few
 * dozen bytes) is decoded faster as it is (5 MB: 14 ms, against 190 ms escaped).
 */
const BYTES_PER_RUN = 16 * 1024;

const BACKSLASH = 0x5c;

const NON_ASCII = /[^\u0000-\u007f]/g;

/** A character beyond ASCII as the JSON escape of its code unit (each half of a surrogate pair). */
function escaped(char: string): string {
  return `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** The index of the first byte beyond ASCII at or after `from`; `bytes.length` when there is none. */
function nextBeyondAscii(bytes: Buffer, from: number): number {
  let start = from;
  while (start < bytes.length) {
    let end = Math.min(start + SCAN, bytes.length);
    if (isAscii(bytes.subarray(start, end))) {
      start = end;
      continue;
    }
    while (end - start > BYTE_BY_BYTE) {
      const middle = (start + end) >>> 1;
      if (isAscii(bytes.subarray(start, middle))) start = middle;
      else end = middle;
    }
    while (bytes[start]! < 0x80) start++;
    return start;
  }
  return bytes.length;
}

/**
 * UTF-8 JSON text as a string that JSON.parse reads to the same value as `bytes.toString('utf8')`,
 * but of one byte per character. One character beyond Latin-1 anywhere (a typographic apostrophe, a
 * dash, an emoji in a description) makes the decoded text two bytes per character, and decoding it
 * took 25-30 ms of a build where a one-byte decode takes 2-4 (GitHub's 13 MB description, 140 such
 * bytes: decoding and parsing 67 -> 39 ms), and the values parsed from it held 36 MB of heap after
 * a full collection, against 11 MB parsed from one-byte text. So each run of bytes beyond ASCII is
 * written as the `\u` escapes of its characters: where JSON allows such characters at all (in a
 * string) the escapes make the same string, and anywhere else both are a syntax error. A run after
 * a backslash is the exception (the raw character is an invalid escape, `\` + `\u…` a valid one):
 * such a text is decoded as it is, and so is a text with many runs ({@link BYTES_PER_RUN}). A run
 * ends at an ASCII byte, which no UTF-8 sequence holds, so it decodes as it would in the whole text
 * (invalid bytes to U+FFFD alike).
 */
function jsonText(bytes: Buffer): string {
  const pieces: Buffer[] = [];
  let from = 0;
  let runs = 0;
  for (let at = nextBeyondAscii(bytes, 0); at < bytes.length; at = nextBeyondAscii(bytes, from)) {
    if (bytes[at - 1] === BACKSLASH || ++runs * BYTES_PER_RUN > bytes.length) return bytes.toString('utf8');
    let end = at + 1;
    while (end < bytes.length && bytes[end]! >= 0x80) end++;
    const text = bytes.toString('utf8', at, end).replace(NON_ASCII, escaped);
    pieces.push(bytes.subarray(from, at), Buffer.from(text, 'latin1'));
    from = end;
  }
  if (from === 0) return bytes.toString('latin1');
  pieces.push(bytes.subarray(from));
  return Buffer.concat(pieces).toString('latin1');
}

/**
 * swagger-parser, loaded for documents that are not plain JSON: with it come ajv, the OpenAPI
 * meta-schemas and json-schema-ref-parser, about 60 ms of a build worker's cold start.
 */
async function parseWithSwaggerParser(file: string, bytes: Buffer): Promise<JsonObject> {
  const { default: SwaggerParser } = await import('@apidevtools/swagger-parser');
  const options = { resolve: { file: { read: () => bytes } } };
  return (await SwaggerParser.parse(file, options)) as unknown as JsonObject;
}

/** Every operation, ordered by path then method, so compilation is deterministic. */
export function listOperations(doc: OpenApiDocument): OperationRef[] {
  const paths = isObject(doc.root.paths) ? doc.root.paths : {};
  const operations: OperationRef[] = [];
  for (const path of Object.keys(paths).sort()) {
    const pathItem = resolveObject(doc, paths[path]);
    if (!pathItem) continue;
    for (const method of METHODS) {
      const operation = pathItem[method];
      if (!isObject(operation)) continue;
      const upper = method.toUpperCase();
      const tags = Array.isArray(operation.tags) ? operation.tags.map(String) : [];
      operations.push({
        key: `${upper} ${path}`,
        method: upper,
        path,
        ...(typeof operation.operationId === 'string' ? { operationId: operation.operationId } : {}),
        tags,
        pathItem,
        operation,
      });
    }
  }
  return operations;
}

/** The value a local `$ref` (`#/a/b`) points at, or `undefined`. */
export function resolvePointer(doc: OpenApiDocument, ref: string): unknown {
  if (!ref.startsWith('#'))
    throw new UnsupportedError(`external $ref "${ref}" (bundle the document into one file first)`);
  if (ref !== '#' && !ref.startsWith('#/')) throw new UnsupportedError(`$ref "${ref}" to an anchor`);
  let node: unknown = doc.root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const segment = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(node) && !Array.isArray(node)) return undefined;
    node = (node as JsonObject)[segment];
  }
  return node;
}

/** Follows `$ref`s of a non-schema object (parameter, request body, response, path item). */
export function resolveObject(doc: OpenApiDocument, value: unknown): JsonObject | undefined {
  let node = value;
  for (let hops = 0; isObject(node) && typeof node.$ref === 'string'; hops++) {
    if (hops > 20) throw new UnsupportedError(`$ref chain through "${node.$ref}" does not end`);
    const target = resolvePointer(doc, node.$ref);
    if (target === undefined) throw new UnsupportedError(`$ref "${node.$ref}" points at nothing`);
    node = target;
  }
  return isObject(node) ? node : undefined;
}

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
