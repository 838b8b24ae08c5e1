import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Client, ProtocolErrorCode, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { getEncoding } from 'js-tiktoken';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCatalog } from '../../../core/catalog/catalog.js';
import { PluginRegistry } from '../../../core/catalog/plugins/registry.js';
import type { JsonSchema, ToolDescriptor } from '../../../core/catalog/types.js';
import { validateArguments } from '../../../core/tools/args.js';
import { NESTED_MAX, TOP_LEVEL_MAX, trimTool } from '../../../core/tools/trim.js';
import { isRecord } from '../../../core/upstream/response.js';
import { PLUGINS } from '../../../plugins/index.js';
import { jsonAnswer, providerHarness, type ProviderHarness } from '../../integration/providers/helpers.js';

// Valid and invalid arguments per bundled tool, recorded once from each compiled schema (issue 15):
// required fields, enum values, formats and patterns; missing required fields, values outside an
// enum, wrong types, unknown properties, broken patterns and bounds, at the top level and one down.
// A provider added later needs none to pass: every tool's required fields and enum and const
// values are compared structurally below; recordings add the verdicts of whole schemas.
interface RecordedCase {
  valid: boolean;
  case: string;
  arguments: Record<string, unknown>;
}

const recorded = JSON.parse(
  readFileSync(new URL('../../fixtures/trim/arguments.json', import.meta.url), 'utf8'),
) as Record<string, RecordedCase[]>;

const { snapshot } = await buildCatalog({
  dir: fileURLToPath(new URL('../../../manifests/', import.meta.url)),
  registry: new PluginRegistry(PLUGINS),
});
const tools = [...snapshot.tools.values()];

// Validation fills defaults into the arguments it is given, so every check gets its own copy.
const verdict = (schema: JsonSchema, args: Record<string, unknown>) =>
  validateArguments(schema, structuredClone(args));

describe('trimTool over the bundled catalog', () => {
  it('has recorded arguments for most bundled tools, and only for tools that exist', () => {
    const names = new Set(tools.map((t) => t.name));
    expect(Object.keys(recorded).filter((name) => !names.has(name))).toEqual([]);
    expect(Object.keys(recorded).length).toBeGreaterThanOrEqual(180);
  });

  it.each(tools.map((tool) => [tool.name, tool] as const))(
    '%s: the trimmed inputSchema accepts and rejects what the compiled one does',
    (_name, tool) => {
      const trimmed = trimTool(tool).inputSchema;
      for (const { valid, case: what, arguments: args } of recorded[tool.name] ?? []) {
        const compiled = verdict(tool.inputSchema, args);
        expect(compiled.ok, `${what}: ${JSON.stringify(compiled)}`).toBe(valid);
        expect(verdict(trimmed, args), what).toEqual(compiled);
      }
    },
  );

  it('keeps every required field and enum value of every tool', () => {
    for (const tool of tools) {
      expect(validationFacts(trimTool(tool).inputSchema), tool.name).toEqual(
        validationFacts(tool.inputSchema),
      );
    }
  });

  it('serves fewer tokens of name, description and inputSchema per tool (cl100k)', () => {
    const cl100k = getEncoding('cl100k_base');
    const average = (list: ToolDescriptor[]) =>
      list.reduce(
        (sum, t) =>
          sum +
          cl100k.encode(
            JSON.stringify({ name: t.name, description: t.description, inputSchema: t.inputSchema }),
          ).length,
        0,
      ) / list.length;
    const before = average(tools);
    const after = average(tools.map(trimTool));
    // Measured: 158.5 compiled, 146.6 served (the manifests' wording was tightened first: 217.1
    // compiled before). Issue 15's target is 150 over the full list, system tools included, which
    // the bench's context section measures (146 cl100k, 150 o200k); a ~91-token schema skeleton
    // that validation needs leaves about 59 tokens a tool for what the descriptions say.
    expect(after).toBeLessThan(before);
    expect(after).toBeLessThanOrEqual(150);
  });

  it('serves outputSchema, title and annotations as compiled', () => {
    for (const tool of tools) {
      const trimmed = trimTool(tool);
      expect(trimmed.outputSchema).toBe(tool.outputSchema);
      expect(trimmed.title).toBe(tool.title);
      expect(trimmed.annotations).toBe(tool.annotations);
    }
  });
});

