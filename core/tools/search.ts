/**
 * Tool search over a catalog snapshot (issue 15): what `search_tools` answers with, and what the
 * retrieval test and the benchmark measure. BM25+ (minisearch) over each provider tool's name
 * words, title, description, category, provider and parameters, with field boosts, prefix and
 * fuzzy matching, a light stemmer and synonyms. An index is built once per snapshot (a reload
 * brings a new snapshot, hence a new index) and answers in well under a millisecond on the bundled
 * catalog.
 *
 * Synonyms come from two places. A manifest's `synonyms` are the provider's: they are indexed with
 * its tools (a Jira tool that says "issue" is found by "ticket"; a GitHub tool is not, unless
 * GitHub says so too). The built-in groups below are general language and expand every query, at
 * a lower weight than the words the user wrote.
 */
import MiniSearch from 'minisearch';
import { toolPrefix } from '../catalog/openapi/names.js';
import type { CatalogSnapshot, Category, CompiledTool, JsonSchema, ProviderEntry } from '../catalog/types.js';

export interface SearchHit {
  tool: CompiledTool;
  provider: ProviderEntry;
  score: number;
}

export interface SearchOptions {
  /** Only tools of this provider id. */
  provider?: string;
  /** Only tools of a category with this id or title (any case). */
  category?: string;
  /** At most this many hits (default 8). */
  limit?: number;
  /**
   * Only tools this lets through (the caller's tool policy, tools/policy.ts); a provider none of
   * whose tools it lets through is, to the filters, not in the catalog.
   */
  shows?: (tool: CompiledTool) => boolean;
}

/** A search filter naming no provider or category of the catalog; the message lists the valid ones. */
export class SearchFilterError extends Error {
  override name = 'SearchFilterError';
}

export const DEFAULT_LIMIT = 8;

/** Words people use for one another whatever the provider, added to every query that has one. */
export const BUILT_IN_SYNONYMS: readonly (readonly string[])[] = [
  ['email', 'mail', 'message'],
  ['issue', 'ticket', 'bug'],
  ['dm', 'direct message'],
  ['meeting', 'event', 'appointment'],
  ['create', 'add', 'new', 'make'],
  ['delete', 'remove'],
  ['update', 'edit', 'change', 'modify'],
  ['find', 'search', 'look up', 'lookup'],
  ['get', 'fetch', 'read', 'show', 'retrieve'],
  ['send', 'post'],
  ['person', 'people', 'user', 'member'],
  ['file', 'document', 'doc'],
  ['folder', 'directory'],
  ['repo', 'repository'],
  ['pr', 'pull request'],
  ['sms', 'text message'],
  ['customer', 'client'],
  ['company', 'organization', 'organisation'],
  ['task', 'todo', 'to-do'],
  ['label', 'tag'],
  ['invoice', 'bill'],
];

// Field boosts: the tool's name, title and provider say most about what it does, its parameters'
// descriptions least (they say what a tool takes, not what it is for). A provider's own synonyms
// count double: the manifest's author wrote them for exactly these requests. A provider's own
// description is not indexed: it matches all of the provider's tools alike, and with it recall fell
// and a search over 2,000 tools took a third longer.
const FIELDS = {
  name: 3,
  title: 2,
  category: 1.5,
  provider: 3,
  description: 1,
  synonyms: 2,
  params: 0.6,
  paramText: 0.2,
} as const;
type Field = keyof typeof FIELDS;

/** How much a word a built-in synonym brings in counts against a word the user wrote. */
const SYNONYM_WEIGHT = 0.3;

/** Score factor of the tools of a provider the query names ("… in asana"). */
const NAMED_PROVIDER_BOOST = 1.5;

// Words that carry no meaning for choosing a tool; dropped from documents and queries alike.
const STOP_WORDS = new Set(
  (
    'a an the to of for in on at by with from and or is are be been it its this that these those my me ' +
    'i you your we our us they them their please can could would should will want need how do does ' +
    'what which who whom some any into as about was were has have had so then than there here via per'
  ).split(' '),
);

/**
 * Light stemming, the same for documents and queries, so that the forms of a word meet: plurals
 * (`issues`, `replies`, `addresses`), `-ing` and `-ed` (`sending`, `created`), and a final `e`
 * (`create` and `created` both become `creat`). Coarser than Porter, on purpose: tool texts are
 * short, and a missed match costs more than a loose one.
 */
