/**
 * The little Markdown the generated parts of README.md need (its providers table, the benchmark's
 * figures): table rows, and a block between two marker comments replaced whole.
 */

/** One table row; a `|` inside a cell is escaped so that it stays in its cell. */
export function markdownRow(cells: readonly string[]): string {
  return `| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`;
}

/** `text` with everything from `begin` to `end` (both kept) replaced by `block`, which holds both. */
export function replaceBlock(text: string, begin: string, end: string, block: string): string {
  const from = text.indexOf(begin);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`README.md has no ${begin} ... ${end} block`);
  return text.slice(0, from) + block + text.slice(to + end.length);
}
