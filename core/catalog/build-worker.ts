/**
 * A catalog build worker's entry (a child process build-pool.ts starts): builds one manifest per
 * request with the plugin declarations it was set up with, and answers with the plain
 * ProviderBuild. It ends with its parent (the IPC channel closes).
 */
import type { WorkerMessage, WorkerRequest } from './build-pool.js';
import { PluginRegistry } from './plugins/registry.js';
import { buildProvider } from './provider.js';

const registry = new PluginRegistry();
const reply = (message: WorkerMessage): void => void process.send?.(message);

process.on('message', (request: WorkerRequest) => {
  if ('setup' in request) {
    for (const declaration of request.setup.declarations) registry.declare(declaration);
    return;
  }
  // maxRSS is in KiB: this process's peak so far, which its builds raise.
  const rssPeak = (): number => process.resourceUsage().maxRSS * 1024;
  buildProvider(request.file, registry).then(
    (build) => reply({ build, rssPeak: rssPeak() }),
    (error: unknown) =>
      reply({ error: error instanceof Error ? error.message : String(error), rssPeak: rssPeak() }),
  );
});
process.on('disconnect', () => process.exit(0));
reply({ ready: true });
