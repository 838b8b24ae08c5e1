/**
 * A parsed YAML file that still knows where each node came from, so every finding points at the
 * offending line and column.
 *
 * Two parsers, one answer. `yaml` is the authority: its syntax errors are the findings, its nodes
 * give the positions. But it is slow from a cold start, which is where a catalog build runs (a
 * fresh build worker): the 60 bundled manifests took ~310 ms of one core through it, against ~60 ms
 * through js-yaml, and loading `yaml` itself ~27 ms. So a manifest is read with js-yaml, under a
 * schema equal to `yaml`'s YAML 1.2 core schema, and `yaml` is loaded and run only when it has
 * something to say: when js-yaml refuses the text (a syntax error, a duplicate key, a tag outside
 * the core schema), when the text uses what the two parsers read differently (a directive,
 * collections or null as keys), when aliases expand it far (`yaml` guards against that), and for
 * the position of a finding. Either way the data is what `yaml` gives
 * (test/unit/catalog/yaml-source.test.ts holds them to it).
 */
import { createRequire } from 'node:module';
import { FAILSAFE_SCHEMA, load, Type } from 'js-yaml';
import type * as Yaml from 'yaml';
import type { FindingCode } from './findings.js';
import type { Finding } from './types.js';

export type PathSegment = string | number;

/** `yaml`, loaded on first need (a healthy manifest has none). */
let yamlModule: typeof Yaml | undefined;
function yaml(): typeof Yaml {
  return (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml);
}

/**
 * A plain scalar of `tag` when it matches one of `readers`' patterns, read by that reader (js-yaml
 * keeps one implicit type per tag, so a tag's several forms are one type).
 */
function coreType(tag: string, readers: ReadonlyArray<[RegExp, (text: string) => unknown]>): Type {
  const reader = (text: string | null) => readers.find(([pattern]) => pattern.test(text ?? ''));
  return new Type(`tag:yaml.org,2002:${tag}`, {
    kind: 'scalar',
    resolve: (text: string | null) => reader(text) !== undefined,
    construct: (text: string | null) => reader(text)![1](text ?? ''),
  });
}

/** `yaml`'s core schema (yaml/dist/schema/core): the same patterns, read the same way. */
const CORE_SCHEMA = FAILSAFE_SCHEMA.extend({
  implicit: [
    coreType('null', [[/^(?:~|[Nn]ull|NULL)?$/, () => null]]),
    coreType('bool', [[/^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, (text) => text[0] === 't' || text[0] === 'T']]),
    coreType('int', [
      [/^0o[0-7]+$/, (text) => parseInt(text.slice(2), 8)],
      [/^[-+]?[0-9]+$/, (text) => parseInt(text, 10)],
      [/^0x[0-9a-fA-F]+$/, (text) => parseInt(text.slice(2), 16)],
    ]),
    coreType('float', [
      [
        /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/,
        (text) => (text.endsWith('N') || text.endsWith('n') ? NaN : text[0] === '-' ? -Infinity : Infinity),
      ],
      [/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/, parseFloat],
      [/^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/, parseFloat],
    ]),
  ],
});

/**
 * What the two parsers read differently, seen in the text: a directive (`%YAML 1.1` changes the
 * schema), an explicit key (`? `), a flow collection or null as a key where a key may start
 * (`[a, b]: c`, `~: d`: their property names are made differently). The patterns over-match
 * (inside a quoted string, say), which only costs the slower parser.
 */
