import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect, GENERATIONS } from '../../helpers/clients.js';
import { startGateway } from '../../helpers/gateway.js';

/** Every file under the data dir (database, WAL, shared memory), as bytes. */
function dataFiles(dir: string): { name: string; bytes: Buffer }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => ({ name: entry.name, bytes: readFileSync(join(entry.parentPath, entry.name)) }));
}

describe('secrets at rest and in logs', () => {
  it('a full session in every generation leaves no raw key or query token in the logs or the data dir', async () => {
    const tg = await startGateway();
    const sentinels: string[] = [];
    try {
      const solo = await tg.key('solo');
      const platform = await tg.key('platform');
      sentinels.push(solo.key, platform.key);
      const queryToken = `sentinel-${randomBytes(12).toString('hex')}`;
      sentinels.push(queryToken);
      for (const generation of GENERATIONS) {
        for (const [headers, query] of [
          [{ 'X-API-Key': solo.key }, `?access_token=${queryToken}`],
          [{ Authorization: `Bearer ${platform.key}` }, `?org_id=o1&user_id=u1&code=${queryToken}`],
        ] as const) {
          const client = await connect(generation, tg.mcpUrl(query), headers);
          await client.listToolNames();
          await client.callTool('report_problem', { summary: 'it broke', details: 'steps' });
          await client.callTool('list_providers', {});
          await expect(client.callTool('report_problem', {})).rejects.toThrow();
          await client.close();
        }
      }
      // Refusals are logged too: a wrong key must not be echoed either.
      const wrong = platform.key.slice(0, -1) + (platform.key.endsWith('a') ? 'b' : 'a');
      sentinels.push(wrong);
      await fetch(tg.mcpUrl(), {
        method: 'POST',
        headers: { 'x-api-key': wrong, 'content-type': 'application/json' },
        body: '{}',
      });
    } finally {
      await tg.gateway.close();
    }
    const logText = tg.logs.join('');
    expect(logText.length).toBeGreaterThan(1_000);
    expect(logText).toContain('[redacted]');
    const files = dataFiles(tg.dataDir);
    expect(files.map((f) => f.name)).toContain('toolgate.db');
    for (const secret of sentinels) {
      expect(logText.includes(secret), 'secret found in logs').toBe(false);
      for (const file of files)
        expect(file.bytes.includes(secret), `secret found in ${file.name}`).toBe(false);
    }
    await tg.close();
  });
});
