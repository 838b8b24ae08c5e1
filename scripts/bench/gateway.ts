/**
 * Toolgate under test, in its own process (started by run.ts with `--expose-gc` and an IPC channel).
 * It is the production composition root (Gateway.create with every plugin, logging at info to
 * stdout) plus a few commands over IPC that only this bench process answers: heap after GC, key
 * creation, connections stored without a provider to check them, catalog reload timing, CPU
 * profiling, exit. Nothing here is reachable over HTTP: the gateway gains no endpoint that exposes
 * its internals.
 *
 * Settings come from the environment (TOOLGATE_*), like `toolgate serve`.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../../core/config.js';
import { Gateway } from '../../core/gateway.js';
import { PLUGINS } from '../../plugins/index.js';
import type { BenchCommand, BenchReply, GatewayReady, ProfileKind } from './lib/ipc.js';

const importedAt = performance.now();

async function heap(): Promise<NodeJS.MemoryUsage> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  // Two full collections with a turn of the event loop between them: objects freed by the first
  // one's weak callbacks and finalizers are collected by the second.
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage();
}

/**
 * V8's sampling profilers, started and stopped around one load window so the profile holds the
 * requests and not the start-up: the CPU profiler (what `node --cpu-prof` runs), or the heap
 * profiler with the objects garbage collection freed kept in the samples (nearly everything a
 * request allocates is freed by the next scavenge; without them a profile shows what survived).
 */
const profiler = new Session();
let profiling: ProfileKind = 'cpu';

async function profileStart(kind: ProfileKind): Promise<void> {
  profiling = kind;
  profiler.connect();
  if (kind === 'heap') {
    await profiler.post('HeapProfiler.enable');
    await profiler.post('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
    return;
  }
  await profiler.post('Profiler.enable');
  await profiler.post('Profiler.setSamplingInterval', { interval: 250 });
  await profiler.post('Profiler.start');
}

async function profileStop(file: string): Promise<string> {
  const { profile } =
    profiling === 'heap'
      ? await profiler.post('HeapProfiler.stopSampling')
      : await profiler.post('Profiler.stop');
  writeFileSync(file, JSON.stringify(profile));
  profiler.disconnect();
  return file;
}

async function main(): Promise<void> {
  const send = (message: GatewayReady | BenchReply): void => {
    process.send?.(message);
  };
  const config = loadConfig(process.env);
  const t0 = performance.now();
  const gateway = await Gateway.create({ config, plugins: PLUGINS });
  const created = performance.now();
  const url = await gateway.listen();
  const listening = performance.now();
  send({
    type: 'ready',
    url,
    importMs: importedAt,
    createMs: created - t0,
    listenMs: listening - created,
    tools: gateway.catalog.current.tools.size,
    providers: gateway.catalog.current.providers.size,
  });

  process.on('message', (raw: BenchCommand) => {
    const reply = (result: unknown): void => send({ type: 'reply', id: raw.id, ok: true, result });
    const fail = (error: unknown): void =>
      send({ type: 'reply', id: raw.id, ok: false, result: String((error as Error).stack ?? error) });
    const run = async (): Promise<unknown> => {
      switch (raw.cmd) {
        case 'heap':
          return heap();
        case 'key': {
          const { key } = await gateway.keys.create(raw.client, raw.keyType);
          return key;
        }
        case 'connect': {
          const client = await gateway.store.keys.findClient(raw.client);
          if (!client) throw new Error(`no client ${raw.client}: create its key first`);
          const scope = { clientId: client.id, orgId: null, userId: raw.userId };
          const ids = raw.providers === 'all' ? [...gateway.catalog.current.providers.keys()] : raw.providers;
          for (const id of ids)
            await gateway.connections.store(
              scope,
              id,
              { credentials: { api_key: 'bench' }, fields: {} },
              null,
            );
          return ids;
        }
        case 'reload': {
          const started = performance.now();
          const report = await gateway.reloadCatalog();
          return {
            ms: performance.now() - started,
            swapped: report.swapped,
            unchanged: report.unchanged.length,
          };
        }
        case 'sessions':
          return gateway.coordination.sessions.count();
        case 'profile-start':
          return profileStart(raw.kind);
        case 'profile-stop':
          return profileStop(raw.file);
        case 'exit':
          await gateway.close();
          // Exit after the reply is sent, so --cpu-prof writes its profile on a normal exit.
          setImmediate(() => process.exit(0));
          return true;
      }
    };
    run().then(reply, fail);
  });
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});
