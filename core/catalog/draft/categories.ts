/**
 * A drafted manifest's categories, from the tags of the selected operations: two to five of them.
 * An operation counts under its first tag. With more tags than that, groups are merged pairwise:
 * first two that share a word ("Pull requests" and "Pull request reviews"), the smallest such pair,
 * else the two smallest. Untagged operations fall into a last catch-all category. A document with a
 * single tag (or none) is grouped the same way by resource, the first path segment that is neither a
 * parameter nor a version (`/v1/pets/{id}` -> pets); with a single resource too, the tools are split
 * into reading and changing ones.
 */
import type { CategorySpec, ToolSelectorSpec } from '../manifest-schema.js';
import { oneLine } from '../openapi/describe.js';
import { isObject, type OpenApiDocument, type OperationRef } from '../openapi/document.js';
import { snakeCase, toolPrefix } from '../openapi/names.js';

const MAX_CATEGORIES = 5;
const STOP_WORDS = new Set(['a', 'an', 'and', 'api', 'apis', 'for', 'of', 'the', 'to', 'v1', 'v2', 'v3']);

/** Tags or resources counted together; `names` biggest first. */
interface Group {
  names: string[];
  count: number;
}

/** The words of a tag, singular, without filler: "Pull Requests" -> pull, request. */
function words(tag: string): Set<string> {
  return new Set(
    snakeCase(tag)
      .split('_')
      .filter((w) => w !== '' && !STOP_WORDS.has(w))
      .map((w) => (w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w)),
  );
}

function shareWord(a: Group, b: Group): boolean {
  const left = new Set(a.names.flatMap((t) => [...words(t)]));
  return b.names.some((t) => [...words(t)].some((w) => left.has(w)));
}

/** One group per name of `counts`, merged until at most `max` remain, biggest first. */
function merge(counts: ReadonlyMap<string, number>, max: number): Group[] {
  const result = [...counts].map(([name, count]): Group => ({ names: [name], count }));
  while (result.length > max) {
    let best: [number, number] | undefined;
    let bestCount = Infinity;
    for (const related of [true, false]) {
      for (let i = 0; i < result.length; i++)
        for (let j = i + 1; j < result.length; j++) {
          const count = result[i]!.count + result[j]!.count;
          if (count < bestCount && (!related || shareWord(result[i]!, result[j]!))) {
            best = [i, j];
            bestCount = count;
          }
        }
      if (best) break;
    }
    const [i, j] = best!;
    const [a, b] = [result[i]!, result[j]!];
    const names = a.count >= b.count ? [...a.names, ...b.names] : [...b.names, ...a.names];
    result.splice(j, 1);
    result[i] = { names, count: a.count + b.count };
  }
  return result.sort((a, b) => b.count - a.count);
}

/**
 * A tag in sentence case: "pull-requests" and "Pull Requests" -> "Pull requests"; acronyms stay
 * ("API Keys" -> "API keys"). `lead` false starts it lower case, for the middle of a title.
 */
export function humanise(tag: string, lead = true): string {
  // snake_case only where it keeps something: "用户" stays as written.
  const words =
    /\s/.test(tag.trim()) || snakeCase(tag) === '' ? oneLine(tag).split(' ') : snakeCase(tag).split('_');
  return words
    .map((word, i) => {
      const lower = /^[A-Z][a-z0-9]*$/.test(word) ? word.toLowerCase() : word;
      return i === 0 && lead ? lower.charAt(0).toUpperCase() + lower.slice(1) : lower;
    })
    .join(' ');
}

function titleOf(tags: readonly string[]): string {
  const names = tags.map((t, i) => humanise(t, i === 0));
  if (names.length === 1) return names[0]!;
  if (names.length <= 3) return `${names.slice(0, -1).join(', ')} and ${names.at(-1)!}`;
  return `${names.slice(0, 2).join(', ')} and ${names.length - 2} more`;
}

