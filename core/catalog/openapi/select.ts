/**
 * Selectors pick operations (openapi.operations.include/exclude) and tools (categories[].match).
 * A selector matches when every property it gives matches; string properties are globs where `*`
 * matches any run of characters, `/` included.
 */
import type { ToolSelectorSpec } from '../manifest-schema.js';

/** What a selector is matched against; fields a tool lacks (a plugin tool has no path) never match. */
export interface SelectorSubject {
  name?: string;
  operationId?: string;
  tags?: readonly string[];
  method?: string;
  path?: string;
  /** The tool's readOnlyHint (absent: false), for `read_only` selectors. */
  readOnly?: boolean;
}

const compiledGlobs = new Map<string, RegExp>();

export function globMatches(glob: string, text: string): boolean {
  let regex = compiledGlobs.get(glob);
  if (!regex) {
    const body = glob
      .split('*')
      .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*');
    regex = new RegExp(`^${body}$`);
    compiledGlobs.set(glob, regex);
  }
  return regex.test(text);
}

export function selectorMatches(selector: ToolSelectorSpec, subject: SelectorSubject): boolean {
  const glob = (pattern: string | undefined, value: string | undefined) =>
    pattern === undefined || (value !== undefined && globMatches(pattern, value));
  return (
    glob(selector.name, subject.name) &&
    glob(selector.operationId, subject.operationId) &&
    glob(selector.path, subject.path) &&
    (selector.method === undefined || selector.method === subject.method) &&
    (selector.read_only === undefined || selector.read_only === (subject.readOnly ?? false)) &&
    (selector.tag === undefined || (subject.tags ?? []).some((tag) => globMatches(selector.tag ?? '', tag)))
  );
}
