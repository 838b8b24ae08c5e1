/**
 * One provider from manifest to ProviderEntry: read and check the manifest (passes 1 and 2),
 * gather its tools (OpenAPI operations, inline tools, plugin tools), check their names, file them
 * in categories. An unchanged provider (same content hash) is not recompiled, nor even parsed
 * (`unchangedBuild`, on the main thread); `buildProvider` runs in a build worker (build-pool.ts).
 */
import { readFile } from 'node:fs/promises';
import type { PluginRegistry } from './plugins/registry.js';
import { assignCategories, dynamicCategories } from './categories.js';
import { hasErrors, sortFindings } from './findings.js';
import { compileInlineTools } from './inline.js';
import { toolSchemaProblem } from './json-schema.js';
import { idFromFile, isUnchanged, readManifest } from './load.js';
import type { Manifest } from './manifest-schema.js';
import { checkMeaning } from './meaning.js';
import { compileOpenApiTools } from './openapi/compile.js';
import { loadDocument } from './openapi/document.js';
import { normaliseName, toolPrefix } from './openapi/names.js';
import type { ToolDraft } from './tool-draft.js';
import { TOOL_NAME_PATTERN, type Finding, type ProviderEntry } from './types.js';
import type { YamlSource } from './yaml-source.js';

/** What building one manifest gave; plain data, so it crosses from a build worker as it is. */
export interface ProviderBuild {
  /** The id the file name implies (a valid manifest's id equals it). */
  id: string;
  file: string;
  /** Present when the provider loads: newly compiled, or the previous entry when nothing changed. */
  entry?: ProviderEntry;
  /** Every finding, errors and warnings, sorted. */
  findings: Finding[];
}

/** `previous` as the build of `file` when its content hash still matches, else `undefined`. */
export async function unchangedBuild(
  file: string,
  registry: PluginRegistry,
  previous: ProviderEntry | undefined,
): Promise<ProviderBuild | undefined> {
  if (!previous || !(await isUnchanged(previous, file, await readFile(file), registry))) return undefined;
  return { id: idFromFile(file), file, entry: previous, findings: previous.warnings };
}

/** Builds the provider of one manifest file from scratch. */
export async function buildProvider(file: string, registry: PluginRegistry): Promise<ProviderBuild> {
  const loaded = await readManifest(file, await readFile(file), registry);
  const base = { id: loaded.id, file };
  const { manifest, source } = loaded;
  if (!manifest) return { ...base, findings: sortFindings(loaded.findings) };

  const findings = [...loaded.findings, ...checkMeaning({ ...loaded, manifest }, registry)];
  const pluginDrafts = pluginTools(source, manifest, registry, findings);
  const inline = compileInlineTools(source, manifest.id, manifest.tools ?? []);
  findings.push(...inline.findings);
  const drafts = [...inline.drafts, ...pluginDrafts];

  if (manifest.openapi && loaded.documentFile !== undefined && loaded.document !== undefined) {
    const reserved = new Set(drafts.map((d) => d.tool.name));
    try {
      const document = await loadDocument(loaded.documentFile, loaded.document);
      const compiled = compileOpenApiTools(source, manifest.id, manifest.openapi, document, reserved);
      findings.push(...compiled.findings);
      drafts.unshift(...compiled.drafts);
    } catch (error) {
      findings.push(
        source.finding(
          'TG_OPENAPI_INVALID',
          ['openapi', 'file'],
          `cannot read the document: ${(error as Error).message}`,
        ),
      );
    }
  }

  findings.push(...checkToolNames(source, manifest.id, drafts));
  if (drafts.length === 0 && !manifest.mcp && !hasErrors(findings)) {
    findings.push(
      source.finding(
        'TG_MANIFEST_NO_TOOLS',
        [],
        'the provider has no tools; add openapi, tools or a plugin with tools',
      ),
    );
  }
  for (const key of ['verify', 'identity'] as const) {
    const tool = manifest[key]?.tool;
    if (tool !== undefined && !drafts.some((d) => d.tool.name === tool)) {
      findings.push(
        source.finding(
          'TG_MANIFEST_UNKNOWN_TOOL',
          [key, 'tool'],
          `no tool of this provider is named "${tool}"`,
        ),
      );
    }
  }
  const {
    categories,
    tools,
    findings: categoryFindings,
  } = manifest.mcp
    ? { ...dynamicCategories(source, manifest.categories), tools: [] }
    : assignCategories(source, manifest.categories, drafts);
  findings.push(...categoryFindings);

  const sorted = sortFindings(findings);
  if (hasErrors(sorted)) return { ...base, findings: sorted };
  const entry: ProviderEntry = {
    id: manifest.id,
    displayName: manifest.display_name,
    description: manifest.description,
    ...(manifest.docs_url !== undefined ? { docsUrl: manifest.docs_url } : {}),
    ...(manifest.logo_url !== undefined ? { logoUrl: manifest.logo_url } : {}),
    auth: { kind: manifest.auth.kind, credentialFields: credentialFields(manifest) },
    categories,
    tools,
    ...(manifest.limits ? { limits: manifest.limits.note } : {}),
    ...(manifest.synonyms ? { synonyms: manifest.synonyms } : {}),
    contentHash: loaded.contentHash,
    ...(manifest.plugin !== undefined ? { plugin: manifest.plugin } : {}),
    file,
    ...(manifest.openapi ? { openapiFile: manifest.openapi.file } : {}),
    spec: {
      auth: manifest.auth,
      ...(manifest.connection_fields ? { connection_fields: manifest.connection_fields } : {}),
      ...(manifest.api ? { api: manifest.api } : {}),
      ...(manifest.verify ? { verify: manifest.verify } : {}),
      ...(manifest.identity ? { identity: manifest.identity } : {}),
      ...(manifest.mcp ? { mcp: manifest.mcp } : {}),
    },
    ...(manifest.mcp ? { categoryRules: manifest.categories } : {}),
    warnings: sorted,
  };
  return { ...base, entry, findings: sorted };
}