function tagDescription(doc: OpenApiDocument, tag: string): string | undefined {
  const declared = Array.isArray(doc.root.tags) ? doc.root.tags.filter(isObject) : [];
  const found = declared.find((t) => t.name === tag);
  if (typeof found?.description !== 'string') return undefined;
  const text = oneLine(found.description.replace(/<[^>]+>/g, ' ').replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1'));
  const sentence = /^(.{10,200}?[.!?])(\s|$)/.exec(text)?.[1];
  return sentence ?? (text.length > 0 && text.length <= 200 ? text : undefined);
}

/** Category ids, unique within the manifest. */
function idMaker(): (text: string) => string {
  const ids = new Set<string>();
  return (text) => {
    let base = snakeCase(text).slice(0, 36).replace(/_+$/, '');
    if (!/^[a-z]/.test(base)) base = `c_${base}`.slice(0, 36).replace(/_+$/, '');
    let id = base;
    for (let n = 2; ids.has(id); n++) id = `${base}_${n}`;
    ids.add(id);
    return id;
  };
}

const VERSION_SEGMENT = /^(v\d+(\.\d+)*|api|rest)$/i;

/** `/v1/pets/{id}` -> `/v1/pets`: the path up to its first segment naming a resource. */
function resourceOf(path: string): string | undefined {
  const segments = path.split(/[?#]/, 1)[0]!.split('/');
  const at = segments.findIndex(
    (s, i) => i > 0 && s !== '' && !/^\{.*\}$/.test(s) && !VERSION_SEGMENT.test(s),
  );
  return at < 0 ? undefined : segments.slice(0, at + 1).join('/');
}

/** Counts `selected` by `key`; operations without one are counted apart. */
function countBy(
  selected: readonly OperationRef[],
  key: (op: OperationRef) => string | undefined,
): { counts: Map<string, number>; rest: number } {
  const counts = new Map<string, number>();
  let rest = 0;
  for (const op of selected) {
    const name = key(op);
    if (name === undefined) rest++;
    else counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return { counts, rest };
}

export function draftCategories(
  doc: OpenApiDocument,
  selected: readonly OperationRef[],
  providerId: string,
): CategorySpec[] {
  const catchAll: ToolSelectorSpec = { name: `${toolPrefix(providerId)}*` };
  const uniqueId = idMaker();

  const byTag = countBy(selected, (op) => op.tags[0]);
  const tags = merge(byTag.counts, byTag.rest > 0 ? MAX_CATEGORIES - 1 : MAX_CATEGORIES);
  if (tags.length + (byTag.rest > 0 ? 1 : 0) < 2) {
    const byResource = countBy(selected, (op) => resourceOf(op.path));
    const resources = merge(byResource.counts, byResource.rest > 0 ? MAX_CATEGORIES - 1 : MAX_CATEGORIES);
    if (resources.length + (byResource.rest > 0 ? 1 : 0) >= 2) {
      const categories = resources.map((g): CategorySpec => {
        const last = g.names.map((r) => r.slice(r.lastIndexOf('/') + 1));
        return {
          id: uniqueId(last[0]!),
          title: titleOf(last),
          description: `Operations on ${g.names.join(', ')}.`,
          match: pathSelectors(g.names, selected),
        };
      });
      if (byResource.rest > 0)
        categories.push(general(uniqueId, catchAll, 'Operations on no resource path.'));
      return categories;
    }
    const split = readAndChange(selected, catchAll);
    if (split) return split;
  }

  // An operation with several tags lands in the first category naming one of them: drop groups
  // that end up empty, so that every category holds a tool.
  const claimed = new Set<Group>();
  for (const op of selected) {
    const group = tags.find((g) => g.names.some((t) => op.tags.includes(t)));
    if (group) claimed.add(group);
  }
  const categories = tags
    .filter((g) => claimed.has(g))
    .map((g): CategorySpec => {
      const description =
        g.names.length === 1 ? tagDescription(doc, g.names[0]!) : `Operations tagged ${g.names.join(', ')}.`;
      return {
        id: uniqueId(g.names[0]!),
        title: titleOf(g.names),
        ...(description !== undefined ? { description } : {}),
        match: g.names.map((tag) => ({ tag })),
      };
    });
  if (byTag.rest > 0 && categories.length === 0)
    categories.push({ id: uniqueId('operations'), title: 'Operations', match: [catchAll] });
  else if (byTag.rest > 0)
    categories.push(general(uniqueId, catchAll, 'Operations the document does not tag.'));
  return categories;
}

/** The last, catch-all category. */
function general(
  uniqueId: (text: string) => string,
  catchAll: ToolSelectorSpec,
  description: string,
): CategorySpec {
  return { id: uniqueId('general'), title: 'General', description, match: [catchAll] };
}

/** Path selectors matching exactly the selected operations under `resources`. */
function pathSelectors(resources: readonly string[], selected: readonly OperationRef[]): ToolSelectorSpec[] {
  const globs = new Set<string>();
  for (const op of selected) {
    const resource = resourceOf(op.path);
    if (resource === undefined || !resources.includes(resource)) continue;
    globs.add(
      op.path === resource ? resource : op.path.startsWith(`${resource}/`) ? `${resource}/*` : op.path,
    );
  }
  return [...globs].map((path) => ({ path }));
}

/** Reading tools and the others, when there are both. */
function readAndChange(
  selected: readonly OperationRef[],
  catchAll: ToolSelectorSpec,
): CategorySpec[] | undefined {
  const reads = (['GET', 'HEAD'] as const).filter((method) => selected.some((op) => op.method === method));
  const readCount = selected.filter((op) => op.method === 'GET' || op.method === 'HEAD').length;
  if (readCount === 0 || readCount === selected.length) return undefined;
  return [
    {
      id: 'read',
      title: 'Read',
      description: 'Operations that only read.',
      match: reads.map((method) => ({ method })),
    },
    {
      id: 'change',
      title: 'Create and change',
      description: 'Operations that create, change or delete.',
      match: [catchAll],
    },
  ];
}
