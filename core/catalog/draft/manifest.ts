/**
 * `toolgate provider add`'s draft: a manifest for an OpenAPI document (auth, base URL, categories,
 * names and descriptions from the document), as YAML text, and what a person must review in it
 * before it ships. Reading the document, writing files and validating them is core/admin's part.
 */
import { Document, isMap, isScalar, visit } from 'yaml';
import { providerSettingName } from '../../config.js';
import type { Manifest, OperationSelectorSpec } from '../manifest-schema.js';
import { compileOpenApiTools } from '../openapi/compile.js';
import { oneLine } from '../openapi/describe.js';
import { isObject, type OpenApiDocument, type OperationRef } from '../openapi/document.js';
import { YamlSource } from '../yaml-source.js';
import { draftAuth, PLACEHOLDER_URL } from './auth.js';
import { draftBaseUrl } from './base-url.js';
import { draftCategories, humanise } from './categories.js';
import { selectorText } from './subset.js';

export interface DraftOptions {
  id: string;
  doc: OpenApiDocument;
  /** The operations that become tools: every one, or those the selectors pick. */
  selected: readonly OperationRef[];
  /** The document's file name, relative to the manifest. */
  documentFile: string;
  /** Where the document came from, as shown in the manifest's header (no secrets). */
  source: string;
  /** The URL it was fetched from, which relative server URLs resolve against. */
  sourceUrl?: string;
  selectors?: readonly OperationSelectorSpec[];
}

/** One heading of the review list and its items. */
export interface ReviewSection {
  title: string;
  items: string[];
}

export interface ManifestDraft {
  manifest: Manifest;
  /** The manifest file's text: the YAML with its editor-schema line and review comments. */
  text: string;
  review: ReviewSection[];
  /** Fields the draft could not fill, or filled from the document in words to check. */
  fill: string[];
  /** Operations whose tool description says little: no summary or description, or a short one. */
  thin: Array<{ key: string; why: string }>;
}

/** Below this many characters, an operation's summary and description tell an agent too little. */
export const MIN_DESCRIPTION = 20;
/** Above this many tools, the review suggests choosing operations. */
const MANY_TOOLS = 60;
const IDENTITY_PATH = /\/(me|user|self|whoami|account|profile|viewer)$/i;

function plain(value: unknown): string {
  return typeof value === 'string' ? oneLine(value.replace(/<[^>]+>/g, ' ')) : '';
}

/** The first sentence of `text` if it fits one manifest line (200 characters). */
function firstSentence(text: string): string | undefined {
  const sentence = /^(.{10,199}?[.!?])(\s|$)/.exec(text)?.[1] ?? text;
  return sentence.length > 0 && sentence.length <= 200 ? sentence : undefined;
}

export function thinDescriptions(selected: readonly OperationRef[]): Array<{ key: string; why: string }> {
  return selected.flatMap((op) => {
    const summary = plain(op.operation.summary);
    const text = `${summary} ${plain(op.operation.description)}`.trim();
    if (text === '')
      return [{ key: op.key, why: `no summary or description (the tool says only "${op.key}.")` }];
    if (text.length < MIN_DESCRIPTION) return [{ key: op.key, why: `only "${text}"` }];
    return [];
  });
}

/** A GET without required parameters that names the caller (/me, /user, ...): a credential check. */
function verifyCandidate(selected: readonly OperationRef[]): OperationRef | undefined {
  return selected.find(
    (op) =>
      op.method === 'GET' &&
      IDENTITY_PATH.test(op.path) &&
      !op.path.includes('{') &&
      !(Array.isArray(op.operation.parameters) ? (op.operation.parameters as unknown[]) : []).some(
        (p) => isObject(p) && p.required === true,
      ),
  );
}

/**
 * The selected operations the compiler turns into tools, so that no category is drafted for
 * operations it skips (all of them when it skips every one: the validation says why).
 */
function compilable(options: DraftOptions): readonly OperationRef[] {
  const spec = {
    file: options.documentFile,
    ...(options.selectors !== undefined ? { operations: { include: [...options.selectors] } } : {}),
  };
  const source = new YamlSource(options.documentFile, '');
  const { drafts } = compileOpenApiTools(source, options.id, spec, options.doc, new Set());
  const keys = new Set(drafts.map((d) => d.tool.source));
  const tools = options.selected.filter((op) => keys.has(op.key));
  return tools.length > 0 ? tools : options.selected;
}

