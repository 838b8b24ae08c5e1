/**
 * A provider's JSON answer as the agent is shown it: compact (no whitespace between tokens), each
 * number as the provider wrote it (an id of 19 digits stays exact), keys in the provider's order (an
 * object's integer keys are not moved first), and a string with escapes written as JSON.stringify
 * writes its value (`\u00e9` as `é`: APIs that escape every non-ASCII character stay readable).
 * Text that is not JSON is shown as it came.
 *
 * Compact because a model pays for every token of an answer. Indented by two spaces, the 534
 * response examples of GitHub's OpenAPI description cost 1.20× the tokens of their compact form,
 * 1.37× for those under 500 bytes (o200k_base); laid out as Toolgate once showed answers (two-space
 * indents, containers that fit in 80 columns on one line), 1.19× and 1.32×. Laying them out also
 * cost a tools/call with a ~250-byte answer 6 % of its instructions (scripts/bench/instructions.ts).
 *
 * Compact JSON with no escape to rewrite (what a tools/call of the bench is answered) is shown as it
 * is, after one regular-expression test. Any other text is read token by token: an indented 7 KB
 * answer (GitHub's issue example) in about 5 % fewer instructions than laying it out took.
 */
import { jsonString } from '../json.js';

/** Containers nested deeper than this are not read: the text is shown as it came. */
const MAX_DEPTH = 512;

/**
 * Text that is already what {@link compactJson} would make of it, if it is JSON at all: no JSON
 * whitespace outside strings, and in strings only the escapes JSON.stringify writes itself for a
 * character that has a short one (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`). Each character is
 * matched one way only, so a text that fails does so in linear time.
 */
const AS_IS = /^(?:"[^"\\]*(?:\\["\\bfnrt][^"\\]*)*"|[^"\\ \t\n\r])*$/;
/**
 * Longest text {@link AS_IS} is tried on: the regular expression keeps a backtracking entry per
 * character outside strings, and V8 throws past a few million of them. A longer text is read
 * token by token (and is over the output budget long before).
 */
const AS_IS_MAX = 1 << 20;

const CONTROL = /[\u0000-\u001f]/;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;

/** true, false and null by their first character's code. */
const LITERALS: Readonly<Record<number, string>> = { 0x74: 'true', 0x66: 'false', 0x6e: 'null' };

/** A character code is a digit. */
function digit(code: number): boolean {
  return code >= ZERO && code <= NINE;
}

class Compactor {
  private pos = 0;
  /** Whether the text has no control character, so that a string token ends at the next quote. */
  private readonly plain: boolean;
  /** The first backslash at or after the string token being read; -1: none. */
  private backslash: number;

  constructor(private readonly text: string) {
    this.plain = !CONTROL.test(text);
    this.backslash = text.indexOf('\\');
  }

  /** The code of the character at `pos`; -1 past the end (where charCodeAt's NaN is a float). */
  private at(pos: number): number {
    return pos < this.text.length ? this.text.charCodeAt(pos) : -1;
  }

  /** The text compacted, or undefined when it is not exactly one JSON value (RFC 8259). */
  document(): string | undefined {
    this.space();
    const value = this.value(0);
    if (value === undefined) return undefined;
    this.space();
    return this.pos === this.text.length ? value : undefined;
  }

  /** Skips JSON's whitespace: space, tab, line feed, carriage return. */
  private space(): void {
    let pos = this.pos;
    for (;;) {
      const code = this.at(pos);
      if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) break;
      pos++;
    }
    this.pos = pos;
  }

  private value(depth: number): string | undefined {
    const code = this.at(this.pos);
    if (code === OPEN_OBJECT || code === OPEN_ARRAY)
      return depth < MAX_DEPTH ? this.container(code === OPEN_OBJECT, depth + 1) : undefined;
    if (code === QUOTE) return this.string();
    return this.scalar();
  }

  private container(object: boolean, depth: number): string | undefined {
    const close = object ? CLOSE_OBJECT : CLOSE_ARRAY;
    this.pos++;
    this.space();
    if (this.at(this.pos) === close) {
      this.pos++;
      return object ? '{}' : '[]';
    }
    let out = object ? '{' : '[';
    for (;;) {
      if (object) {
        const key = this.at(this.pos) === QUOTE ? this.string() : undefined;
        if (key === undefined) return undefined;
        this.space();
        if (this.at(this.pos) !== COLON) return undefined;
        this.pos++;
        this.space();
        out += `${key}:`;
      }
      const value = this.value(depth);
      if (value === undefined) return undefined;
      out += value;
      this.space();
      const next = this.at(this.pos);
      this.pos++;
      if (next === close) return out + (object ? '}' : ']');
      if (next !== COMMA) return undefined;
      out += ',';
      this.space();
    }
  }

  /** A string token: as written when it has no escape, else as JSON.stringify writes its value. */
  private string(): string | undefined {
    const text = this.text;
    const start = this.pos;
    let end = this.plain ? text.indexOf('"', start + 1) : -1;
    if (end === -1 || (this.backslash !== -1 && this.backslash < end)) end = this.stringEnd(start);
    if (end === -1) return undefined;
    this.pos = end + 1;
    const token = text.slice(start, end + 1);
    if (this.backslash === -1 || this.backslash > end) return token;
    this.backslash = text.indexOf('\\', end);
    try {
      return jsonString(JSON.parse(token) as string);
    } catch {
      return undefined;
    }
  }

  /**
   * The closing quote of the string token at `start`, read character by character (a text with
   * control characters, which JSON allows only between tokens, or a token with an escape); -1 where
   * no valid token ends. The escaped character is never the closing quote; JSON.parse judges the
   * escape itself.
   */
  private stringEnd(start: number): number {
    let pos = start + 1;
    for (;;) {
      const code = this.at(pos);
      if (code === QUOTE) return pos;
      if (code === BACKSLASH) pos += 2;
      else if (code < 0x20) return -1;
      else pos++;
    }
  }

  /** A number, as written (checked against JSON's grammar), or true, false or null. */
  private scalar(): string | undefined {
    const text = this.text;
    const start = this.pos;
    const literal = LITERALS[this.at(start)];
    if (literal !== undefined) {
      if (!text.startsWith(literal, start)) return undefined;
      this.pos = start + literal.length;
      return literal;
    }
    let pos = start;
    if (this.at(pos) === MINUS) pos++;
    const first = this.at(pos);
    if (first === ZERO) pos++;
    else if (digit(first)) while (digit(this.at(pos))) pos++;
    else return undefined;
    if (this.at(pos) === DOT) {
      if (!digit(this.at(++pos))) return undefined;
      while (digit(this.at(pos))) pos++;
    }
    const exponent = this.at(pos);
    if (exponent === 0x65 || exponent === 0x45) {
      const sign = this.at(++pos);
      if (sign === PLUS || sign === MINUS) pos++;
      if (!digit(this.at(pos))) return undefined;
      while (digit(this.at(pos))) pos++;
    }
    this.pos = pos;
    return text.slice(start, pos);
  }
}

/**
 * `text` as the agent is shown it (see above): compact when it is JSON, else as it came (as it
 * also does when it nests deeper than {@link MAX_DEPTH}).
 */
export function compactJson(text: string): string {
  if (text.length <= AS_IS_MAX && AS_IS.test(text)) return text;
  return new Compactor(text).document() ?? text;
}
