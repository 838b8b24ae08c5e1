/**
 * A provider's OpenAPI tools: selects operations by the manifest's include/exclude selectors,
 * applies the `max_tools` ceiling and per-operation overrides, compiles each operation and names it
 * (names.ts). Operations the compiler cannot express are skipped with a warning.
 */
import type { Manifest } from '../manifest-schema.js';
import type { ToolDraft } from '../tool-draft.js';
import type { FindingCode } from '../findings.js';
import { toolSchemaProblem } from '../json-schema.js';
import type { Finding } from '../types.js';
import type { PathSegment, YamlSource } from '../yaml-source.js';
import { listOperations, UnsupportedError, type OpenApiDocument, type OperationRef } from './document.js';
import { deriveToolName, uniqueName } from './names.js';
import { compileOperation } from './operation.js';
import { REF_DEPTH, SchemaConverter, type Cut } from './schema.js';
import { selectorMatches } from './select.js';

type OpenApiSpec = NonNullable<Manifest['openapi']>;

/**
 * Compiles the selected operations of `doc`. `reserved` holds the names of the provider's other
 * tools (inline, plugin), which derived names avoid.
 */
export function compileOpenApiTools(
  source: YamlSource,
  providerId: string,
  spec: OpenApiSpec,
  doc: OpenApiDocument,
  reserved: ReadonlySet<string>,
): { drafts: ToolDraft[]; findings: Finding[] } {
  const findings: Finding[] = [];
  const operations = listOperations(doc);
  const selected = selectOperations(source, spec, operations, findings);
  const overrides = resolveOverrides(source, spec, operations, selected, findings);

  if (spec.max_tools !== undefined && selected.length > spec.max_tools) {
    findings.push(
      source.finding(
        'TG_OPENAPI_TOO_MANY_TOOLS',
        ['openapi', 'max_tools'],
        `${selected.length} operations are selected but max_tools is ${spec.max_tools}; narrow openapi > operations > include or raise max_tools`,
      ),
    );
    return { drafts: [], findings };
  }

  const converter = new SchemaConverter(doc);
  const taken = new Set([
    ...reserved,
    ...[...overrides.values()].flatMap((o) => (o.spec.name ? [o.spec.name] : [])),
  ]);
  const drafts: ToolDraft[] = [];
  const cuts = new Map<string, { cut: Cut; tools: string[] }>();
  const skip = (op: OperationRef, code: FindingCode, why: string) =>
    findings.push(
      source.finding(
        code,
        ['openapi', 'file'],
        `${op.key}${op.operationId ? ` (${op.operationId})` : ''} is skipped: ${why}; ` +
          'exclude it under openapi > operations > exclude to silence this',
        { severity: 'warning' },
      ),
    );
  for (const op of selected) {
    let compiled;
    try {
      compiled = compileOperation(doc, converter, op);
    } catch (error) {
      if (!(error instanceof UnsupportedError)) throw error;
      skip(op, 'TG_OPENAPI_UNSUPPORTED', `${error.message} is not supported`);
      continue;
    }
    // The check plugin and inline tools pass (provider.ts, inline.ts): a schema keyword copied
    // from the document (an unknown `type`) must not reach clients as an invalid schema. Output
    // schemas are served as compiled: checking them too would cost GitHub's 1,221 tools 0.25 s.
    const problem = toolSchemaProblem(compiled.inputSchema);
    if (problem !== undefined) {
      skip(op, 'TG_OPENAPI_BAD_SCHEMA', `its input schema ${problem}`);
      continue;
    }
    const override = overrides.get(op);
    const name = override?.spec.name ?? uniqueName(deriveToolName(providerId, op), taken);
    taken.add(name);
    for (const cut of compiled.cuts) {
      const key = `${cut.name} ${cut.why}`;
      const seen = cuts.get(key) ?? { cut, tools: [] };
      seen.tools.push(name);
      cuts.set(key, seen);
    }
    const server = override?.spec.server ?? spec.server;
    const title = override?.spec.title ?? compiled.title;
    drafts.push({
      tool: {
        name,
        provider: providerId,
        source: op.key,
        ...(title !== undefined ? { title } : {}),
        description: override?.spec.description ?? compiled.description,
        inputSchema: compiled.inputSchema,
        ...(compiled.outputSchema ? { outputSchema: compiled.outputSchema } : {}),
        annotations: { ...compiled.annotations, ...override?.spec.annotations },
        request: { ...compiled.request, ...(server !== undefined ? { server } : {}) },
      },
      subject: { ...op, name },
      ...(override?.spec.name ? { namedAt: [...override.at, 'name'] } : {}),
    });
  }
  for (const { cut, tools } of cuts.values()) findings.push(cutFinding(source, cut, tools));
  return { drafts, findings };
}