export function draftManifest(options: DraftOptions): ManifestDraft {
  const { id, doc, selected } = options;
  const info = isObject(doc.root.info) ? doc.root.info : {};
  const title = plain(info.title).slice(0, 60) || humanise(id);
  const fill: string[] = [];
  const review: ReviewSection[] = [];

  const summary = firstSentence(plain(info.description));
  fill.push(
    `display_name "${title}" (${plain(info.title) === '' ? 'from the id' : "the document's info.title"}): the provider's name as users know it`,
    summary === undefined
      ? 'description: one line (at most 200 characters) saying what agents can do with the provider'
      : "description (the first sentence of the document's info.description): make it say what agents can do with the provider",
  );
  const docs =
    isObject(doc.root.externalDocs) && typeof doc.root.externalDocs.url === 'string'
      ? doc.root.externalDocs.url
      : '';
  if (!docs.startsWith('https://')) fill.push('docs_url: the API reference (optional)');

  const base = draftBaseUrl(doc, options.sourceUrl);
  const baseSetting = providerSettingName(id, 'BASE_URL');
  if (base.url === undefined) fill.push(`api > base_url: the API's https base URL, base path included`);
  review.push({
    title: 'Base URL',
    items: [
      ...base.notes,
      `Operators point the provider elsewhere (a sandbox, a region, a proxy) with ${baseSetting}.`,
    ],
  });

  const auth = draftAuth(doc, selected, base.url);
  fill.push(...auth.fill);
  if (auth.auth.kind === 'oauth2')
    auth.notes.push(
      `Operators set the OAuth app with ${providerSettingName(id, 'CLIENT_ID')} and ${providerSettingName(id, 'CLIENT_SECRET')}, or \`toolgate oauth-app set ${id} --client-id ...\`.`,
    );
  review.push({ title: 'Auth', items: auth.notes });

  const verify = auth.auth.kind === 'none' ? undefined : verifyCandidate(selected);
  if (auth.auth.kind !== 'none' && verify === undefined)
    fill.push(
      'verify: a cheap call every valid credential may make (e.g. GET /me), so connect_provider checks a credential before storing it; identity: a JSON pointer to the account name in its response',
    );
  else if (verify !== undefined)
    fill.push(`identity: the JSON pointer to the account name in the response of ${verify.key} (optional)`);
  fill.push(
    "limits > note: rate limits agents should know (optional); synonyms: words users say for the provider's own (optional)",
  );

  const categories = draftCategories(doc, compilable(options), id);
  const manifest: Manifest = {
    schema_version: 1,
    id,
    display_name: title,
    description: summary ?? `Tools of the ${title} API.`,
    ...(docs.startsWith('https://') ? { docs_url: docs } : {}),
    auth: auth.auth,
    api: { base_url: base.url ?? PLACEHOLDER_URL },
    ...(verify !== undefined ? { verify: { method: 'GET' as const, path: verify.path } } : {}),
    openapi: { file: options.documentFile },
    categories,
  };

  const thin = thinDescriptions(selected);
  if (selected.length > MANY_TOOLS)
    review.push({
      title: 'Operations',
      items: [
        `${selected.length} operations become tools; agents choose better among the few they need: pick them with --operations, or exclude some under openapi > operations > exclude.`,
      ],
    });
  review.push({
    title: 'Categories',
    items: [
      `${categories.length} categor${categories.length === 1 ? 'y' : 'ies'}: ${categories.map((c) => c.title).join('; ')}. Check their titles and descriptions.`,
    ],
  });

  const selection =
    options.selectors === undefined
      ? ''
      : `with --operations '${options.selectors.map(selectorText).join(';')}'`;
  return {
    manifest,
    text: manifestText(
      manifest,
      [
        ' yaml-language-server: $schema=./manifest.schema.json',
        ` Drafted by \`toolgate provider add\` from ${options.source}`,
        ...(selection === '' ? [] : [` ${selection}`]),
        ' Review it before it ships: see the list the command printed, and CONTRIBUTING.md.',
      ],
      { api: ` ${base.url === undefined ? 'FILL IN. ' : ''}Operators override it with ${baseSetting}.` },
    ),
    review,
    fill,
    thin,
  };
}

/** The manifest as YAML: small maps of scalars in flow style, as the bundled manifests write them. */
function manifestText(manifest: Manifest, header: string[], comments: Record<string, string>): string {
  const yaml = new Document(manifest, { aliasDuplicateObjects: false });
  yaml.commentBefore = header.join('\n');
  const top = yaml.contents;
  if (isMap(top))
    for (const pair of top.items) {
      const comment = isScalar(pair.key) ? comments[String(pair.key.value)] : undefined;
      if (comment !== undefined && isScalar(pair.key)) pair.key.commentBefore = comment;
    }
  const short = (node: unknown): boolean => String(node).length <= 60;
  // Maps first, then the sequences of them.
  visit(yaml, {
    Map(_, map) {
      if (map !== top && map.items.every((p) => isScalar(p.value)) && short(JSON.stringify(map)))
        map.flow = true;
    },
  });
  visit(yaml, {
    Seq(_, seq) {
      if (
        seq.items.every((item) => isScalar(item) || (isMap(item) && item.flow)) &&
        short(JSON.stringify(seq))
      )
        seq.flow = true;
    },
  });
  return yaml.toString({ lineWidth: 0 });
}
