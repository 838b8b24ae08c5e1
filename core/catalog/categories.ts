/**
 * Every tool falls in exactly one category. A tool listed by name belongs to that category (listing
 * it in two is an error); any other tool goes to the first category, in manifest order, with a
 * `match` selector selecting it; a tool left over is an error.
 */
import type { CategorySpec } from './manifest-schema.js';
import { selectorMatches, type SelectorSubject } from './openapi/select.js';
import type { ToolDraft } from './tool-draft.js';
import type { Category, CompiledTool, Finding } from './types.js';
import type { YamlSource } from './yaml-source.js';

export function assignCategories(
  source: YamlSource,
  specs: readonly CategorySpec[],
  drafts: readonly ToolDraft[],
): { categories: Category[]; tools: CompiledTool[]; findings: Finding[] } {
  const findings: Finding[] = [];
  const byName = new Map(drafts.map((d) => [d.tool.name, d]));
  const assigned = new Map<string, string>();

  findings.push(...duplicateCategories(source, specs));
  specs.forEach((spec, i) => {
    (spec.tools ?? []).forEach((name, j) => {
      const at = ['categories', i, 'tools', j];
      const owner = assigned.get(name);
      if (!byName.has(name)) {
        findings.push(
          source.finding(
            'TG_MANIFEST_UNKNOWN_TOOL',
            at,
            `no tool of this provider is named "${name}"; check the name`,
          ),
        );
      } else if (owner !== undefined) {
        findings.push(
          source.finding(
            'TG_MANIFEST_TOOL_IN_TWO_CATEGORIES',
            at,
            `"${name}" is already listed in category "${owner}"; keep it in one`,
          ),
        );
      } else {
        assigned.set(name, spec.id);
      }
    });
  });

  specs.forEach((spec, i) => {
    (spec.match ?? []).forEach((selector, j) => {
      const selected = drafts.filter((d) => selectorMatches(selector, subjectOf(d)));
      if (selected.length === 0) {
        findings.push(
          source.finding(
            'TG_MANIFEST_SELECTOR_UNMATCHED',
            ['categories', i, 'match', j],
            'matches no tool of this provider; fix the selector or remove it',
          ),
        );
      }
      for (const draft of selected)
        if (!assigned.has(draft.tool.name)) assigned.set(draft.tool.name, spec.id);
    });
  });

  const left = drafts
    .map((d) => d.tool.name)
    .filter((name) => !assigned.has(name))
    .sort();
  if (left.length > 0) {
    const shown = left.slice(0, 10).join(', ') + (left.length > 10 ? ` and ${left.length - 10} more` : '');
    findings.push(
      source.finding(
        'TG_MANIFEST_UNCATEGORIZED',
        ['categories'],
        `tools in no category: ${shown}; list them under a category's tools or match`,
      ),
    );
  }

  const tools = drafts
    .filter((d) => assigned.has(d.tool.name))
    .map((d): CompiledTool => ({ ...d.tool, category: assigned.get(d.tool.name) ?? '' }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const categories: Category[] = [];
  specs.forEach((spec, i) => {
    if (specs.findIndex((s) => s.id === spec.id) !== i) return;
    const members = tools.filter((t) => t.category === spec.id).map((t) => t.name);
    if (members.length === 0) {
      findings.push(
        source.finding(
          'TG_MANIFEST_EMPTY_CATEGORY',
          ['categories', i],
          `category "${spec.id}" holds no tool; remove it or give it tools`,
          {
            severity: 'warning',
          },
        ),
      );
    }
    categories.push({
      id: spec.id,
      title: spec.title,
      ...(spec.description !== undefined ? { description: spec.description } : {}),
      tools: members,
    });
  });
  return { categories, tools, findings };
}

/** What selectors match a draft against: its subject and its read-only hint. */
function subjectOf(draft: ToolDraft): SelectorSubject {
  return { ...draft.subject, readOnly: draft.tool.annotations.readOnlyHint ?? false };
}

function duplicateCategories(source: YamlSource, specs: readonly CategorySpec[]): Finding[] {
  const seen = new Set<string>();
  return specs.flatMap((spec, i) => {
    const twice = seen.has(spec.id);
    seen.add(spec.id);
    return twice
      ? [
          source.finding(
            'TG_MANIFEST_DUPLICATE_CATEGORY',
            ['categories', i, 'id'],
            `category "${spec.id}" is defined twice; rename one`,
          ),
        ]
      : [];
  });
}

/**
 * The categories of a provider whose tools are listed later, per connection (an upstream MCP
 * server): empty, in manifest order; only what the manifest alone says is checked.
 */
export function dynamicCategories(
  source: YamlSource,
  specs: readonly CategorySpec[],
): { categories: Category[]; findings: Finding[] } {
  const findings = duplicateCategories(source, specs);
  const categories = specs
    .filter((spec, i) => specs.findIndex((s) => s.id === spec.id) === i)
    .map((spec) => ({
      id: spec.id,
      title: spec.title,
      ...(spec.description !== undefined ? { description: spec.description } : {}),
      tools: [],
    }));
  return { categories, findings };
}

/**
 * The category of a tool listed at run time (an upstream MCP server's): the one listing its name,
 * else the first whose `match` selects it, else the last (the catch-all).
 */
export function categoryOf(
  specs: readonly CategorySpec[],
  subject: { name: string; readOnly: boolean },
): string {
  const listed = specs.find((spec) => spec.tools?.includes(subject.name));
  const matched = listed ?? specs.find((spec) => spec.match?.some((s) => selectorMatches(s, subject)));
  return (matched ?? specs[specs.length - 1])?.id ?? '';
}
