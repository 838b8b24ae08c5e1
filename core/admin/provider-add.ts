/**
 * `toolgate provider add`: reads an OpenAPI document (a file, or a URL fetched through the
 * SSRF-safe outbound client with size and time limits), drafts a manifest for it
 * (core/catalog/draft), writes the manifest and the document (or the curated subset `--operations`
 * picks) into the manifests directory, and compiles the result as `toolgate catalog validate` does.
 */
import { randomBytes } from 'node:crypto';
import { access, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import type { Config } from '../config.js';
import { formatFindings, hasErrors, type CompiledTool, type Finding } from '../catalog/index.js';
import { draftManifest, type ManifestDraft, type ReviewSection } from '../catalog/draft/manifest.js';
import { parseSelectors, selectOperations, selectorText, subsetDocument } from '../catalog/draft/subset.js';
import { RESERVED_PROVIDER_IDS } from '../catalog/manifest-schema.js';
import { listOperations, loadDocument, type OpenApiDocument } from '../catalog/openapi/document.js';
import type { PluginRegistry } from '../catalog/plugins/registry.js';
import { buildProvider } from '../catalog/provider.js';
import { OutboundClient, OutboundError } from '../upstream/outbound.js';

/** The largest document fetched (GitHub's full description is 13 MB). */
const MAX_DOCUMENT_BYTES = 32 * 1024 * 1024;
/** The deadline of fetching a document, redirects and body included. */
const FETCH_TIMEOUT_MS = 60_000;

export interface ProviderAddOptions {
  config: Config;
  registry: PluginRegistry;
  /** A file path or an http(s) URL. */
  openapi: string;
  id: string;
  /** Selectors (subset.ts syntax); absent: every operation, and the document as read. */
  operations?: string;
  manifestsDir: string;
  /** Overwrite an existing manifest and document. */
  force: boolean;
}

export interface ProviderAddResult {
  manifestFile: string;
  documentFile: string;
  selected: number;
  total: number;
  subset: boolean;
  tools: number;
  categories: number;
  findings: Finding[];
  review: ReviewSection[];
}

/** Items of one review section printed; a document of a thousand operations would drown the rest. */
const MAX_ITEMS = 20;

/** Bad input; the message says what to do. */
export class ProviderAddError extends Error {}

const PROVIDER_ID = /^[a-z][a-z0-9-]{1,30}$/;

function checkProviderId(id: string): void {
  if (!PROVIDER_ID.test(id))
    throw new ProviderAddError(
      `--id "${id}" is not a provider id: use 2-31 characters of a-z, 0-9 and -, starting with a letter (e.g. acme-crm); it names the manifest file and prefixes the tool names`,
    );
  if ((RESERVED_PROVIDER_IDS as readonly string[]).includes(id))
    throw new ProviderAddError(
      `--id "${id}" is reserved (${RESERVED_PROVIDER_IDS.join(', ')} name system tools or the gateway); choose another, e.g. ${id}-api`,
    );
}

/** A URL as shown in messages and the manifest: without its query, which may carry a token. */
function shownUrl(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

async function fetchDocument(config: Config, url: URL): Promise<Buffer> {
  const client = new OutboundClient({
    allowPrivateNetwork: config.allowPrivateNetwork,
    timeoutMs: FETCH_TIMEOUT_MS,
    maxResponseBytes: MAX_DOCUMENT_BYTES,
    maxRedirects: 5,
  });
  try {
    const response = await client.send({
      method: 'GET',
      url: url.href,
      headers: { accept: 'application/json, application/yaml, text/yaml, */*' },
    });
    if (response.status < 200 || response.status > 299)
      throw new ProviderAddError(
        `${shownUrl(url)} answered HTTP ${response.status}; check the URL, or download the document and pass its file`,
      );
    if (response.truncated)
      throw new ProviderAddError(
        `${shownUrl(url)} is larger than ${MAX_DOCUMENT_BYTES / 1024 / 1024} MB; download it and pass the file`,
      );
    return response.body;
  } catch (error) {
    if (error instanceof OutboundError)
      throw new ProviderAddError(`could not fetch ${shownUrl(url)}: ${error.message}`);
    throw error;
  } finally {
    await client.close();
  }
}

async function readSource(
  config: Config,
  source: string,
): Promise<{ bytes: Buffer; shown: string; url?: URL }> {
  if (/^https?:\/\//i.test(source)) {
    let url: URL;
    try {
      url = new URL(source);
    } catch {
      throw new ProviderAddError(`--openapi "${source}" is not a valid URL`);
    }
    return { bytes: await fetchDocument(config, url), shown: shownUrl(url), url };
  }
  try {
    return { bytes: await readFile(source), shown: source };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ProviderAddError(
      code === 'ENOENT'
        ? `${source} does not exist; give the path of an OpenAPI document (JSON or YAML) or its URL`
        : `cannot read ${source} (${code ?? String(error)})`,
    );
  }
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}

/** Writes through a temporary name the catalog ignores, so a watching gateway never reads half a file. */
async function writeAtomically(file: string, content: string | Buffer): Promise<void> {
  const temporary = `${file}.${randomBytes(4).toString('hex')}.tmp`;
  await writeFile(temporary, content);
  await rename(temporary, file);
}

/** What to review in the compiled tools: descriptions that say little, names the rules changed. */
function toolSections(thin: ManifestDraft['thin'], tools: readonly CompiledTool[]): ReviewSection[] {
  const names = new Map(tools.map((t) => [t.source, t.name]));
  const descriptions = thin.map(({ key, why }) => {
    const name = names.get(key);
    return `${name === undefined ? key : `${name} (${key})`}: ${why}; write one under openapi > overrides > "${key}" > description`;
  });
  const taken = new Set(tools.map((t) => t.name));
  const renamed = tools.flatMap((tool) => {
    // names.ts rule 4: cut to 41 characters (less a trailing _) and a 6-hex-digit hash.
    if (tool.name.length >= 47 && /_[0-9a-f]{6}$/.test(tool.name))
      return [
        `${tool.name} (${tool.source}) was cut to 48 characters; give a shorter one under openapi > overrides > "${tool.source}" > name`,
      ];
    const base = /^(.*)_\d+$/.exec(tool.name)?.[1];
    if (base !== undefined && taken.has(base))
      return [
        `${tool.name} (${tool.source}) took a suffix: another operation derives ${base}; name one of them under openapi > overrides`,
      ];
    return [];
  });
  return [
    { title: 'Descriptions an agent needs', items: descriptions },
    { title: 'Tool names', items: renamed },
  ];
}

export async function addProvider(options: ProviderAddOptions): Promise<ProviderAddResult> {
  const { id } = options;
  checkProviderId(id);
  const dir = resolve(options.manifestsDir);
  const isDirectory = await stat(dir).then(
    (found) => found.isDirectory(),
    () => false,
  );
  if (!isDirectory)
    throw new ProviderAddError(
      `the manifests directory ${dir} does not exist; create it, or pass --manifests DIR`,
    );
  const selectors = options.operations === undefined ? undefined : parseSelectors(options.operations);

  const manifestFile = join(dir, `${id}.yaml`);
  const refuseExisting = async (files: string[]): Promise<void> => {
    if (options.force) return;
    for (const file of files)
      if (await exists(file))
        throw new ProviderAddError(`${file} exists; pass --force to overwrite it, or choose another --id`);
  };
  await refuseExisting([manifestFile, join(dir, `${id}.yml`)]);

  const { bytes, shown, url } = await readSource(options.config, options.openapi);
  const json = /^\s*[{[]/.test(bytes.subarray(0, 64).toString('utf8'));
  const documentName = `${id}.openapi.${json ? 'json' : 'yaml'}`;
  const documentFile = join(dir, documentName);
  await refuseExisting([documentFile]);

  let doc: OpenApiDocument;
  try {
    doc = await loadDocument(documentFile, bytes);
  } catch (error) {
    throw new ProviderAddError(
      `${shown} is not an OpenAPI document (2.0, 3.0 or 3.1): ${(error instanceof Error ? error.message : String(error)).split('\n', 1)[0]!.replace(documentFile, 'it')}`,
    );
  }
  const operations = listOperations(doc);
  if (operations.length === 0) throw new ProviderAddError(`${shown} declares no operations under paths`);
  let selected = operations;
  if (selectors !== undefined) {
    const picked = selectOperations(operations, selectors);
    const tags = [...new Set(operations.flatMap((op) => op.tags))];
    const hint = `(${operations.length} operations${tags.length > 0 ? `; tags: ${tags.slice(0, 10).join(', ')}${tags.length > 10 ? ', ...' : ''}` : ''})`;
    if (picked.selected.length === 0)
      throw new ProviderAddError(`--operations matched no operation of ${shown} ${hint}`);
    if (picked.unmatched.length > 0)
      throw new ProviderAddError(
        `--operations selector ${picked.unmatched.map((s) => `"${selectorText(s)}"`).join(', ')} matches no operation of ${shown} ${hint}; fix or drop it`,
      );
    selected = picked.selected;
  }

  const draft = draftManifest({
    id,
    doc,
    selected,
    documentFile: `./${documentName}`,
    source: shown,
    ...(url !== undefined ? { sourceUrl: url.href } : {}),
    ...(selectors !== undefined ? { selectors } : {}),
  });
  let document: string | Buffer = bytes;
  if (selectors !== undefined) {
    const subset = subsetDocument(doc, selected);
    document = json
      ? `${JSON.stringify(subset, null, 2)}\n`
      : stringify(subset, { aliasDuplicateObjects: false, lineWidth: 0 });
  }
  // The document first: a gateway watching the directory then finds it when the manifest appears.
  await writeAtomically(documentFile, document);
  await writeAtomically(manifestFile, draft.text);

  const build = await buildProvider(manifestFile, options.registry);
  const tools = build.entry?.tools ?? [];
  const review = [
    ...draft.review,
    ...toolSections(draft.thin, tools),
    { title: 'Fields to fill or check', items: draft.fill },
  ];
  return {
    manifestFile,
    documentFile,
    selected: selected.length,
    total: operations.length,
    subset: selectors !== undefined,
    tools: tools.length,
    categories: build.entry?.categories.length ?? 0,
    findings: build.findings,
    review,
  };
}

function count(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** What the command prints: what was written, the validation, and the review list. */
export function formatProviderAdd(result: ProviderAddResult): string {
  const errors = result.findings.filter((f) => f.severity === 'error').length;
  const lines = [
    `Wrote ${result.manifestFile} and ${result.documentFile} (${result.subset ? `the ${result.selected} selected of ${result.total} operations and what they reference` : `all ${result.total} operations`}).`,
    `catalog validate: ${count(result.tools, 'tool')} in ${count(result.categories, 'category', 'categories')}, ${errors} error(s), ${result.findings.length - errors} warning(s).`,
    '',
    'Review by hand before it ships:',
  ];
  for (const section of result.review) {
    if (section.items.length === 0) continue;
    const shown = section.items.slice(0, MAX_ITEMS);
    lines.push(`${section.title}:`, ...shown.map((item) => `  - ${item}`));
    if (section.items.length > shown.length)
      lines.push(`  - ... and ${section.items.length - shown.length} more of the same kind`);
  }
  if (result.findings.length > 0) lines.push('Findings:', formatFindings(result.findings));
  lines.push(
    '',
    hasErrors(result.findings)
      ? `The manifest does not validate: fix the errors above in ${result.manifestFile}, then run \`toolgate catalog validate\`.`
      : 'A running gateway loads the new provider by itself (hot reload); check it with `toolgate catalog validate`.',
  );
  return `${lines.join('\n')}\n`;
}