/** The credential names a user supplies (DESIGN.md: `api_key`, `webhook_url`, or the manifest's). */
function credentialFields(manifest: Manifest): string[] {
  switch (manifest.auth.kind) {
    case 'api_key':
      return Object.keys(manifest.auth.credentials);
    case 'webhook_url':
      return ['webhook_url'];
    default:
      return [];
  }
}

function pluginTools(
  source: YamlSource,
  manifest: Manifest,
  registry: PluginRegistry,
  findings: Finding[],
): ToolDraft[] {
  const declaration = manifest.plugin === undefined ? undefined : registry.declaration(manifest.plugin);
  return (declaration?.tools ?? []).flatMap((tool): ToolDraft[] => {
    const problems = [
      ['inputSchema', tool.inputSchema],
      ['outputSchema', tool.outputSchema],
    ] as const;
    for (const [key, schema] of problems) {
      const problem = schema && toolSchemaProblem(schema);
      if (problem) {
        findings.push(
          source.finding(
            'TG_MANIFEST_BAD_SCHEMA',
            ['plugin'],
            `plugin tool ${tool.name}: ${key} ${problem}; fix the plugin`,
          ),
        );
        return [];
      }
    }
    return [
      {
        tool: {
          name: tool.name,
          provider: manifest.id,
          source: `plugin:${tool.name}`,
          ...(tool.title !== undefined ? { title: tool.title } : {}),
          description: tool.description,
          inputSchema: tool.inputSchema,
          ...(tool.outputSchema ? { outputSchema: tool.outputSchema } : {}),
          annotations: tool.annotations ?? {},
        },
        subject: { name: tool.name },
      },
    ];
  });
}

/** Names written by hand (overrides, inline and plugin tools) follow the rule and differ. */
function checkToolNames(source: YamlSource, providerId: string, drafts: readonly ToolDraft[]): Finding[] {
  const prefix = toolPrefix(providerId);
  const findings: Finding[] = [];
  const seen = new Map<string, string>();
  for (const draft of drafts) {
    const { name } = draft.tool;
    const at = draft.namedAt ?? ['plugin'];
    if (!TOOL_NAME_PATTERN.test(name) || !name.startsWith(prefix) || name === prefix) {
      findings.push(
        source.finding(
          'TG_MANIFEST_BAD_TOOL_NAME',
          at,
          `"${name}" must start with "${prefix}" and match ${TOOL_NAME_PATTERN.source}`,
        ),
      );
    }
    const normalised = normaliseName(name);
    const other = seen.get(normalised);
    if (other !== undefined) {
      findings.push(
        source.finding(
          'TG_MANIFEST_DUPLICATE_TOOL',
          at,
          `"${name}" clashes with the tool "${other}"; rename one`,
        ),
      );
    } else {
      seen.set(normalised, name);
    }
  }
  return findings;
}
