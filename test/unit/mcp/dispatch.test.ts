import { describe, expect, it } from 'vitest';
import { resultJson } from '../../../core/mcp/dispatch.js';
import type { ToolResult } from '../../../core/tools/types.js';

describe('resultJson', () => {
  // Every shape a tool result takes reaches the client as JSON.stringify would write it: the
  // spelled-out text results, and whatever it leaves to JSON.stringify.
  it.each<[string, unknown]>([
    ['a text result', { content: [{ type: 'text', text: '{\n  "id": "42",\n  "name": "Widget"\n}' }] }],
    [
      'several text blocks',
      {
        content: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ],
      },
    ],
    ['no blocks', { content: [] }],
    ['a failure', { content: [{ type: 'text', text: 'GitHub returned HTTP 404' }], isError: true }],
    ['isError false', { isError: false, content: [{ type: 'text', text: 'ok' }] }],
    ['isError left undefined', { content: [{ type: 'text', text: 'ok' }], isError: undefined }],
    ['text needing escapes', { content: [{ type: 'text', text: 'tab\t"quote" \\ \u0001 é 😀 \ud800' }] }],
    ['a block with its text first', { content: [{ text: 'x', type: 'text' }] }],
    ['a block with annotations', { content: [{ type: 'text', text: 'x', annotations: { priority: 1 } }] }],
    ['an image block', { content: [{ type: 'image', data: 'aGk=', mimeType: 'image/png' }] }],
    ['a null block', { content: [null] }],
    ['structured content', { content: [{ type: 'text', text: '{}' }], structuredContent: { a: 1 } }],
    ['an input_required result', { resultType: 'input_required', inputRequests: {} }],
  ])('%s', (_name, result) => {
    expect(resultJson(result as ToolResult)).toBe(JSON.stringify(result));
  });
});
