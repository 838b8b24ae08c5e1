/**
 * A string as JSON text: in quotes as it is when none of its characters is one JSON.stringify
 * escapes (`"`, `\\`, controls, surrogates), which is nearly every string a gateway writes (a
 * provider's keys and values, ids, names); JSON.stringify otherwise. JSON.stringify is a call into
 * the runtime per value: on a tools/call's ~300-byte answer those calls were the larger part of
 * formatting it, and an audit entry's context of eight fields cost about 8k instructions that way
 * (scripts/bench/instructions.ts).
 */
export function jsonString(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c || (c >= 0xd800 && c <= 0xdfff)) return JSON.stringify(text);
  }
  return `"${text}"`;
}
