/**
 * Tool argument validation (issue 3, Executor; STYLE.md 5 and 6): one shared ajv, one validator per
 * input schema compiled on first use and cached. A failure names the field and the rule, and the
 * caller reports it as an MCP InvalidParams error.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { JsonSchema } from '../catalog/types.js';
import type { ArgumentProblem } from '../upstream/request.js';

export type ArgumentCheck = { ok: true; args: Record<string, unknown> } | ArgumentProblem;

const ajv = new Ajv2020({ strict: false, coerceTypes: false, useDefaults: true, allErrors: false });
addFormatsModule.default(ajv);

// Keyed by the schema object: a catalog reload brings new schema objects, and the old validators
// go with the old snapshot.
const validators = new WeakMap<JsonSchema, ValidateFunction>();

function validatorFor(schema: JsonSchema): ValidateFunction {
  let validate = validators.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(schema);
    // ajv also caches by schema object, strongly; drop that entry so reloads do not leak, and so
    // two tools whose schemas share an `$id` do not collide.
    ajv.removeSchema(schema);
    validators.set(schema, validate);
  }
  return validate;
}

/**
 * Checks tool arguments against the tool's inputSchema. Absent arguments count as `{}`; defaults
 * from the schema are filled into the object in place (it is the caller's fresh parse of the
 * request), and that object is returned.
 */
export function validateArguments(inputSchema: JsonSchema, args: unknown): ArgumentCheck {
  const value = args ?? {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, field: '', message: 'arguments must be an object' };
  }
  const validate = validatorFor(inputSchema);
  if (validate(value)) return { ok: true, args: value as Record<string, unknown> };
  const [error] = validate.errors ?? [];
  return error === undefined ? { ok: false, field: '', message: 'arguments are not valid' } : describe(error);
}

function describe(error: ErrorObject): ArgumentProblem {
  const at = fieldPath(error.instancePath);
  const params = error.params as Record<string, unknown>;
  const problem = (field: string, rule: string): ArgumentProblem => ({
    ok: false,
    field,
    message: field === '' ? `arguments ${rule}` : `argument \`${field}\` ${rule}`,
  });
  switch (error.keyword) {
    case 'required':
      return problem(child(at, String(params.missingProperty)), 'is required');
    case 'additionalProperties':
      return problem(child(at, String(params.additionalProperty)), 'is not a known argument');
    case 'unevaluatedProperties':
      return problem(child(at, String(params.unevaluatedProperty)), 'is not a known argument');
    case 'type':
      return problem(at, `must be of type ${String(params.type).split(',').join(' or ')}`);
    case 'enum':
      return problem(
        at,
        `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      );
    case 'const':
      return problem(at, `must be ${JSON.stringify(params.allowedValue)}`);
    default:
      // ajv's own wording already names the rule: "must be <= 100", "must match format \"email\"".
      return problem(at, error.message ?? `fails the \`${error.keyword}\` rule`);
  }
}

// `/filter/labels/0` → `filter.labels[0]` (JSON Pointer escapes undone).
function fieldPath(pointer: string): string {
  if (pointer === '') return '';
  return pointer
    .slice(1)
    .split('/')
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((path, segment) => child(path, segment), '');
}

function child(path: string, segment: string): string {
  if (/^\d+$/.test(segment)) return `${path}[${segment}]`;
  return path === '' ? segment : `${path}.${segment}`;
}
