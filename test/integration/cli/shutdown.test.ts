import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startServe, type Serving } from '../../helpers/cli.js';
import { connect, GENERATIONS, type TestClient } from '../../helpers/clients.js';
import { freePort } from '../../helpers/gateway.js';
import { SLOWPOKE_MANIFEST } from '../../helpers/slowpoke.js';

/**
 * SIGTERM the way a user sends it (issue 18): to the process group `npm start` or a supervisor
 * runs the gateway in, which also holds whatever reads its log (`npm start | tee`), with clients of
 * every generation holding streams open. Gateways stopped so were found alive 40 minutes later,
 * their listener closed: pino's asynchronous stdout flushed at exit and retried the broken pipe
 * forever. Each test awaits the process's exit; a hang fails it at the test's timeout.
 */
let dataDir: string;
const clients: TestClient[] = [];
let serving: Serving | undefined;
beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'toolgate-shutdown-'));
});
afterEach(async () => {
  // A gateway that did not exit (the failure these tests look for) does not outlive its test.
  if (serving && serving.child.exitCode === null && serving.child.signalCode === null)
    process.kill(-serving.child.pid!, 'SIGKILL');
  serving = undefined;
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => undefined)));
  rmSync(dataDir, { recursive: true, force: true });
});

/** Starts `toolgate serve` as a process group's leader, with one client of each generation. */
async function serveWithClients(env: Record<string, string> = {}): Promise<Serving> {
  const port = await freePort();
  const started = await startServe(
    {
      TOOLGATE_DATA_DIR: dataDir,
      TOOLGATE_PORT: String(port),
      TOOLGATE_BASE_URL: `http://127.0.0.1:${port}`,
      ...env,
    },
    true,
  );
  serving = started;
  const key = /toolgate_[0-9A-Za-z]{49}/.exec(started.output())![0];
  const url = new URL(`http://127.0.0.1:${port}/mcp/`);
  for (const generation of GENERATIONS) {
    const client = await connect(generation, url, { 'X-API-Key': key });
    clients.push(client);
    await client.watchToolsChanged(() => {});
  }
  return started;
}

function exited(gateway: Serving): Promise<[number | null, NodeJS.Signals | null]> {
  const { child } = gateway;
  if (child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve([child.exitCode, child.signalCode]);
  return once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
}

/** Resolves once the gateway has printed `text`. */
function printed(gateway: Serving, text: string): Promise<void> {
  return new Promise((resolve) => {
    const check = (): void => {
      if (gateway.output().includes(text)) resolve();
      else gateway.child.stdout!.once('data', check);
    };
    check();
  });
}

const signalGroup = (gateway: Serving): void => void process.kill(-gateway.child.pid!, 'SIGTERM');

describe('SIGTERM to the process group', () => {
  it('shuts down once however often the signal comes, lets the call in flight finish, and exits 0', async () => {
    const upstream = await holdingUpstream();
    try {
      const gateway = await serveWithClients(upstream.env());
      const call = legacyClient().callTool('slowpoke_wait');
      const [, held] = await upstream.arrived;
      const exit = exited(gateway);
      signalGroup(gateway);
      // Again while the first shutdown waits for the call (two signals at once are delivered as one).
      await printed(gateway, '"msg":"shutting down"');
      signalGroup(gateway);
      await printed(gateway, '"msg":"already shutting down"');
      held.writeHead(200, { 'content-type': 'application/json' }).end('{"done":true}');
      expect((await call).content[0]!.text).toContain('"done":true');
      expect(await exit).toEqual([0, null]);
      expect(gateway.output().match(/"msg":"shutting down"/g)).toHaveLength(1);
    } finally {
      upstream.close();
    }
  }, 30_000);

  it('exits when the reader of its log went away with the group (a broken stdout pipe)', async () => {
    const gateway = await serveWithClients();
    const exit = exited(gateway);
    // The log's reader dies with the group: the gateway's stdout and stderr become broken pipes.
    gateway.child.stdout!.destroy();
    gateway.child.stderr!.destroy();
    signalGroup(gateway);
    expect(await exit).toEqual([0, null]);
  }, 30_000);

  it('exits after its bound, saying so, when a call in flight would hold it longer', async () => {
    const upstream = await holdingUpstream();
    try {
      // The outbound timeout (30 s) is beyond the bound: the grace (0 here) plus 5 s.
      const gateway = await serveWithClients({ ...upstream.env(), TOOLGATE_SHUTDOWN_GRACE_MS: '0' });
      void legacyClient()
        .callTool('slowpoke_wait')
        .catch(() => undefined);
      await upstream.arrived;
      const exit = exited(gateway);
      signalGroup(gateway);
      expect(await exit).toEqual([1, null]);
      expect(gateway.output()).toMatch(
        /"code":"TG_SHUTDOWN_FORCED".*"msg":"shutdown did not finish within 5000 ms/,
      );
    } finally {
      upstream.close();
    }
  }, 30_000);
});

/** The 2025-era client of {@link serveWithClients}: its calls are not cut when the caller goes. */
function legacyClient(): TestClient {
  return clients[GENERATIONS.indexOf('2025 (v1 client)')]!;
}

/** A provider API on loopback that holds every request until the test answers it. */
async function holdingUpstream() {
  const upstream = createServer();
  const arrived = once(upstream, 'request') as Promise<[IncomingMessage, ServerResponse]>;
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  writeFileSync(join(dataDir, 'slowpoke.yaml'), SLOWPOKE_MANIFEST);
  return {
    arrived,
    env: () => ({
      TOOLGATE_MANIFESTS_DIR: dataDir,
      TOOLGATE_ALLOW_PRIVATE_NETWORK: '1',
      TOOLGATE_PROVIDER_SLOWPOKE_BASE_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    }),
    close() {
      upstream.closeAllConnections();
      upstream.close();
    },
  };
}
