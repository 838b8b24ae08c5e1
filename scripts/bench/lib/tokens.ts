/**
 * What a tool list costs a model's context (issue 15): tokens of its JSON under the encodings of
 * OpenAI's models (js-tiktoken: cl100k_base of GPT-4 and GPT-3.5, o200k_base of GPT-4o and later;
 * other vendors' tokenizers land near these), counted on the `tools` array as tools/list answers
 * it, and on name + description + inputSchema alone, which is what model APIs take of a tool.
 */
import { getEncoding, type Tiktoken } from 'js-tiktoken';

export const ENCODINGS = ['cl100k_base', 'o200k_base'] as const;
export type Encoding = (typeof ENCODINGS)[number];

export interface ListCost {
  tools: number;
  /** UTF-8 bytes of the array's JSON. */
  bytes: number;
  tokens: Record<Encoding, number>;
  /** Tokens of name + description + inputSchema of each tool. */
  apiTokens: Record<Encoding, number>;
}

const encoders = new Map<Encoding, Tiktoken>();

function tokens(text: string): Record<Encoding, number> {
  const counts = {} as Record<Encoding, number>;
  for (const encoding of ENCODINGS) {
    let encoder = encoders.get(encoding);
    if (!encoder) encoders.set(encoding, (encoder = getEncoding(encoding)));
    counts[encoding] = encoder.encode(text).length;
  }
  return counts;
}

/** The context cost of a tools/list `tools` array. */
export function listCost(tools: readonly Record<string, unknown>[]): ListCost {
  const json = JSON.stringify(tools);
  const api = tools.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
  return {
    tools: tools.length,
    bytes: Buffer.byteLength(json),
    tokens: tokens(json),
    apiTokens: tokens(JSON.stringify(api)),
  };
}
