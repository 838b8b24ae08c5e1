/**
 * The compiler on real public documents: GitHub's full REST description (a 50-operation selection
 * and every operation), Blockfrost (3.0, YAML), a Swagger 2.0 petstore and a 3.1 document.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { buildProvider } from '../../../core/catalog/provider.js';
import { TOOL_NAME_PATTERN, type CompiledTool, type ProviderEntry } from '../../../core/catalog/types.js';
import { PluginRegistry } from '../../../core/catalog/plugins/registry.js';

const fixtures = 'test/fixtures/catalog';

async function entryOf(file: string): Promise<ProviderEntry> {
  const build = await buildProvider(`${fixtures}/${file}`, new PluginRegistry());
  expect(build.findings.filter((f) => f.severity === 'error')).toEqual([]);
  if (!build.entry) throw new Error(`${file} did not load`);
  return build.entry;
}

/** Every schema compiles as JSON Schema 2020-12, holds no $ref, and every name follows the rule. */
function expectUsableTools(entry: ProviderEntry): void {
  // Code optimisation changes nothing about whether a schema compiles, and halves the time.
  const ajv = new Ajv2020({ strict: false, logger: false, code: { optimize: false } });
  const prefix = `${entry.id.replace(/-/g, '_')}_`;
  const problems: string[] = [];
  for (const tool of entry.tools) {
    if (!TOOL_NAME_PATTERN.test(tool.name) || !tool.name.startsWith(prefix))
      problems.push(`${tool.name}: bad name`);
    if (tool.inputSchema.type !== 'object') problems.push(`${tool.name}: input is not an object schema`);
    if (tool.outputSchema && tool.outputSchema.type !== 'object')
      problems.push(`${tool.name}: output is not an object schema`);
    for (const schema of [tool.inputSchema, tool.outputSchema]) {
      if (!schema) continue;
      if (JSON.stringify(schema).includes('"$ref"')) problems.push(`${tool.name}: $ref`);
      try {
        ajv.compile(schema);
      } catch (error) {
        problems.push(`${tool.name}: ${(error as Error).message}`);
      }
    }
  }
  expect(problems).toEqual([]);
  expect(new Set(entry.tools.map((t) => t.name)).size).toBe(entry.tools.length);
}

/** The shape of a tool without its (large) output schema, for snapshots. */
const outline = (tool: CompiledTool) => ({
  ...tool,
  outputSchema: tool.outputSchema ? '(object schema)' : undefined,
});

describe('real OpenAPI documents', () => {
  it('GitHub: a 50-operation selection, pinned', async () => {
    const entry = await entryOf('github-selection/github.yaml');
    expect(entry.tools).toHaveLength(50);
    expectUsableTools(entry);
    await expect(
      entry.tools.map((t) => `${t.name}  ${t.source}  ${t.category}\n`).join(''),
    ).toMatchFileSnapshot('./__snapshots__/github-selection.names.txt');
    const pinned = ['github_issues_create', 'github_issues_list_for_repo', 'github_issues_add_labels'].map(
      (name) => outline(entry.tools.find((t) => t.name === name) as CompiledTool),
    );
    await expect(`${JSON.stringify(pinned, null, 2)}\n`).toMatchFileSnapshot(
      './__snapshots__/github-selection.tools.json',
    );
  });

  it('GitHub: every operation', async () => {
    const entry = await entryOf('real/github.yaml');
    expect(entry.tools.length).toBeGreaterThan(1000);
    expect(entry.tools.find((t) => t.source === 'POST /repos/{owner}/{repo}/issues')?.name).toBe(
      'github_issues_create',
    );
    expectUsableTools(entry);
  });

  it('Blockfrost (OpenAPI 3.0 in YAML): a multipart upload, CBOR bodies skipped with warnings', async () => {
    const entry = await entryOf('real/blockfrost.yaml');
    expect(entry.tools.length).toBeGreaterThan(100);
    const upload = entry.tools.find((t) => t.source === 'POST /ipfs/add');
    expect(upload?.request?.body).toEqual({
      contentType: 'multipart/form-data',
      required: false,
      files: ['file'],
      from: { kind: 'spread', args: ['file'] },
    });
    expect(entry.warnings.map((w) => w.message.split(' is skipped')[0])).toEqual([
      'POST /tx/submit',
      'POST /utils/txs/evaluate',
    ]);
    expectUsableTools(entry);
  });

  it('Swagger 2.0 petstore', async () => {
    const entry = await entryOf('real/petstore-v2.yaml');
    expectUsableTools(entry);
    expect(entry.tools.map((t) => t.name)).toContain('petstore_v2_find_pets_by_status');
    expect(
      entry.tools.find((t) => t.name === 'petstore_v2_find_pets_by_status')?.request?.parameters,
    ).toEqual([{ arg: 'status', name: 'status', in: 'query', required: true, style: 'form', explode: true }]);
  });

  it('OpenAPI 3.1 train travel', async () => {
    const entry = await entryOf('real/train-travel.yaml');
    expectUsableTools(entry);
    expect(entry.tools.map((t) => t.name)).toEqual([
      'train_travel_create_booking',
      'train_travel_create_booking_payment',
      'train_travel_delete_booking',
      'train_travel_get_booking',
      'train_travel_get_bookings',
      'train_travel_get_stations',
      'train_travel_get_trips',
    ]);
  });
});
