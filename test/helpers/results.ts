import { expect } from 'vitest';
import type { TestClient } from './clients.js';

/** What a tools/call answered, as the test clients return it. */
export type ToolCallResult = Awaited<ReturnType<TestClient['callTool']>>;

/** Something a tool result's text must hold: a string it contains, or a pattern it matches. */
export type Mention = string | RegExp;

/** The text of a tool result's first content block ('' when it has none). */
function resultText(result: ToolCallResult): string {
  return result.content[0]?.text ?? '';
}

/** Asserts that `text` holds each of `mentions` (see Mention). */
function expectMentions(text: string, ...mentions: Mention[]): void {
  for (const mention of mentions) {
    if (typeof mention === 'string') expect(text).toContain(mention);
    else expect(text).toMatch(mention);
  }
}

/**
 * Asserts that a tool call succeeded (no `isError`) and that its text holds each of `mentions`;
 * returns the text.
 */
export function expectToolOk(result: ToolCallResult, ...mentions: Mention[]): string {
  const text = resultText(result);
  expect(result.isError, text).toBeFalsy();
  expectMentions(text, ...mentions);
  return text;
}

/**
 * Asserts that a tool call failed (`isError: true`) and that its text holds each of `mentions`;
 * returns the text.
 */
export function expectToolError(result: ToolCallResult, ...mentions: Mention[]): string {
  const text = resultText(result);
  expect(result.isError, text).toBe(true);
  expectMentions(text, ...mentions);
  return text;
}