/** One finding per cut schema: where the open object stands, and why. */
function cutFinding(source: YamlSource, cut: Cut, tools: readonly string[]): Finding {
  const where =
    tools.length <= 3 ? tools.join(', ') : `${tools.slice(0, 3).join(', ')} and ${tools.length - 3} more`;
  const why =
    cut.why === 'recursive'
      ? 'refers back to itself through its $refs'
      : `lies deeper than the $refs inlined (${REF_DEPTH} deep, less where a schema would pass its size budget)`;
  return source.finding(
    'TG_OPENAPI_SCHEMA_CUT',
    ['openapi', 'file'],
    `schema ${cut.name} ${why}, so it is an open object described "${cut.name} (${cut.why}; see the API docs)" in ${where}`,
    { severity: 'warning' },
  );
}

function selectOperations(
  source: YamlSource,
  spec: OpenApiSpec,
  operations: OperationRef[],
  findings: Finding[],
): OperationRef[] {
  const check = (list: 'include' | 'exclude'): Array<(op: OperationRef) => boolean> =>
    (spec.operations?.[list] ?? []).map((selector, i) => {
      const test = (op: OperationRef) => selectorMatches(selector, op);
      if (!operations.some(test)) {
        findings.push(
          source.finding(
            'TG_MANIFEST_SELECTOR_UNMATCHED',
            ['openapi', 'operations', list, i],
            `matches no operation of the document; fix the selector or remove it`,
          ),
        );
      }
      return test;
    });
  const include = check('include');
  const exclude = check('exclude');
  return operations.filter(
    (op) => (include.length === 0 || include.some((t) => t(op))) && !exclude.some((t) => t(op)),
  );
}

interface ResolvedOverride {
  spec: NonNullable<OpenApiSpec['overrides']>[string];
  at: PathSegment[];
}

/** Overrides by the operation they name, either as `METHOD /path` or as operationId. */
function resolveOverrides(
  source: YamlSource,
  spec: OpenApiSpec,
  operations: OperationRef[],
  selected: OperationRef[],
  findings: Finding[],
): Map<OperationRef, ResolvedOverride> {
  const resolved = new Map<OperationRef, ResolvedOverride>();
  const chosen = new Set(selected);
  for (const [key, override] of Object.entries(spec.overrides ?? {})) {
    const at: PathSegment[] = ['openapi', 'overrides', key];
    const op = operations.find((o) => o.key === key || o.operationId === key);
    if (!op) {
      findings.push(
        source.finding(
          'TG_MANIFEST_OVERRIDE_UNMATCHED',
          at,
          `no operation is "${key}"; write "METHOD /path" exactly as in the document, or an operationId`,
          { key: true },
        ),
      );
    } else if (!chosen.has(op)) {
      findings.push(
        source.finding(
          'TG_MANIFEST_OVERRIDE_UNUSED',
          at,
          `${op.key} is not selected, so this override has no effect`,
          {
            key: true,
            severity: 'warning',
          },
        ),
      );
    } else {
      resolved.set(op, { spec: override, at });
    }
  }
  return resolved;
}
