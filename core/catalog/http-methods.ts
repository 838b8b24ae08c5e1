/**
 * The HTTP methods a tool may use. A module of its own, without imports: the OpenAPI compiler
 * checks methods against it, and importing it from manifest-schema.ts would load TypeBox (~200
 * modules, ~60 ms) into every build worker, which never needs the schema's TypeBox form.
 */
export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD'] as const;
