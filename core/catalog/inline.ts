/**
 * Inline tools (manifest `tools`), for providers without an OpenAPI document. Path `{arg}`s,
 * `query` and `headers` place arguments; `body.arg` names one argument sent as the whole body.
 * Otherwise the remaining arguments form the body of POST, PUT and PATCH (or of any method when
 * `body` is given), and the query string of other methods.
 */
import { annotationsFor } from './openapi/operation.js';
import { toolSchemaProblem } from './json-schema.js';
import type { InlineToolSpec } from './manifest-schema.js';
import type { ToolDraft } from './tool-draft.js';
import type { Finding, JsonSchema, ParameterBinding, RequestPlan } from './types.js';
import type { PathSegment, YamlSource } from './yaml-source.js';

export function compileInlineTools(
  source: YamlSource,
  providerId: string,
  tools: readonly InlineToolSpec[],
): { drafts: ToolDraft[]; findings: Finding[] } {
  const drafts: ToolDraft[] = [];
  const findings: Finding[] = [];
  tools.forEach((spec, i) => {
    const at: PathSegment[] = ['tools', i];
    const problems: Finding[] = [];
    for (const key of ['input_schema', 'output_schema'] as const) {
      const schema = spec[key];
      const problem = schema && toolSchemaProblem(schema);
      if (problem) problems.push(source.finding('TG_MANIFEST_BAD_SCHEMA', [...at, key], `${key} ${problem}`));
    }
    const request = problems.length === 0 ? requestPlan(source, spec, at, problems) : undefined;
    findings.push(...problems);
    if (!request) return;
    drafts.push({
      tool: {
        name: spec.name,
        provider: providerId,
        source: `inline:${spec.name}`,
        ...(spec.title !== undefined ? { title: spec.title } : {}),
        description: spec.description,
        inputSchema: spec.input_schema,
        ...(spec.output_schema ? { outputSchema: spec.output_schema } : {}),
        annotations: { ...annotationsFor(spec.request.method), ...spec.annotations },
        request,
      },
      subject: { name: spec.name, method: spec.request.method, path: spec.request.path },
      namedAt: [...at, 'name'],
    });
  });
  return { drafts, findings };
}

function requestPlan(
  source: YamlSource,
  spec: InlineToolSpec,
  at: PathSegment[],
  findings: Finding[],
): RequestPlan | undefined {
  const { method, path, query = [], headers = {}, body, server } = spec.request;
  const schema: JsonSchema = spec.input_schema;
  const properties = Object.keys(schema.properties ?? {});
  const required = new Set((schema.required ?? []) as string[]);
  const where = [...at, 'request'];
  const known = (arg: string, field: PathSegment[]) => {
    if (properties.includes(arg)) return true;
    findings.push(
      source.finding(
        'TG_MANIFEST_UNKNOWN_ARG',
        [...where, ...field],
        `"${arg}" is not a property of input_schema; add it there or fix the name`,
      ),
    );
    return false;
  };

  const bindings: ParameterBinding[] = [];
  for (const [, arg] of path.matchAll(/\{([^}]+)\}/g)) {
    if (arg !== undefined && known(arg, ['path']))
      bindings.push({ arg, name: arg, in: 'path', required: true });
  }
  query.forEach((arg, j) => {
    if (known(arg, ['query', j])) bindings.push({ arg, name: arg, in: 'query', required: required.has(arg) });
  });
  for (const [header, arg] of Object.entries(headers)) {
    if (known(arg, ['headers', header]))
      bindings.push({ arg, name: header, in: 'header', required: required.has(arg) });
  }
  if (body?.arg !== undefined) known(body.arg, ['body', 'arg']);
  if (body && (method === 'GET' || method === 'HEAD')) {
    findings.push(
      source.finding(
        'TG_MANIFEST_BAD_VALUE',
        [...where, 'body'],
        `a ${method} request has no body; remove body`,
      ),
    );
  }
  if (findings.length > 0) return undefined;

  const placed = new Set([...bindings.map((b) => b.arg), ...(body?.arg !== undefined ? [body.arg] : [])]);
  const rest = properties.filter((p) => !placed.has(p));
  const plan: RequestPlan = {
    method,
    path,
    parameters: bindings,
    ...(server !== undefined ? { server } : {}),
  };
  const contentType = body?.format === 'form' ? 'application/x-www-form-urlencoded' : 'application/json';
  if (body?.arg !== undefined) {
    plan.body = { contentType, required: required.has(body.arg), from: { kind: 'property', arg: body.arg } };
  } else if (body !== undefined || method === 'POST' || method === 'PUT' || method === 'PATCH') {
    plan.body = {
      contentType,
      required: rest.some((p) => required.has(p)),
      from: { kind: 'spread', args: rest },
    };
    return plan;
  }
  for (const arg of rest) bindings.push({ arg, name: arg, in: 'query', required: required.has(arg) });
  return plan;
}
