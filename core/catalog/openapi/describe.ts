/**
 * Tool descriptions an agent can act on: what the operation does (summary), the gist of the
 * document's description (markdown reduced to text, cut at a sentence near 500 characters so
 * tools/list stays small), and which arguments are required.
 */
import type { JsonObject, OperationRef } from './document.js';

const MAX_DETAIL = 500;

export function describeOperation(
  op: Pick<OperationRef, 'method' | 'path' | 'operation'>,
  required: readonly string[],
): string {
  const summary = plainText(op.operation.summary);
  const detail = plainText(op.operation.description);
  const head = summary || `${op.method} ${op.path}`;
  const parts = [(op.operation.deprecated === true ? 'Deprecated. ' : '') + asSentence(head)];
  const core = summary.replace(/[.!?]$/, '');
  const rest =
    core !== '' && detail.startsWith(core) ? detail.slice(core.length).replace(/^[.!?:]?\s*/, '') : detail;
  if (rest !== '') parts.push(cut(rest, MAX_DETAIL));
  if (required.length > 0) parts.push(`Required: ${required.join(', ')}.`);
  return parts.join('\n\n');
}

export function operationTitle(operation: JsonObject): string | undefined {
  const summary = plainText(operation.summary).replace(/\.$/, '');
  return summary === '' ? undefined : cut(summary, 100);
}

/** Whitespace collapsed to single spaces. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function plainText(value: unknown): string {
  if (typeof value !== 'string') return '';
  return oneLine(
    value
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/<[^>]+>/g, ' ')
      .replace(/^\s*>?\s*\[!(NOTE|WARNING|TIP|IMPORTANT|CAUTION)\]/gim, '')
      .replace(/^\s*(#{1,6}|>|\*|-)\s+/gm, ''),
  ).replace(/\s+([.,;:!?])/g, '$1');
}

function asSentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

/** At most `max` characters, ending at a sentence end when one is near, else at a word with "...". */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const window = text.slice(0, max);
  const sentenceEnd = Math.max(window.lastIndexOf('. '), window.lastIndexOf('! '), window.lastIndexOf('? '));
  if (sentenceEnd > max / 2) return window.slice(0, sentenceEnd + 1);
  const wordEnd = window.lastIndexOf(' ');
  return `${window.slice(0, wordEnd > 0 ? wordEnd : max).trimEnd()}...`;
}