export function stem(word: string): string {
  if (word.length < 3 || /\d/.test(word)) return word;
  let w = word;
  if (w.length > 4 && /ie[sd]$/.test(w)) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  const suffix = /(ing|ed)$/.exec(w)?.[0];
  if (suffix && w.length - suffix.length >= 3 && /[aeiouy]/.test(w.slice(0, -suffix.length))) {
    w = w.slice(0, -suffix.length);
    if (/([b-df-hj-km-np-tv-xz])\1$/.test(w) && !/(ll|ss|zz)$/.test(w)) w = w.slice(0, -1);
  }
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

/**
 * Text to search terms: words split at case changes and non-letters (`PRs` stays one word),
 * accents dropped, lower-cased, stop words and single letters out, stemmed.
 */
export function terms(text: string): string[] {
  return text
    .replace(/\b([A-Z]+)s\b/g, (_, acronym: string) => `${acronym.toLowerCase()}s`)
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((word) => word.length > 1 && !STOP_WORDS.has(word))
    .map(stem);
}

/** Whether a category answers to `wanted`: its id, or its title in any case. */
export function categoryMatches(category: Category, wanted: string): boolean {
  return category.id === wanted || category.title.toLowerCase() === wanted.toLowerCase();
}

/** Groups of synonyms as term sequences, found in a text by their first term. */
class Synonyms {
  private readonly byFirst = new Map<string, { phrase: string[]; group: string[][] }[]>();

  constructor(groups: Iterable<readonly string[]>) {
    for (const words of groups) {
      const group = words.map(terms).filter((phrase) => phrase.length > 0);
      for (const phrase of group) {
        const entries = this.byFirst.get(phrase[0]!) ?? [];
        entries.push({ phrase, group });
        this.byFirst.set(phrase[0]!, entries);
      }
    }
  }

  /** The terms of every group one of whose phrases occurs in `text`, except `text`'s own terms. */
  related(text: readonly string[]): string[] {
    const own = new Set(text);
    const added = new Set<string>();
    text.forEach((term, at) => {
      for (const { phrase, group } of this.byFirst.get(term) ?? []) {
        if (!phrase.every((word, i) => text[at + i] === word)) continue;
        for (const other of group) for (const word of other) if (!own.has(word)) added.add(word);
      }
    });
    return [...added];
  }
}

type Entry = { tool: CompiledTool; provider: ProviderEntry };

/** One tool as the index sees it: a text per field (`synonyms` already as terms). */
type ToolDocument = { id: number } & Record<Field, string>;

/** Parameter names and descriptions, two levels deep (an object argument's own fields count). */
function parameters(schema: JsonSchema, nested = false): { names: string[]; text: string[] } {
  const names: string[] = [];
  const text: string[] = [];
  const properties = schema.properties;
  if (typeof properties !== 'object' || properties === null) return { names, text };
  for (const [name, value] of Object.entries(properties as Record<string, unknown>)) {
    names.push(name);
    if (typeof value !== 'object' || value === null) continue;
    const property = value as JsonSchema;
    if (typeof property.description === 'string') text.push(property.description);
    if (!nested) {
      const inner = parameters(property, true);
      names.push(...inner.names);
      text.push(...inner.text);
    }
  }
  return { names, text };
}

/** A provider's id and name, lower-cased first so that "SendGrid" stays one word, not "send grid". */
function providerWords(provider: ProviderEntry): string {
  return `${provider.id} ${provider.displayName}`.toLowerCase();
}

function documentOf(id: number, { tool, provider }: Entry, synonyms: Synonyms): ToolDocument {
  const category = provider.categories.find((c) => c.id === tool.category);
  const name = tool.name.slice(toolPrefix(provider.id).length).replace(/_/g, ' ');
  const params = parameters(tool.inputSchema);
  const said = terms([name, tool.title ?? '', tool.description, category?.title ?? ''].join(' '));
  return {
    id,
    name,
    title: tool.title ?? '',
    category: category ? `${category.id} ${category.title}` : tool.category,
    provider: providerWords(provider),
    description: tool.description,
    synonyms: synonyms.related(said).join(' '),
    params: params.names.join(' '),
    paramText: params.text.join(' '),
  };
}

/**
 * The words that name each provider and no more than one other ("slack" names Slack and Slack
 * (incoming webhook); "google" names three providers and so none).
 */
function providerNames(snapshot: CatalogSnapshot): Map<string, string[]> {
  const words = new Map(
    [...snapshot.providers.values()].map((p) => [p.id, [...new Set(terms(providerWords(p)))]]),
  );
  const uses = new Map<string, number>();
  for (const list of words.values()) for (const word of list) uses.set(word, (uses.get(word) ?? 0) + 1);
  for (const [id, list] of words)
    words.set(
      id,
      list.filter((word) => uses.get(word)! <= 2),
    );
  return words;
}

const indexes = new WeakMap<CatalogSnapshot, ToolIndex>();

/** The search index of one catalog snapshot. */
export class ToolIndex {
  private readonly entries: Entry[] = [];
  private readonly engine: MiniSearch<ToolDocument>;
  private readonly synonyms = new Synonyms(BUILT_IN_SYNONYMS);
  private readonly names: Map<string, string[]>;

  /** The index of a catalog snapshot, built once per snapshot (cached per snapshot object). */
  static of(snapshot: CatalogSnapshot): ToolIndex {
    let index = indexes.get(snapshot);
    if (index === undefined) {
      index = new ToolIndex(snapshot);
      indexes.set(snapshot, index);
    }
    return index;
  }

  private constructor(private readonly snapshot: CatalogSnapshot) {
    this.engine = new MiniSearch<ToolDocument>({
      fields: Object.keys(FIELDS),
      // Terms are made here, whole fields at a time (`synonyms` holds terms already).
      tokenize: (text, field) => (field === 'synonyms' ? text.split(' ') : terms(text)),
      processTerm: (term) => term,
    });
    const documents: ToolDocument[] = [];
    for (const provider of snapshot.providers.values()) {
      const own = new Synonyms(provider.synonyms ?? []);
      for (const tool of provider.tools) {
        const entry = { tool, provider };
        documents.push(documentOf(this.entries.length, entry, own));
        this.entries.push(entry);
      }
    }
    this.engine.addAll(documents);
    this.names = providerNames(snapshot);
  }

  /**
   * The tools that best match `query`, best first. Throws SearchFilterError when
   * `provider` or `category` names nothing in the catalog.
   */
  search(query: string, options: SearchOptions = {}): SearchHit[] {
    const wanted = this.filter(options);
    const own = [...new Set(terms(query))];
    const all = [...own, ...this.synonyms.related(own)];
    if (all.length === 0) return [];
    const named = new Set(
      [...this.names].filter(([, words]) => words.some((w) => own.includes(w))).map(([id]) => id),
    );
    const results = this.engine.search(all.join(' '), {
      boost: FIELDS,
      tokenize: (text) => text.split(' '),
      boostTerm: (_term, i) => (i < own.length ? 1 : SYNONYM_WEIGHT),
      ...(named.size > 0
        ? {
            boostDocument: (id: number) =>
              named.has(this.entries[id]!.provider.id) ? NAMED_PROVIDER_BOOST : 1,
          }
        : {}),
      prefix: (term) => term.length >= 3,
      fuzzy: (term) => (term.length >= 9 ? 2 : term.length >= 5 ? 1 : false),
      weights: { prefix: 0.4, fuzzy: 0.25 },
      ...(wanted ? { filter: (result) => wanted(this.entries[result.id as number]!) } : {}),
    });
    // minisearch sorts by score (a stable sort: equal scores in an order the query and the index
    // fix, so the same search on the same catalog answers the same).
    return results
      .slice(0, options.limit ?? DEFAULT_LIMIT)
      .map((result) => ({ ...this.entries[result.id as number]!, score: result.score }));
  }

  /** The filter `options` ask for, once checked against the catalog (as the caller may see it). */
  private filter(options: SearchOptions): ((entry: Entry) => boolean) | undefined {
    const { provider: providerId, category, shows } = options;
    if (providerId === undefined && category === undefined && shows === undefined) return undefined;
    const seen = [...this.snapshot.providers.values()].filter(
      (p) => shows === undefined || p.tools.some(shows),
    );
    const provider = providerId === undefined ? undefined : seen.find((p) => p.id === providerId);
    if (providerId !== undefined && !provider) {
      throw new SearchFilterError(
        `No provider "${providerId}" in this gateway. Valid providers: ${seen.map((p) => p.id).join(', ')}.`,
      );
    }
    const among = provider ? [provider] : seen;
    if (
      category !== undefined &&
      !among.some((p) => p.categories.some((c) => categoryMatches(c, category)))
    ) {
      const valid = provider
        ? provider.categories.map((c) => `${c.id} (${c.title})`)
        : [...new Set(among.flatMap((p) => p.categories.map((c) => c.id)))].sort();
      throw new SearchFilterError(
        `No category "${category}"${provider ? ` in ${provider.displayName}` : ''}. Valid categories: ${valid.join(', ')}.`,
      );
    }
    return (entry) =>
      (shows === undefined || shows(entry.tool)) &&
      (provider === undefined || entry.provider === provider) &&
      (category === undefined ||
        entry.provider.categories.some((c) => c.id === entry.tool.category && categoryMatches(c, category)));
  }
}