const READ_DIFFERENTLY =
  /^%|(?:^|[\s,[{])\?(?:\s|$)|(?:^[ \t]*(?:-[ \t]+)*|[[{,][ \t]*)(?:[[{][^\n]*[\]}]|~|[Nn]ull|NULL)?[ \t]*:(?:\s|$)/m;

/** An alias (`*name`) may be in the text. */
const ALIAS = /(?:^|[\s,[{])\*/;

/**
 * How many more maps and sequences the document has with its aliases expanded than without, beyond
 * which `yaml` judges it (its own guard, maxAliasCount, is set in other terms).
 */
const ALIAS_GROWTH = 10_000;

/** The document as js-yaml reads it under the core schema; undefined when `yaml` must read it. */
function quickLoad(text: string): { value: unknown } | undefined {
  if (READ_DIFFERENTLY.test(text)) return undefined;
  let value: unknown;
  try {
    // An empty document is null, as `yaml` has it.
    value = load(text, { schema: CORE_SCHEMA }) ?? null;
  } catch {
    return undefined;
  }
  // js-yaml shares an anchored node between its aliases, so the value is small however many
  // times they repeat it; what walks it later (the schema check, a copy) would not be.
  if (ALIAS.test(text) && expandedGrowth(value) > ALIAS_GROWTH) return undefined;
  return { value };
}

/** Maps and sequences of `value` counted once per path to them, minus those counted once each. */
function expandedGrowth(value: unknown): number {
  const sizes = new Map<object, number>();
  const size = (node: unknown): number => {
    if (typeof node !== 'object' || node === null) return 0;
    const known = sizes.get(node);
    if (known !== undefined) return known;
    sizes.set(node, 1); // js-yaml builds no cycles; this would end one
    let total = 1;
    for (const child of Object.values(node)) total += size(child);
    sizes.set(node, total);
    return total;
  };
  return size(value) - sizes.size;
}

interface Tree {
  doc: Yaml.Document;
  lines: Yaml.LineCounter;
}

export class YamlSource {
  readonly file: string;
  readonly text: string;
  /** Findings of the YAML parser itself (syntax, duplicate keys, aliases expanding too far). */
  readonly findings: Finding[];
  /** The document as plain data; undefined when the YAML has an error. */
  private readonly data: unknown;
  /** `yaml`'s reading, made on first need. */
  private parsed: Tree | undefined;

  constructor(file: string, text: string) {
    this.file = file;
    this.text = text;
    const quick = quickLoad(text);
    if (quick) {
      this.data = quick.value;
      this.findings = [];
      return;
    }
    // Later syntax errors mostly cascade from the first one, so only the first is reported.
    const { doc } = this.tree();
    const [error] = doc.errors;
    if (error) {
      const pos = error.linePos?.[0] ?? { line: 1, col: 1 };
      this.findings = [this.syntaxFinding(pos, error.message)];
      return;
    }
    try {
      this.data = doc.toJS({ maxAliasCount: 100 });
      this.findings = [];
    } catch (error) {
      // An alias that expands too far or names no anchor: a finding of this manifest's, not a
      // failure of the whole catalog.
      this.findings = [this.syntaxFinding({ line: 1, col: 1 }, (error as Error).message)];
    }
  }

  /** The document as plain data (not copied: it has one reader, the structure check). */
  toJS(): unknown {
    return this.data;
  }

  private syntaxFinding(pos: { line: number; col: number }, said: string): Finding {
    const message = (said.split('\n')[0] ?? said).replace(/ at line \d+, column \d+:?$/, '');
    return {
      file: this.file,
      line: pos.line,
      col: pos.col,
      code: 'TG_MANIFEST_YAML',
      path: [],
      message: `${message}; fix the YAML syntax`,
      severity: 'error',
    };
  }

  private tree(): Tree {
    if (!this.parsed) {
      const { LineCounter, parseDocument } = yaml();
      const lines = new LineCounter();
      const doc = parseDocument(this.text, { lineCounter: lines, uniqueKeys: true, prettyErrors: true });
      this.parsed = { doc, lines };
    }
    return this.parsed;
  }

  /**
   * Line and column of the node at `path`, or of its deepest existing ancestor. With `key`, the
   * position of the map key naming the last segment (where an unknown key is written).
   */
  position(path: readonly PathSegment[], key = false): { line: number; col: number } {
    const { isMap, isPair, isScalar, isSeq } = yaml();
    const { doc, lines } = this.tree();
    let node: unknown = doc.contents;
    let offset = rangeStart(node) ?? 0;
    for (const [i, segment] of path.entries()) {
      if (isMap(node)) {
        const pair = node.items.find(
          (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(segment),
        );
        if (!pair) break;
        if (key && i === path.length - 1) {
          offset = rangeStart(pair.key) ?? offset;
          break;
        }
        node = pair.value;
      } else if (isSeq(node)) {
        node = node.items[Number(segment)];
      } else {
        break;
      }
      offset = rangeStart(node) ?? offset;
    }
    return lines.linePos(offset);
  }

  /** A finding located at `path` (see `position`). */
  finding(
    code: FindingCode,
    path: readonly PathSegment[],
    message: string,
    options: { severity?: Finding['severity']; key?: boolean } = {},
  ): Finding {
    const { line, col } = this.position(path, options.key ?? false);
    return {
      file: this.file,
      line,
      col,
      code,
      path: path.map(String),
      message,
      severity: options.severity ?? 'error',
    };
  }
}

function rangeStart(node: unknown): number | undefined {
  return (node as Yaml.Node | null | undefined)?.range?.[0];
}
