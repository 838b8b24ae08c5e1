/**
 * `toolgate policy set|show|clear` (issue 15) on the data dir of a running gateway: what it sets
 * takes effect on the gateway's next request, and an entry naming nothing in the catalog is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToolgate } from '../../helpers/cli.js';
import { connectWithKey, type TestClient } from '../../helpers/clients.js';
import { petshopApi, startPetshop, type PetshopGateway } from '../../helpers/petshop.js';

const PETSHOP_KEY = 'ps_policycli';

let gw: PetshopGateway;
let agent: TestClient;
let env: Record<string, string>;

beforeAll(async () => {
  gw = await startPetshop(petshopApi({ keys: [PETSHOP_KEY], body: { items: [] } }));
  env = {
    TOOLGATE_DATA_DIR: gw.tg.dataDir,
    TOOLGATE_MANIFESTS_DIR: gw.tg.manifestsDir,
    TOOLGATE_LOG_LEVEL: 'silent',
  };
  agent = await connectWithKey(gw.tg, '2025 (v1 client)', '?user_id=ann', 'client', 'cli-co');
  await agent.callTool('connect_provider', { provider: 'petshop', credentials: { api_key: PETSHOP_KEY } });
});
afterAll(async () => {
  await agent?.close();
  await gw?.close();
});

describe('toolgate policy', () => {
  it('sets, shows and clears a client policy, which the running gateway applies at once', async () => {
    // Pet Shop's 4 tools stay under the default threshold: the full list, every tool.
    expect(await agent.listToolNames()).toContain('petshop_create_pet');

    const set = await runToolgate(
      ['policy', 'set', 'cli-co', '--surface', 'compact', '--allow', 'petshop', '--deny', 'petshop_create_*'],
      env,
    );
    expect(set.stderr).toBe('');
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(
      /^client cli-co \(updated .+\)\nsurface: compact\nallow: petshop\ndeny: petshop_create_\*\n$/,
    );
    expect(await agent.listToolNames()).toEqual(expect.arrayContaining(['search_tools', 'call_tool']));
    expect(await agent.listToolNames()).not.toContain('petshop_list_pets');

    // Only the fields given change.
    const surface = await runToolgate(['policy', 'set', 'cli-co', '--surface', 'full'], env);
    expect(surface.stdout).toContain('surface: full\nallow: petshop\ndeny: petshop_create_*\n');
    const tools = await agent.listToolNames();
    expect(tools).toContain('petshop_list_pets');
    expect(tools).not.toContain('petshop_create_pet');

    const show = await runToolgate(['policy', 'show', 'cli-co'], env);
    expect(show.stdout).toBe(surface.stdout);
    const org = await runToolgate(['policy', 'show', 'cli-co', '--org', 'org-1'], env);
    expect(org.stdout).toBe(
      'client cli-co org_id org-1 (no policy set: the default)\nsurface: auto\nallow: every tool\ndeny: nothing\n',
    );

    const clear = await runToolgate(['policy', 'clear', 'cli-co'], env);
    expect(clear.stdout).toBe('Policy removed: every tool, surface auto.\n');
    expect(await agent.listToolNames()).toContain('petshop_create_pet');
    expect((await runToolgate(['policy', 'clear', 'cli-co'], env)).stdout).toBe('No policy was set.\n');
  });

  it('refuses an entry naming nothing in the catalog, an unknown client, and a bad command', async () => {
    const unknownTool = await runToolgate(['policy', 'set', 'cli-co', '--deny', 'petshop_feed_pet'], env);
    expect(unknownTool.code).toBe(1);
    expect(unknownTool.stderr).toContain('"petshop_feed_pet" is no provider id or tool name of the catalog');
    const unknownClient = await runToolgate(['policy', 'show', 'nobody'], env);
    expect(unknownClient.code).toBe(1);
    expect(unknownClient.stderr).toBe('toolgate: No client is named "nobody".\n');
    const usage = await runToolgate(['policy', 'list'], env);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('Unknown policy command: list');
    expect((await runToolgate(['policy', 'show', 'cli-co'], env)).stdout).toContain(
      '(no policy set: the default)',
    );
  });
});
