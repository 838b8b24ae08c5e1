import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../helpers/clients.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { SLOWPOKE_MANIFEST } from '../../helpers/slowpoke.js';

let held: ServerResponse | undefined;
let arrived: Promise<unknown>;
const upstream = createServer((_req, res) => {
  held = res;
  upstream.emit('held');
});
let tg: TestGateway;

beforeAll(async () => {
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  const { port } = upstream.address() as { port: number };
  const manifest = join(mkdtempSync(join(tmpdir(), 'toolgate-slow-')), 'slowpoke.yaml');
  writeFileSync(manifest, SLOWPOKE_MANIFEST);
  tg = await startGateway(
    { TOOLGATE_ALLOW_PRIVATE_NETWORK: '1', TOOLGATE_PROVIDER_SLOWPOKE_BASE_URL: `http://127.0.0.1:${port}` },
    { manifestFiles: [manifest] },
  );
  arrived = once(upstream, 'held');
});
afterAll(async () => {
  upstream.closeAllConnections();
  upstream.close();
  await tg.close();
});

describe('graceful shutdown', () => {
  it('stops accepting, lets the call in flight finish, then closes', async () => {
    const { key } = await tg.key('solo');
    const client = await connect('2026-07-28', tg.mcpUrl(), { 'X-API-Key': key });
    const call = client.callTool('slowpoke_wait');
    await arrived;

    const closing = tg.gateway.close();
    // New requests are refused while the call in flight is still running.
    const refused = await fetch(`${tg.url}/healthz`).then(
      (response) => response.status,
      () => 'connection refused',
    );
    expect([503, 'connection refused']).toContain(refused);

    held!.writeHead(200, { 'content-type': 'application/json' }).end('{"done":true}');
    const result = await call;
    expect(result.isError).toBeFalsy();
    expect(result.content[0]!.text).toContain('"done":true');
    await closing;
  });
});
