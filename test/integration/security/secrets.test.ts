import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect, GENERATIONS } from '../../helpers/clients.js';
import { petshopApi, startPetshop } from '../../helpers/petshop.js';
import { expectToolOk } from '../../helpers/results.js';

/** Every file under the data dir (database, WAL, shared memory), as bytes. */
function dataFiles(dir: string): { name: string; bytes: Buffer }[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => ({ name: entry.name, bytes: readFileSync(join(entry.parentPath, entry.name)) }));
}

describe('secrets at rest and in logs', () => {
  it('full sessions leave no API key, provider credential, link token or query token in the logs, the data dir or reports', async () => {
    const providerKeys = [`ps_${randomBytes(10).toString('hex')}`, `ps_${randomBytes(10).toString('hex')}`];
    const { api, tg } = await startPetshop(
      petshopApi({ keys: providerKeys, body: { items: [], email: 's@petshop.example' } }),
      { env: (apiUrl) => ({ TOOLGATE_REPORT_WEBHOOK_URL: `${apiUrl}/reports` }) },
    );
    const sentinels: string[] = [...providerKeys];
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
      // A provider credential pasted through the tool, and one through the secure page.
      const agent = await connect('2026-07-28', tg.mcpUrl('?org_id=o1&user_id=u1'), {
        'X-API-Key': platform.key,
      });
      expectToolOk(
        await agent.callTool('connect_provider', {
          provider: 'petshop',
          credentials: { api_key: providerKeys[0]! },
        }),
      );
      await agent.callTool('petshop_list_pets', {});
      await agent.callTool('connect_provider', {
        provider: 'petshop',
        credentials: { api_key: `${providerKeys[0]!}x` },
      });
      const linkText = (await agent.callTool('connect_provider', { provider: 'petshop' })).content[0]!.text!;
      const link = /\/connect\/[A-Za-z0-9_-]+/.exec(linkText)![0];
      sentinels.push(link.slice('/connect/'.length));
      expect((await fetch(`${tg.url}${link}`)).status).toBe(200);
      const posted = await fetch(`${tg.url}${link}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          'credentials.api_key': providerKeys[1]!,
          'fields.region': 'us',
        }).toString(),
      });
      expect(posted.status).toBe(200);
      expect(await posted.text()).not.toContain(providerKeys[1]!);
      await agent.callTool('petshop_list_pets', {});
      await agent.callTool('report_problem', { summary: 'pets list empty', provider: 'petshop' });
      await agent.close();
      // The report webhook is delivered in the background: wait for it before shutting down.
      while ((await api.next()).url !== '/reports');
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
      await api.close();
    }
    // What reached the report webhook carries none of them either.
    const delivered = api.received
      .filter((r) => r.url === '/reports')
      .map((r) => r.body + JSON.stringify(r.headers))
      .join('');
    expect(delivered).toContain('pets list empty');
    for (const secret of sentinels)
      expect(delivered.includes(secret), 'secret in the report webhook').toBe(false);
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
