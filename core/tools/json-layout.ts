/**
 * JSON text laid out for an agent to read: indented by two spaces, except that an object or array
 * whose one-line form fits in {@link INLINE_WIDTH} columns, and holds no container that does not,
 * stays on one line (readable, without the token cost of putting every short array element on its
 * own line).
 *
 * Laid out from the text itself, token by token, rather than parsed to values and written back:
 * on a ~300-byte answer, about 3 % fewer instructions per tools/call (scripts/bench/instructions.ts,
 * A/B). Reading the tokens also keeps what a round trip through JavaScript values loses: a number
 * is shown as the provider wrote it (an id of 19 digits stays exact), and keys stay in the
 * provider's order (an object's integer keys are not moved first). A string with escapes is shown
 * as JSON.stringify writes it (`\u00e9` as `é`: APIs that escape every non-ASCII character stay
 * readable); any other string is already so.
 */
import { jsonString } from '../json.js';

const INLINE_WIDTH = 80;
/** Containers nested deeper than this are not laid out: the text is shown as it came. */
const MAX_DEPTH = 512;

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

/**
 * `parts.join(separator)` as a rope: join copies every part into a flat string at once, and a
 * container's parts are ropes of their own (laid out nested values), flattened again at each level;
 * concatenation leaves one flattening, where the whole text is written out.
 */
function joined(parts: readonly string[], separator: string): string {
  let out = parts[0]!;
  for (let i = 1; i < parts.length; i++) out += separator + parts[i]!;
  return out;
}

class Layout {
  private pos = 0;
  /** Whether the value last laid out spans several lines (told without searching its text). */
  private multiline = false;

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
    let pos = this.pos;
    for (;;) {
      const code = this.at(pos);
      if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) break;
      pos++;
    }
    this.pos = pos;
  }

  private value(indent: string, depth: number): string | undefined {
    this.multiline = false;
    const code = this.at(this.pos);
    if (code === OPEN_OBJECT || code === OPEN_ARRAY)
      return depth < MAX_DEPTH ? this.container(code === OPEN_OBJECT, indent, depth + 1) : undefined;
    if (code === QUOTE) return this.string();
    return this.scalar();
  }

  private container(object: boolean, indent: string, depth: number): string | undefined {
    const close = object ? CLOSE_OBJECT : CLOSE_ARRAY;
    this.pos++;
    this.space();
    if (this.at(this.pos) === close) {
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
        const key = this.at(this.pos) === QUOTE ? this.string() : undefined;
        if (key === undefined) return undefined;
        this.space();
        if (this.at(this.pos) !== COLON) return undefined;
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
      const next = this.at(this.pos);
      this.pos++;
      if (next === close) break;
      if (next !== COMMA) return undefined;
      this.space();
    }
    this.multiline = multiline || width > INLINE_WIDTH;
    const [open, end] = object ? ['{', '}'] : ['[', ']'];
    if (this.multiline) return `${open}\n${inner}${joined(entries, `,\n${inner}`)}\n${indent}${end}`;
    return `${open}${joined(entries, ', ')}${end}`;
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

/** `text` laid out (see above), or undefined when it is not JSON (or nests past {@link MAX_DEPTH}). */
export function layoutJson(text: string): string | undefined {
  return new Layout(text).document();
}