describe('trimTool', () => {
  const tool = (over: Partial<ToolDescriptor>): ToolDescriptor => ({
    name: 'demo_create_issue',
    title: 'Create an issue',
    description: 'Create an issue.',
    inputSchema: { type: 'object', properties: {} },
    ...over,
  });

  it("drops the compiler's Required paragraph when it lists the schema's required, and a title repeated before more, on one line", () => {
    const inputSchema = { type: 'object', properties: {}, required: ['owner', 'repo'] };
    expect(
      trimTool(
        tool({ description: 'Create an issue.\n\nOpens an issue.\n\nRequired: repo, owner.', inputSchema }),
      ).description,
    ).toBe('Opens an issue.');
    expect(
      trimTool(tool({ description: 'Create an issue.\n\nRequired: owner, repo.', inputSchema })).description,
    ).toBe('Create an issue.');
    // Listing other names than the schema requires, the paragraph says something: it stays.
    expect(
      trimTool(tool({ description: 'Opens an issue.\n\nRequired: owner.', inputSchema })).description,
    ).toBe('Opens an issue. Required: owner.');
    expect(
      trimTool(tool({ description: 'Deprecated. Create an issue.\n\nOpens an issue.' })).description,
    ).toBe('Deprecated. Create an issue. Opens an issue.');
  });

  it('drops what comes back after the first sentence, and documentation links, from descriptions', () => {
    const { description, inputSchema } = trimTool(
      tool({
        description:
          'Returns one issue. Use it before editing (see https://docs.example.com/issues). Returns its ' +
          'title and body.\n\nReturns nothing else. Markdown such as [a link](https://example.com) stays.',
        inputSchema: {
          type: 'object',
          properties: {
            q: {
              type: 'string',
              description: 'Search syntax (https://docs.example.com/search). E.g. is:open.',
            },
          },
        },
      }),
    );
    // The first sentence stays whatever it says: it is what the tool does.
    expect(description).toBe(
      'Returns one issue. Use it before editing. Markdown such as [a link](https://example.com) stays.',
    );
    expect((inputSchema.properties as Record<string, JsonSchema>).q!.description).toBe(
      'Search syntax. E.g. is:open.',
    );
  });

  it('cuts nested descriptions to their first sentence and bounds top-level ones at a sentence', () => {
    const long = `${'Word '.repeat(40).trim()}. ${'More words here. '.repeat(12).trim()}`;
    const { inputSchema } = trimTool(
      tool({
        inputSchema: {
          type: 'object',
          description: 'The arguments. Always an object.',
          properties: {
            notes: { type: 'string', description: long },
            start: {
              type: 'object',
              description: 'When it starts. Two shapes.',
              properties: {
                dateTime: { type: 'string', description: 'RFC 3339 time. The offset may be left out.' },
                kind: { type: 'string', description: 'MIME type, e.g. Text/plain. Or another one.' },
                id: { type: 'string', description: 'Ids like rec... Not cut there. Cut here.' },
                note: { type: 'string', description: `${'x'.repeat(200)} end.` },
              },
              additionalProperties: { type: 'string', description: 'Extra field. Ignored.' },
            },
            items: { type: 'array', items: { anyOf: [{ type: 'string', description: 'One id. Or none.' }] } },
          },
        },
      }),
    );
    const props = inputSchema.properties as Record<string, JsonSchema>;
    const start = props.start!;
    const startProps = start.properties as Record<string, JsonSchema>;
    expect(inputSchema.description).toBe('The arguments. Always an object.');
    expect(long.length).toBeGreaterThan(TOP_LEVEL_MAX);
    expect(props.notes!.description).toBe(long.slice(0, long.lastIndexOf('.', TOP_LEVEL_MAX) + 1));
    expect(start.description).toBe('When it starts. Two shapes.');
    expect(startProps.dateTime!.description).toBe('RFC 3339 time.');
    expect(startProps.kind!.description).toBe('MIME type, e.g. Text/plain.');
    expect(startProps.id!.description).toBe('Ids like rec... Not cut there.');
    expect(startProps.note!.description).toBe(`${'x'.repeat(NESTED_MAX - 1)}…`);
    expect((start.additionalProperties as JsonSchema).description).toBe('Extra field.');
    // An array's items and an anyOf's branches describe the same argument: top level still.
    expect(props.items).toEqual({
      type: 'array',
      items: { anyOf: [{ type: 'string', description: 'One id. Or none.' }] },
    });
  });

  it('drops $comment, x- extensions and titles repeating the name, and leaves data and property names alone', () => {
    // Properties named like annotations, and annotations inside data, are not annotations.
    const untouched = {
      label: { type: 'string', title: 'The label to set' },
      description: { type: 'string', default: 'x-y', enum: ['x-y', 'z'] },
      'x-id': { type: 'object', default: { description: 'Data. Kept whole.', $comment: 'kept' } },
      title: { const: { title: 'title' } },
    };
    const constraints = { required: ['description', 'x-id'], additionalProperties: false };
    const examples = ['2026-05-01', '2026-06-01'];
    const { inputSchema } = trimTool(
      tool({
        inputSchema: {
          type: 'object',
          $comment: 'generated',
          'x-speakeasy': { group: 'issues' },
          properties: {
            due_date: { type: 'string', title: 'Due date', 'x-order': 2, examples },
            ...untouched,
          },
          ...constraints,
        },
      }),
    );
    expect(inputSchema).toEqual({
      type: 'object',
      properties: { due_date: { type: 'string', examples }, ...untouched },
      ...constraints,
    });
  });

  it('leaves the tool as it was, and trims a tool object once', () => {
    const original = tool({
      description: 'Create an issue.\n\nOpens one.',
      inputSchema: {
        type: 'object',
        properties: { a: { type: 'object', properties: { b: { description: 'B. C.' } } } },
      },
    });
    const copy = structuredClone(original);
    const trimmed = trimTool(original);
    expect(original).toEqual(copy);
    expect(trimTool(original)).toBe(trimmed);
  });
});

