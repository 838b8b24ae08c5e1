/**
 * A parsed YAML file that still knows where each node came from, so every finding points at the
 * offending line and column.
 */
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import type { FindingCode } from './findings.js';
import type { Finding } from './types.js';

export type PathSegment = string | number;

export class YamlSource {
  readonly file: string;
  readonly text: string;
  readonly doc: Document;
  /** Findings of the YAML parser itself (syntax, duplicate keys). */
  readonly findings: Finding[];
  private readonly lines: LineCounter;

  constructor(file: string, text: string) {
    this.file = file;
    this.text = text;
    this.lines = new LineCounter();
    this.doc = parseDocument(text, { lineCounter: this.lines, uniqueKeys: true, prettyErrors: true });
    // Later syntax errors mostly cascade from the first one, so only the first is reported.
    this.findings = this.doc.errors.slice(0, 1).map((error) => {
      const pos = error.linePos?.[0] ?? { line: 1, col: 1 };
      const message = (error.message.split('\n')[0] ?? error.message).replace(
        / at line \d+, column \d+:?$/,
        '',
      );
      return {
        file,
        line: pos.line,
        col: pos.col,
        code: 'TG_MANIFEST_YAML' satisfies FindingCode,
        path: [],
        message: `${message}; fix the YAML syntax`,
        severity: 'error' as const,
      };
    });
  }

  /** The document as plain data. */
  toJS(): unknown {
    return this.doc.toJS({ maxAliasCount: 100 });
  }

  /**
   * Line and column of the node at `path`, or of its deepest existing ancestor. With `key`, the
   * position of the map key naming the last segment (where an unknown key is written).
   */
  position(path: readonly PathSegment[], key = false): { line: number; col: number } {
    let node: unknown = this.doc.contents;
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
    return this.lines.linePos(offset);
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
  return (node as Node | null | undefined)?.range?.[0];
}
