/**
 * A catalog build worker's entry (build-pool.ts starts it): builds one manifest per request with
 * the plugin declarations it was started with, and answers with the plain ProviderBuild.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { BuildRequest, WorkerMessage, WorkerSetup } from './build-pool.js';
import { PluginRegistry } from './plugins/registry.js';
import { buildProvider } from './provider.js';

const port = parentPort;
if (!port) throw new Error('build-worker.ts runs as a worker thread (see build-pool.ts)');
const registry = new PluginRegistry();
for (const declaration of (workerData as WorkerSetup).declarations) registry.declare(declaration);

const reply = (message: WorkerMessage): void => port.postMessage(message);
port.on('message', ({ file }: BuildRequest) => {
  buildProvider(file, registry).then(
    (build) => reply({ build }),
    (error: unknown) => reply({ error: error instanceof Error ? error.message : String(error) }),
  );
});
reply({ ready: true });
