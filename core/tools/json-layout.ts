/**
 * JSON text laid out for an agent to read: indented by two spaces, except that an object or array
 * whose one-line form fits in {@link INLINE_WIDTH} columns, and holds no container that does not,
 * stays on one line (readable, without the token cost of putting every short array element on its
 * own line).
 *
 * Laid out from the text itself, token by token, rather than parsed to values and written back:
 * parsing a ~300-byte answer was about 15k of a tools/call's ~375k instructions, and writing it
 * back most of the rest of its formatting (scripts/bench/instructions.ts). Reading the tokens also
 * keeps what a round trip through JavaScript values loses: a number is shown as the provider wrote
 * it (an id of 19 digits stays exact), and keys stay in the provider's order (an object's integer
 * keys are not moved first). A string with escapes is shown as JSON.stringify writes it (`\u00e9`
 * as `é`: APIs that escape every non-ASCII character stay readable); any other string is already so.
 */
import { jsonString } from '../json.js';

const INLINE_WIDTH = 80;
/** Containers nested deeper than this are not laid out: the text is shown as it came. */
const MAX_DEPTH = 512;

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

/** A character code is a digit (false past the end, where charCodeAt gives NaN). */
function digit(code: number): boolean {
  return code >= ZERO && code <= NINE;
}

class Layout {
  private pos = 0;
  /** Whether the value last laid out spans several lines (told without searching its text). */
  private multiline = false;

  constructor(private readonly text: string) {}

  /** The text laid out, or undefined when it is not exactly one JSON value (RFC 8259). */
  document(): string | undefined {
    this.space();
    const value = this.value('', 0);
    if (value === undefined) return undefined;
    this.space();
    return this.pos === this.text.length ? value : undefined;
  }

  /** Skips JSON's whitespace: space, tab, line feed, carriage return. */
  private space(): void {
    const text = this.text;
    let pos = this.pos;
    for (;;) {
      const code = text.charCodeAt(pos);
      if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) break;
      pos++;
    }
    this.pos = pos;
  }

  private value(indent: string, depth: number): string | undefined {
    this.multiline = false;
    const code = this.text.charCodeAt(this.pos);
    if (code === OPEN_OBJECT || code === OPEN_ARRAY)
      return depth < MAX_DEPTH ? this.container(code === OPEN_OBJECT, indent, depth + 1) : undefined;
    if (code === QUOTE) return this.string();
    return this.scalar();
  }

  private container(object: boolean, indent: string, depth: number): string | undefined {
    const text = this.text;
    const close = object ? CLOSE_OBJECT : CLOSE_ARRAY;
    this.pos++;
    this.space();
    if (text.charCodeAt(this.pos) === close) {
      this.pos++;
      return object ? '{}' : '[]';
    }
    const inner = `${indent}  `;
    const entries: string[] = [];
    // The one-line form's width, counted as the entries are made: "[" and "]" and ", " between.
    let width = indent.length;
    let multiline = false;
    for (;;) {
      let entry: string | undefined;
      if (object) {
        const key = text.charCodeAt(this.pos) === QUOTE ? this.string() : undefined;
        if (key === undefined) return undefined;
        this.space();
        if (text.charCodeAt(this.pos) !== COLON) return undefined;
        this.pos++;
        this.space();
        const value = this.value(inner, depth);
        if (value === undefined) return undefined;
        entry = `${key}: ${value}`;
      } else {
        entry = this.value(inner, depth);
        if (entry === undefined) return undefined;
      }
      multiline ||= this.multiline;
      width += entry.length + 2;
      entries.push(entry);
      this.space();
      const next = text.charCodeAt(this.pos);
      this.pos++;
      if (next === close) break;
      if (next !== COMMA) return undefined;
      this.space();
    }
    this.multiline = multiline || width > INLINE_WIDTH;
    const [open, end] = object ? ['{', '}'] : ['[', ']'];
    if (this.multiline) return `${open}\n${inner}${entries.join(`,\n${inner}`)}\n${indent}${end}`;
    return `${open}${entries.join(', ')}${end}`;
  }

  /** A string token: as written when it has no escape, else as JSON.stringify writes its value. */
  private string(): string | undefined {
    const text = this.text;
    const start = this.pos;
    let pos = start + 1;
    let escaped = false;
    for (;;) {
      const code = text.charCodeAt(pos);
      if (code === QUOTE) break;
      if (code === BACKSLASH) {
        // The escaped character is never the closing quote; JSON.parse judges the escape below.
        escaped = true;
        pos += 2;
        continue;
      }
      // A control character (or the end of the text): not JSON.
      if (!(code >= 0x20)) return undefined;
      pos++;
    }
    this.pos = pos + 1;
    const token = text.slice(start, pos + 1);
    if (!escaped) return token;
    try {
      return jsonString(JSON.parse(token) as string);
    } catch {
      return undefined;
    }
  }

  /** A number, as written (checked against JSON's grammar), or true, false or null. */
  private scalar(): string | undefined {
    const text = this.text;
    const start = this.pos;
    const literal = LITERALS[text.charCodeAt(start)];
    if (literal !== undefined) {
      if (!text.startsWith(literal, start)) return undefined;
      this.pos = start + literal.length;
      return literal;
    }
    let pos = start;
    if (text.charCodeAt(pos) === MINUS) pos++;
    const first = text.charCodeAt(pos);
    if (first === ZERO) pos++;
    else if (digit(first)) while (digit(text.charCodeAt(pos))) pos++;
    else return undefined;
    if (text.charCodeAt(pos) === DOT) {
      if (!digit(text.charCodeAt(++pos))) return undefined;
      while (digit(text.charCodeAt(pos))) pos++;
    }
    const exponent = text.charCodeAt(pos);
    if (exponent === 0x65 || exponent === 0x45) {
      const sign = text.charCodeAt(++pos);
      if (sign === PLUS || sign === MINUS) pos++;
      if (!digit(text.charCodeAt(pos))) return undefined;
      while (digit(text.charCodeAt(pos))) pos++;
    }
    this.pos = pos;
    return text.slice(start, pos);
  }
}

/** `text` laid out (see above), or undefined when it is not JSON (or nests past {@link MAX_DEPTH}). */
export function layoutJson(text: string): string | undefined {
  return new Layout(text).document();
}
