/**
 * Pass 1 of manifest validation: the structure, checked by ajv against ManifestSchema with every
 * error collected, each turned into a located finding whose message says how to fix it. The
 * validator is compiled ahead of time (manifest-validator.ts, by scripts/gen-manifest-schema.ts).
 */
import type { ErrorObject } from 'ajv';
import type { Manifest } from './manifest-schema.js';
import { validateManifest } from './manifest-validator.js';
import type { YamlSource, PathSegment } from './yaml-source.js';
import type { Finding } from './types.js';

type SchemaNode = {
  properties?: Record<string, { description?: string }>;
  description?: string;
  oneOf?: Array<{ properties?: Record<string, { const?: unknown }> }>;
  not?: { enum?: unknown[] };
};

/** Checks `data` against the manifest schema; returns the manifest when it conforms. */
export function checkStructure(
  source: YamlSource,
  data: unknown,
): { manifest?: Manifest; findings: Finding[] } {
  if (validateManifest(data)) return { manifest: data, findings: [] };
  const errors = withoutBranchNoise(validateManifest.errors ?? []);
  const findings = errors.map((error) => toFinding(source, error));
  return { findings: dedupe(findings) };
}

/**
 * An `anyOf` failure drags in the errors of every branch. When only one branch fits the value's
 * type, its own errors are the useful ones; otherwise one summary of the allowed shapes is.
 */
function withoutBranchNoise(errors: ErrorObject[]): ErrorObject[] {
  let result = errors;
  for (const union of errors.filter((e) => e.keyword === 'anyOf')) {
    const prefix = `${union.schemaPath}/`;
    const inside = result.filter((e) => e.schemaPath.startsWith(prefix));
    const byBranch = new Map<string, ErrorObject[]>();
    for (const e of inside) {
      const branch = e.schemaPath.slice(prefix.length).split('/')[0] ?? '';
      byBranch.set(branch, [...(byBranch.get(branch) ?? []), e]);
    }
    const fitting = [...byBranch.values()].filter(
      (branchErrors) =>
        !branchErrors.some((e) => e.keyword === 'type' && e.instancePath === union.instancePath),
    );
    const keep = fitting.length === 1 ? new Set(fitting[0]) : new Set([union]);
    result = result.filter((e) => (e !== union && !inside.includes(e)) || keep.has(e));
  }
  return result;
}

function toFinding(source: YamlSource, error: ErrorObject): Finding {
  const path: PathSegment[] = error.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const parent = (error.parentSchema ?? {}) as SchemaNode;
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'additionalProperties': {
      const name = String(params.additionalProperty);
      const allowed = Object.keys(parent.properties ?? {});
      const hint = closest(name, allowed);
      const expected = allowed.length > 0 ? `; allowed here: ${allowed.join(', ')}` : '';
      return source.finding(
        'TG_MANIFEST_UNKNOWN_KEY',
        [...path, name],
        `unknown key "${name}"${hint ? ` (did you mean "${hint}"?)` : ''}; remove it${expected}`,
        { key: true },
      );
    }
    case 'required': {
      const name = String(params.missingProperty);
      const about = parent.properties?.[name]?.description;
      return source.finding(
        'TG_MANIFEST_MISSING_KEY',
        [...path, name],
        `missing required key "${name}"; add it${about ? ` (${about})` : ''}`,
      );
    }
    case 'discriminator': {
      const tag = String(params.tag);
      const kinds = (parent.oneOf ?? []).map((v) => String(v.properties?.[tag]?.const));
      const found =
        params.tagValue === undefined
          ? 'is missing'
          : `${JSON.stringify(params.tagValue)} is not one of them`;
      return source.finding(
        'TG_MANIFEST_BAD_VALUE',
        [...path, tag],
        `"${tag}" must be one of ${kinds.join(', ')}; ${found}`,
      );
    }
    case 'type':
      return source.finding('TG_MANIFEST_WRONG_TYPE', path, `must be ${article(String(params.type))}`);
    case 'enum':
      return source.finding(
        'TG_MANIFEST_BAD_VALUE',
        path,
        `must be one of: ${(params.allowedValues as unknown[]).map(String).join(', ')}`,
      );
    case 'const':
      return source.finding('TG_MANIFEST_BAD_VALUE', path, `must be ${JSON.stringify(params.allowedValue)}`);
    case 'pattern':
      return source.finding(
        'TG_MANIFEST_BAD_VALUE',
        path,
        `must match ${String(params.pattern)}${parent.description ? ` (${parent.description})` : ''}`,
      );
    case 'not':
      return source.finding(
        'TG_MANIFEST_BAD_VALUE',
        path,
        `must not be one of: ${(parent.not?.enum ?? []).map(String).join(', ')}; choose another`,
      );
    case 'anyOf':
      return source.finding(
        'TG_MANIFEST_WRONG_SHAPE',
        path,
        `must be ${parent.description ?? 'one of the allowed shapes'}`,
      );
    default:
      return source.finding('TG_MANIFEST_BAD_VALUE', path, error.message ?? 'is not allowed here');
  }
}

function dedupe(findings: Finding[]): Finding[] {
  const seen = new Set<string>();
  return findings.filter((f) => {
    const key = `${f.code}|${f.path.join('/')}|${f.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** The allowed key within edit distance 2 of a misspelt one, if any. */
function closest(name: string, candidates: string[]): string | undefined {
  let best: { candidate: string; distance: number } | undefined;
  for (const candidate of candidates) {
    const distance = editDistance(name, candidate);
    if (distance <= 2 && (!best || distance < best.distance)) best = { candidate, distance };
  }
  return best?.candidate;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
