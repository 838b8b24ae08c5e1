/**
 * A drafted manifest's categories, from the tags of the selected operations: two to five of them.
 * An operation counts under its first tag. With more tags than that, groups are merged pairwise:
 * first two that share a word ("Pull requests" and "Pull request reviews"), the smallest such pair,
 * else the two smallest. Untagged operations fall into a last catch-all category; with a single
 * group the tools are split into reading and changing ones.
 */
import type { CategorySpec } from '../manifest-schema.js';
import { oneLine } from '../openapi/describe.js';
import { isObject, type OpenApiDocument, type OperationRef } from '../openapi/document.js';
import { snakeCase, toolPrefix } from '../openapi/names.js';

const MAX_CATEGORIES = 5;
const STOP_WORDS = new Set(['a', 'an', 'and', 'api', 'apis', 'for', 'of', 'the', 'to', 'v1', 'v2', 'v3']);

interface Group {
  tags: string[];
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
  const left = new Set(a.tags.flatMap((t) => [...words(t)]));
  return b.tags.some((t) => [...words(t)].some((w) => left.has(w)));
}

/** Merges groups until at most `max` remain. */
function merge(groups: Group[], max: number): Group[] {
  const result = [...groups];
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
    const tags = a.count >= b.count ? [...a.tags, ...b.tags] : [...b.tags, ...a.tags];
    result.splice(j, 1);
    result[i] = { tags, count: a.count + b.count };
  }
  return result.sort((a, b) => b.count - a.count);
}

/**
 * A tag in sentence case: "pull-requests" and "Pull Requests" -> "Pull requests"; acronyms stay
 * ("API Keys" -> "API keys"). `lead` false starts it lower case, for the middle of a title.
 */
export function humanise(tag: string, lead = true): string {
  const words = /\s/.test(tag.trim()) ? oneLine(tag).split(' ') : snakeCase(tag).split('_');
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

export function draftCategories(
  doc: OpenApiDocument,
  selected: readonly OperationRef[],
  providerId: string,
): CategorySpec[] {
  const counts = new Map<string, number>();
  let untagged = 0;
  for (const op of selected) {
    const tag = op.tags[0];
    if (tag === undefined) untagged++;
    else counts.set(tag, (counts.get(tag) ?? 0) + 1);
  }
  const groups = merge(
    [...counts].map(([tag, count]) => ({ tags: [tag], count })),
    untagged > 0 ? MAX_CATEGORIES - 1 : MAX_CATEGORIES,
  );
  const catchAll = { name: `${toolPrefix(providerId)}*` };
  if (groups.length + (untagged > 0 ? 1 : 0) < 2) {
    const reads = (['GET', 'HEAD'] as const).filter((method) => selected.some((op) => op.method === method));
    const readCount = selected.filter((op) => op.method === 'GET' || op.method === 'HEAD').length;
    if (readCount > 0 && readCount < selected.length) {
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
  }
  // An operation with several tags lands in the first category naming one of them: drop groups
  // that end up empty, so that every category holds a tool.
  const claimed = new Map<Group, number>();
  for (const op of selected) {
    const group = groups.find((g) => g.tags.some((t) => op.tags.includes(t)));
    if (group) claimed.set(group, (claimed.get(group) ?? 0) + 1);
  }
  const ids = new Set<string>();
  const uniqueId = (text: string): string => {
    let base = snakeCase(text).slice(0, 36).replace(/_+$/, '');
    if (!/^[a-z]/.test(base)) base = `c_${base}`.slice(0, 36).replace(/_+$/, '');
    let id = base;
    for (let n = 2; ids.has(id); n++) id = `${base}_${n}`;
    ids.add(id);
    return id;
  };
  const categories: CategorySpec[] = groups
    .filter((g) => claimed.has(g))
    .map((g) => {
      const description =
        g.tags.length === 1 ? tagDescription(doc, g.tags[0]!) : `Operations tagged ${g.tags.join(', ')}.`;
      return {
        id: uniqueId(g.tags[0]!),
        title: titleOf(g.tags),
        ...(description !== undefined ? { description } : {}),
        match: g.tags.map((tag) => ({ tag })),
      };
    });
  if (untagged > 0 && categories.length === 0)
    categories.push({ id: uniqueId('operations'), title: 'Operations', match: [catchAll] });
  else if (untagged > 0)
    categories.push({
      id: uniqueId('general'),
      title: 'General',
      description: 'Operations the document does not tag.',
      match: [catchAll],
    });
  return categories;
}
