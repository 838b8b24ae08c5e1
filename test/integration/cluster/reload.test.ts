import { randomBytes } from 'node:crypto';
import { copyFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../../helpers/eventually.js';
import { startGateway, until, type TestGateway } from '../../helpers/gateway.js';
import { PETSHOP_MANIFESTS } from '../../helpers/petshop.js';
import { createDatabase, requirePostgres, type TestDatabase } from '../../helpers/postgres.js';
import { deleteKeys, randomPrefix, requireRedis, TEST_REDIS_URL } from '../../helpers/redis.js';

const FILE = 'test/integration/cluster/reload.test.ts';

// Two gateway processes of one deployment (one PostgreSQL database, one Redis), each with its own
// copy of the manifests, as containers built from one image have.
await requirePostgres(import.meta.url);
await requireRedis(FILE);

let database: TestDatabase;
const prefix = randomPrefix('reload');
const gateways: TestGateway[] = [];

beforeAll(async () => {
  database = await createDatabase();
  const env = {
    TOOLGATE_DATABASE_URL: database.url,
    TOOLGATE_REDIS_URL: TEST_REDIS_URL,
    TOOLGATE_REDIS_PREFIX: prefix,
    TOOLGATE_MASTER_KEY: randomBytes(32).toString('base64'),
  };
  for (let i = 0; i < 2; i++) gateways.push(await startGateway(env, { manifestFiles: PETSHOP_MANIFESTS }));
});

afterAll(async () => {
  for (const tg of gateways) await tg.close();
  await database?.drop();
  await deleteKeys(prefix);
});

interface Readiness {
  catalog: { fingerprint: string; differsFrom: string[]; warning?: string };
  processes: { id: string; self: boolean; catalog: { fingerprint: string } }[];
}

const readiness = async (tg: TestGateway): Promise<Readiness> =>
  (await (await fetch(`${tg.url}/readyz`)).json()) as Readiness;

describe('/readyz of a deployment of several processes', () => {
  it('lists every process with the catalog it serves, all alike', async () => {
    const ids = gateways.map((tg) => tg.gateway.processId).sort();
    for (const tg of gateways) {
      await eventually(async () => (await readiness(tg)).processes.length === 2);
      const ready = await readiness(tg);
      expect(ready.processes.map((p) => p.id).sort()).toEqual(ids);
      expect(ready.processes.find((p) => p.self)?.id).toBe(tg.gateway.processId);
      expect(new Set(ready.processes.map((p) => p.catalog.fingerprint))).toEqual(
        new Set([ready.catalog.fingerprint]),
      );
      expect(ready.catalog.differsFrom).toEqual([]);
      expect(ready.catalog.warning).toBeUndefined();
    }
  });
});

describe("an operator's catalog reload", () => {
  it('reloads every process, not only the one it was sent to', async () => {
    const [asked, other] = gateways as [TestGateway, TestGateway];
    expect(other.gateway.catalog.current.providers.has('petshop')).toBe(true);
    // New manifests on every machine; the other process does not watch its directory here, so
    // only the reload can bring the change to it.
    other.gateway.catalog.stop();
    for (const tg of gateways) rmSync(join(tg.manifestsDir, 'petshop.yaml'));
    const report = await asked.gateway.operations.reloadCatalog();
    expect(report.removed).toEqual(['petshop']);
    await until(
      other.gateway.catalog,
      'changed',
      () => !other.gateway.catalog.current.providers.has('petshop'),
    );
    // The other process's reload came over the bus: its log says so.
    await until(other.logEvents, 'line', () =>
      other.logs.some((line) => /"code":"TG_CATALOG_LOADED","trigger":"bus"/.test(line)),
    );
  });

  it('leaves a process that reloaded other manifests alone saying its catalog differs', async () => {
    const [asked, other] = gateways as [TestGateway, TestGateway];
    const petshop = PETSHOP_MANIFESTS.find((file) => basename(file) === 'petshop.yaml')!;
    copyFileSync(petshop, join(other.manifestsDir, 'petshop.yaml'));
    // A local reload (SIGHUP) of one process only.
    await other.gateway.reloadCatalog('signal');
    const differs = await readiness(other);
    expect(differs.catalog.differsFrom).toEqual([asked.gateway.processId]);
    expect(differs.catalog.warning).toMatch(/another catalog than 1 other process/);
    await eventually(async () => (await readiness(asked)).catalog.differsFrom.length === 1);
    expect((await readiness(asked)).catalog.differsFrom).toEqual([other.gateway.processId]);
  });
});
