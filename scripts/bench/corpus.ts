/**
 * Compiles real OpenAPI documents one after the other in one process:
 * `corpus.ts <list.json> <scratch dir>`, the list naming the documents. Each gets a manifest
 * selecting every operation, built as the gateway builds a provider (buildProvider); one JSON line
 * per document (DocumentProbe) is printed as soon as it is done, so the parent can tell which
 * document a stuck or dying process was on.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { PluginRegistry } from '../../core/catalog/plugins/registry.js';
import { buildProvider } from '../../core/catalog/provider.js';
import { writeOpenApiManifest } from './lib/fixtures.js';
import type { DocumentProbe } from './lib/ipc.js';
import { schemaSize } from '../../core/catalog/openapi/schema.js';

/** Findings that stand for one operation each, skipped. */
const SKIPPED = new Set(['TG_OPENAPI_UNSUPPORTED', 'TG_OPENAPI_BAD_SCHEMA']);

async function main(): Promise<void> {
  const [list, dir] = process.argv.slice(2);
  if (!list || !dir) throw new Error('usage: corpus.ts <list.json> <scratch dir>');
  const registry = new PluginRegistry();
  const files = JSON.parse(readFileSync(list, 'utf8')) as string[];
  for (const [i, file] of files.entries()) {
    const id = `doc${i}`;
    writeOpenApiManifest(dir, id, file, 'A document of the catalog benchmark corpus.');
    const started = performance.now();
    const build = await buildProvider(join(dir, `${id}.yaml`), registry);
    const ms = performance.now() - started;
    const tools = build.entry?.tools ?? [];
    const error = build.entry ? undefined : build.findings.find((f) => f.severity === 'error')?.code;
    const probe: DocumentProbe = {
      type: 'document',
      file,
      ms,
      operations: tools.length + build.findings.filter((f) => SKIPPED.has(f.code)).length,
      tools: tools.length,
      ...(error !== undefined ? { error } : {}),
      maxInputBytes: Math.max(0, ...tools.map((t) => schemaSize(t.inputSchema).bytes)),
      rssPeak: process.resourceUsage().maxRSS * 1024,
    };
    process.stdout.write(`${JSON.stringify(probe)}\n`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${String((error as Error).stack ?? error)}\n`);
  process.exit(1);
});
