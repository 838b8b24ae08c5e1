import {
  listOperations,
  UnsupportedError,
  type JsonObject,
  type OpenApiDocument,
} from '../../../../core/catalog/openapi/document.js';
import { compileOperation, type CompiledOperation } from '../../../../core/catalog/openapi/operation.js';
import { SchemaConverter } from '../../../../core/catalog/openapi/schema.js';

/** A hand-written document of the given version around `paths` and `schemas`. */
export function documentOf(
  version: OpenApiDocument['version'],
  paths: JsonObject,
  schemas: JsonObject = {},
): OpenApiDocument {
  const info = { title: 'test', version: '1' };
  const root =
    version === '2.0'
      ? { swagger: '2.0', info, paths, definitions: schemas }
      : { openapi: version === '3.0' ? '3.0.3' : '3.1.0', info, paths, components: { schemas } };
  return { version, root };
}

/** Compiles every operation; an unsupported one yields its reason. */
export function compileAll(doc: OpenApiDocument): Record<string, CompiledOperation | string> {
  const converter = new SchemaConverter(doc);
  return Object.fromEntries(
    listOperations(doc).map((op): [string, CompiledOperation | string] => {
      try {
        return [op.key, compileOperation(doc, converter, op)];
      } catch (error) {
        if (error instanceof UnsupportedError) return [op.key, `unsupported: ${error.message}`];
        throw error;
      }
    }),
  );
}

export function compileOne(doc: OpenApiDocument): CompiledOperation {
  const [only] = Object.values(compileAll(doc));
  if (only === undefined || typeof only === 'string')
    throw new Error(`expected one compiled operation, got ${String(only)}`);
  return only;
}