describe('tools/list and tools/call through the server', () => {
  const name = 'github_issues_list_for_repo';
  let p: ProviderHarness;
  let client: Client;

  beforeAll(async () => {
    p = await providerHarness({
      provider: 'github',
      auth: 'oauth',
      accessToken: 'gho_trimtest',
      answer: () => jsonAnswer(200, []),
    });
    const { key } = await p.tg.key('client');
    client = new Client({ name: 'toolgate-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(p.tg.mcpUrl('?user_id=u1'), {
        requestInit: { headers: { 'X-API-Key': key } },
      }),
    );
  });
  afterAll(async () => {
    await client.close();
    await p.close();
  });

  it(`lists ${name} trimmed, and validates its calls against the compiled schema`, async () => {
    const compiled = snapshot.tools.get(name)!;
    const listed = (await client.listTools()).tools.find((t) => t.name === name)!;
    expect(listed.description).toBe(trimTool(compiled).description);
    expect(listed.description).not.toBe(compiled.description);
    expect(listed.inputSchema).toEqual(trimTool(compiled).inputSchema);

    for (const { valid, case: what, arguments: args } of recorded[name]!) {
      const check = verdict(compiled.inputSchema, args);
      expect(check.ok, what).toBe(valid);
      p.sent();
      const call = client.callTool({ name, arguments: args });
      if (check.ok) {
        expect((await call).isError, what).toBeFalsy();
        expect(p.sent(), what).toHaveLength(1);
      } else {
        await expect(call, what).rejects.toThrow(`Invalid arguments for ${name}: ${check.message}.`);
        await expect(call, what).rejects.toHaveProperty('code', ProtocolErrorCode.InvalidParams);
        expect(p.sent(), what).toHaveLength(0);
      }
    }
  });
});

// Every required field and enum (or const) value, by where it sits in the schema. Values of
// `default` and `examples` are data, not constraints; the keys of `properties` are names.
function validationFacts(schema: unknown, at = ''): string[] {
  if (typeof schema !== 'object' || schema === null) return [];
  if (Array.isArray(schema)) return schema.flatMap((item, i) => validationFacts(item, `${at}/${i}`));
  return Object.entries(schema as Record<string, unknown>).flatMap(([key, value]): string[] => {
    if ((key === 'required' || key === 'enum') && Array.isArray(value))
      return value.map((v) => `${at}/${key} ${JSON.stringify(v)}`);
    if (key === 'const') return [`${at}/const ${JSON.stringify(value)}`];
    if (key === 'default' || key === 'examples') return [];
    if (['properties', 'patternProperties', '$defs'].includes(key) && isRecord(value))
      return Object.entries(value).flatMap(([name, sub]) => validationFacts(sub, `${at}/${key}/${name}`));
    return validationFacts(value, `${at}/${key}`);
  });
}
