import { Lru } from '../lru.js';

/** Templates kept split per variable syntax: the manifests' and documents' own, a bounded number. */
const TEMPLATES_KEPT = 2_000;

/**
 * A text with variables (`{owner}` in an OpenAPI path, `${api_key}` in a credential format), split
 * once into its literal parts and the variable names between them. Filling it is what
 * `text.replace(variable, (_, name) => value(name))` gives, without a regular expression run and a
 * callback per call: with the header names below, about 10k instructions of a tools/call
 * (scripts/bench/instructions.ts).
 */
export class Template {
  private constructor(
    private readonly literals: readonly string[],
    /** The variables' names, in order of appearance (a name may repeat). */
    readonly names: readonly string[],
  ) {}

  private static readonly kept = new Map<RegExp, Lru<string, Template>>();

  /** `text` split at the matches of `variable`, a global pattern whose first group is the name. */
  static of(text: string, variable: RegExp): Template {
    let kept = Template.kept.get(variable);
    if (kept === undefined) Template.kept.set(variable, (kept = new Lru(TEMPLATES_KEPT)));
    let template = kept.get(text);
    if (template === undefined) {
      const literals: string[] = [];
      const names: string[] = [];
      let from = 0;
      for (const match of text.matchAll(variable)) {
        literals.push(text.slice(from, match.index));
        names.push(match[1] ?? '');
        from = match.index + match[0].length;
      }
      literals.push(text.slice(from));
      kept.set(text, (template = new Template(literals, names)));
    }
    return template;
  }

  /** The text with each variable replaced by `value(name)`, called left to right. */
  fill(value: (name: string) => string): string {
    let out = this.literals[0]!;
    for (let i = 0; i < this.names.length; i++) out += value(this.names[i]!) + this.literals[i + 1]!;
    return out;
  }
}

const lowerNames = new Lru<string, string>(TEMPLATES_KEPT);

/**
 * A header name in lower case, the same string each time for the same name: a name lower-cased
 * per call is a new string, which V8 must look up in its string table every time it is stored as
 * a property name.
 */
export function lowerHeaderName(name: string): string {
  let lower = lowerNames.get(name);
  if (lower === undefined) lowerNames.set(name, (lower = name.toLowerCase()));
  return lower;
}
