/**
 * A catalog build worker's entry (a child process build-pool.ts starts): builds one manifest per
 * request with the plugin declarations the request carries, and answers with the plain
 * ProviderBuild. It ends with its parent (the IPC channel closes).
 */
import type { WorkerMessage, WorkerRequest } from './build-pool.js';
import { PluginRegistry } from './plugins/registry.js';
import { buildProvider } from './provider.js';

const reply = (message: WorkerMessage): void => void process.send?.(message);

process.on('message', ({ file, declarations }: WorkerRequest) => {
  const registry = new PluginRegistry();
  for (const declaration of declarations) registry.declare(declaration);
  // maxRSS is in KiB: this process's peak so far, which its builds raise.
  const rssPeak = (): number => process.resourceUsage().maxRSS * 1024;
  buildProvider(file, registry).then(
    (build) => reply({ build, rssPeak: rssPeak() }),
    (error: unknown) =>
      reply({ error: error instanceof Error ? error.message : String(error), rssPeak: rssPeak() }),
  );
});
process.on('disconnect', () => process.exit(0));
reply({ ready: true });
