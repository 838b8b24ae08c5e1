import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runToolgate } from '../../helpers/cli.js';
import { connect } from '../../helpers/clients.js';
import { petshopApi, startPetshop, type PetshopGateway } from '../../helpers/petshop.js';
import { expectToolOk } from '../../helpers/results.js';

const PROVIDER_KEY = 'ps_rotation7';

let petshop: PetshopGateway;

beforeAll(async () => {
  petshop = await startPetshop(
    petshopApi({ keys: [PROVIDER_KEY], body: { items: [], email: 'r@petshop.example' } }),
  );
});
afterAll(() => petshop.close());

describe('toolgate master-key rotate', () => {
  it('re-encrypts stored credentials under a new key while the server runs; API keys and connections keep working', async () => {
    const { tg } = petshop;
    /** The sealed credentials of user u1's Pet Shop connection, as stored. */
    const sealed = async (): Promise<string> => {
      const clientId = (await tg.gateway.keys.list())[0]!.clientId;
      return (await tg.gateway.connections.list({ clientId, orgId: null, userId: 'u1' }))[0]!.credentials;
    };
    const { key } = await tg.key('client');
    const client = await connect('2026-07-28', tg.mcpUrl('?user_id=u1'), { 'X-API-Key': key });
    const connected = await client.callTool('connect_provider', {
      provider: 'petshop',
      credentials: { api_key: PROVIDER_KEY },
    });
    expectToolOk(connected);
    const before = readFileSync(join(tg.dataDir, 'master.key'), 'utf8');
    const sealedBefore = await sealed();

    const rotated = await runToolgate(['master-key', 'rotate'], { TOOLGATE_DATA_DIR: tg.dataDir });
    expect(rotated.stderr).toBe('');
    expect(rotated.code).toBe(0);
    expect(rotated.stdout).toMatch(/Re-encrypted 2 stored secret\(s\)/);
    const after = readFileSync(join(tg.dataDir, 'master.key'), 'utf8');
    expect(after).not.toBe(before);
    const sealedAfter = await sealed();
    expect(sealedAfter).not.toBe(sealedBefore);
    expect(sealedAfter).not.toContain(PROVIDER_KEY);

    // The running server, still holding the old key, reads the new envelope; the API key still verifies.
    expectToolOk(await client.callTool('petshop_list_pets', {}));
    await client.close();
    const fresh = await connect('2025 (v1 client)', tg.mcpUrl('?user_id=u1'), { 'X-API-Key': key });
    expect(await fresh.listToolNames()).toContain('petshop_list_pets');
    await fresh.close();
  });
});
