import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { formatFindings, validateCatalogDir } from '../../../core/catalog/index.js';
import { PluginRegistry } from '../../../core/catalog/plugins/registry.js';
import { PLUGINS } from '../../../plugins/index.js';
import { linearPlugin } from '../../../plugins/linear/index.js';

function registry(): PluginRegistry {
  const plugins = new PluginRegistry();
  for (const plugin of PLUGINS) plugins.register(plugin);
  return plugins;
}

describe('the real plugins with the real manifests', () => {
  it('validate without errors', async () => {
    const errors = (await validateCatalogDir('manifests', registry())).filter((f) => f.severity === 'error');
    expect(formatFindings(errors)).toBe('');
  });

  it('register under distinct ids', () => {
    expect(registry().ids()).toEqual(PLUGINS.map((p) => p.id).sort());
  });
});

describe('plugin tool schemas', () => {
  // strictSchema (ajv's default) rejects unknown keywords, so a typo in a schema fails here.
  const ajv = new Ajv2020({ allowUnionTypes: true });
  const tools = PLUGINS.flatMap((plugin) => plugin.tools ?? []);

  it.each(tools.map((t) => [t.name, t] as const))('%s compiles as JSON Schema 2020-12', (_name, tool) => {
    expect(tool.inputSchema).toMatchObject({ type: 'object', additionalProperties: false });
    expect(() => ajv.compile(tool.inputSchema)).not.toThrow();
    if (tool.outputSchema) expect(() => ajv.compile(tool.outputSchema ?? {})).not.toThrow();
  });

  it('reject an update that changes nothing and accept an unassignment', () => {
    const update = linearPlugin.tools?.find((t) => t.name === 'linear_update_issue');
    const validate = ajv.compile(update?.inputSchema ?? {});
    expect(validate({ id: 'ENG-123' })).toBe(false);
    expect(validate({ id: 'ENG-123', assigneeId: null })).toBe(true);
    expect(validate({ id: 'ENG-123', dueDate: '2026-13' })).toBe(false);
  });
});
