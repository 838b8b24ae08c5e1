import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';

let tg: TestGateway;
beforeAll(async () => {
  tg = await startGateway();
});
afterAll(() => tg.close());

describe('health endpoints', () => {
  it('/healthz answers while the process runs, without a key', async () => {
    const response = await fetch(`${tg.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
  });

  it('/readyz reports the store and the catalog', async () => {
    const response = await fetch(`${tg.url}/readyz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ status: 'ready', store: 'ok', catalog: { failed: {} } });
  });

  it('/readyz lists this process, with the catalog it serves', async () => {
    const ready = (await (await fetch(`${tg.url}/readyz`)).json()) as {
      coordination: string;
      catalog: { fingerprint: string; differsFrom: string[] };
      processes: { id: string; pid: number; self: boolean; catalog: { fingerprint: string } }[];
    };
    expect(ready.coordination).toBe('ok');
    expect(ready.catalog.fingerprint).toMatch(/^[0-9a-f]{16}$/);
    expect(ready.processes).toEqual([
      expect.objectContaining({
        id: tg.gateway.processId,
        pid: process.pid,
        self: true,
        catalog: expect.objectContaining({ fingerprint: ready.catalog.fingerprint }) as unknown,
      }),
    ]);
    expect(ready.catalog.differsFrom).toEqual([]);
  });

  it('/readyz answers 503 once the store is unreachable', async () => {
    const broken = await startGateway();
    try {
      await broken.gateway.store.close();
      const response = await fetch(`${broken.url}/readyz`);
      expect(response.status).toBe(503);
      expect(await response.json()).toMatchObject({ status: 'unavailable', store: 'unreachable' });
    } finally {
      await broken.close();
    }
  });

  it('answers unknown paths with the catalogue 404', async () => {
    const response = await fetch(`${tg.url}/nope`);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('TG_ERR_NOT_FOUND');
  });
});
