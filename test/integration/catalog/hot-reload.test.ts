import { once } from 'node:events';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogReport } from '../../../core/catalog/index.js';
import { runToolgate } from '../../helpers/cli.js';
import {
  connectWithKey,
  countToolsChanged,
  type TestClient,
  type ToolsChangedCount,
} from '../../helpers/clients.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { weatherManifest } from '../../helpers/manifests.js';
import { jsonAnswer, startReceiver, type Receiver } from '../../helpers/receiver.js';

const ALERTS = `  - name: weather_alerts
    description: Active weather alerts for a city.
    input_schema:
      type: object
      properties:
        city: { type: string }
      required: [city]
    request: { method: GET, path: /alerts, query: [city] }
`;

let api: Receiver;
let tg: TestGateway;
let client: TestClient;
let toolsChanged: ToolsChangedCount;
let file: string;

beforeAll(async () => {
  api = await startReceiver((req) => jsonAnswer(200, { at: req.url }));
  // The manifest is in place before the gateway starts: no watcher event from setting up.
  const initial = join(mkdtempSync(join(tmpdir(), 'toolgate-weather-')), 'weather.yaml');
  writeFileSync(initial, weatherManifest());
  tg = await startGateway(
    { TOOLGATE_ALLOW_PRIVATE_NETWORK: '1', TOOLGATE_PROVIDER_WEATHER_BASE_URL: api.url },
    { manifestFiles: [initial] },
  );
  file = join(tg.manifestsDir, 'weather.yaml');
  client = await connectWithKey(tg, '2025 (v1 client)', '?user_id=u1');
  toolsChanged = await countToolsChanged(client, tg);
});
afterAll(async () => {
  await client.close();
  await tg.close();
  await api.close();
});

describe('hot reload of the catalog', () => {
  it('picks up an edited manifest: the open session is told, and sees and calls the new tool', async () => {
    expect(await client.listToolNames()).toContain('weather_current');
    expect(await client.listToolNames()).not.toContain('weather_alerts');
    const reloaded = once(tg.gateway.catalog, 'reloaded');
    writeFileSync(file, weatherManifest(ALERTS));
    const [report] = (await reloaded) as [CatalogReport];
    expect(report.changed).toEqual(['weather']);
    await toolsChanged.until((count) => count === 1);
    expect(await client.listToolNames()).toContain('weather_alerts');
    const result = await client.callTool('weather_alerts', { city: 'Oslo' });
    expect(result.content[0]!.text).toContain('/alerts?city=Oslo');
  });

  it('keeps the last good version serving when an edit breaks the manifest, and reports the finding', async () => {
    const reloaded = once(tg.gateway.catalog, 'reloaded');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('auth:\n  kind: none', 'auth:\n  kind: none\n  colour: blue'),
    );
    const [report] = (await reloaded) as [CatalogReport];
    expect(report.keptOld).toEqual(['weather']);
    expect((await client.callTool('weather_current', { city: 'Oslo' })).isError).toBeFalsy();
    expect(await client.listToolNames()).toContain('weather_alerts');

    const ready = (await (await fetch(`${tg.url}/readyz`)).json()) as {
      catalog: { stale: Record<string, string[]> };
    };
    expect(ready.catalog.stale.weather?.join('\n')).toMatch(/TG_MANIFEST_UNKNOWN_KEY auth > colour/);
    expect(
      tg.logs.some((line) => line.includes('TG_CATALOG_PROVIDER_FAILED') && line.includes('colour')),
    ).toBe(true);

    const validated = await runToolgate(['catalog', 'validate', tg.manifestsDir], {
      TOOLGATE_DATA_DIR: tg.dataDir,
    });
    expect(validated.code).toBe(1);
    expect(validated.stdout).toMatch(
      /weather\.yaml:8:3 +TG_MANIFEST_UNKNOWN_KEY +auth > colour +unknown key "colour"; remove it/,
    );
  });

  it('reloads on `toolgate catalog reload` against the running server, and reports what changed', async () => {
    // Without the watcher, only the command can bring the edit in.
    tg.gateway.catalog.stop();
    writeFileSync(file, weatherManifest());
    const port = new URL(tg.url).port;
    const reloaded = await runToolgate(['catalog', 'reload'], {
      TOOLGATE_DATA_DIR: tg.dataDir,
      TOOLGATE_PORT: port,
    });
    expect(reloaded.stderr).toBe('');
    expect(reloaded.code).toBe(0);
    expect(reloaded.stdout).toMatch(/Catalog version \d+/);
    expect(reloaded.stdout).toContain('changed: weather');
    await toolsChanged.until((count) => count >= 2);
    expect(await client.listToolNames()).not.toContain('weather_alerts');
  });
});
