/**
 * Reading one manifest: the YAML with its source positions, pass 1 (structure), the OpenAPI
 * document it references, and the content hash that keys the compile cache.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import type { PluginRegistry } from './plugins/registry.js';
import type { Manifest } from './manifest-schema.js';
import { checkStructure } from './structure.js';
import type { Finding, ProviderEntry } from './types.js';
import { YamlSource } from './yaml-source.js';

export interface ManifestFile {
  file: string;
  /** The provider id the file name implies (`manifests/<id>.yaml`). */
  id: string;
  source: YamlSource;
  /** Present when pass 1 found no error. */
  manifest?: Manifest;
  /** YAML and structure findings. */
  findings: Finding[];
  /** Absolute path of the OpenAPI document, when the manifest names one. */
  documentFile?: string;
  /** That document's bytes, when it exists (read once, for the hash and the compiler). */
  document?: Buffer;
  /** sha256 over the manifest, its document and its plugin's declaration. */
  contentHash: string;
}

/** The provider id a manifest file name implies. */
export function idFromFile(file: string): string {
  return basename(file).replace(/\.ya?ml$/, '');
}

/** Reads and checks the manifest whose file holds `bytes`. */
export async function readManifest(
  file: string,
  bytes: Buffer,
  registry: PluginRegistry,
): Promise<ManifestFile> {
  const source = new YamlSource(file, bytes.toString('utf8'));
  const base = { file, id: idFromFile(file), source };
  const failed = (findings: Finding[]): ManifestFile => ({
    ...base,
    findings,
    contentHash: createHash('sha256').update(bytes).digest('hex'),
  });
  if (source.findings.length > 0) return failed(source.findings);

  const { manifest, findings } = checkStructure(source, source.toJS());
  if (!manifest) return failed(findings);

  let documentFile: string | undefined;
  let document: Buffer | undefined;
  if (manifest.openapi) {
    documentFile = resolve(dirname(file), manifest.openapi.file);
    document = await readDocument(documentFile);
  }
  return {
    ...base,
    manifest,
    findings,
    ...(documentFile !== undefined ? { documentFile } : {}),
    ...(document !== undefined ? { document } : {}),
    contentHash: contentHash(
      bytes,
      manifest.openapi ? (document ?? '') : undefined,
      manifest.plugin,
      registry,
    ),
  };
}

/**
 * Whether `entry` is still what the manifest `bytes` build: the same content hash, over the
 * document the entry's manifest named and its plugin's declaration as they are now. Bytes equal to
 * those the entry was built from name the same document and plugin, so nothing is parsed (parsing
 * the YAML was most of an unchanged reload's time). This runs on the main thread, before a build is
 * handed to a worker (build-pool.ts), so an unchanged reload starts no worker.
 */
export async function isUnchanged(
  entry: ProviderEntry,
  file: string,
  bytes: Buffer,
  registry: PluginRegistry,
): Promise<boolean> {
  if (entry.openapiFile === undefined)
    return contentHash(bytes, undefined, entry.plugin, registry) === entry.contentHash;
  const hash = createHash('sha256').update(bytes).update(DOCUMENT);
  try {
    // A chunk per turn of the event loop: hashing a 25 MB document at once held this thread 30-100 ms.
    for await (const chunk of createReadStream(resolve(dirname(file), entry.openapiFile)))
      hash.update(chunk as Buffer);
  } catch {
    return false;
  }
  return finish(hash, entry.plugin, registry) === entry.contentHash;
}

function readDocument(file: string): Promise<Buffer | undefined> {
  return readFile(file).catch(() => undefined);
}

/**
 * The content hash of a manifest that passes pass 1: sha256 over its bytes, its document's
 * (`undefined` when it names none, empty when that does not exist) and its plugin's declaration.
 */
function contentHash(
  bytes: Buffer,
  document: Buffer | string | undefined,
  plugin: string | undefined,
  registry: PluginRegistry,
): string {
  const hash = createHash('sha256').update(bytes);
  if (document !== undefined) hash.update(DOCUMENT).update(document);
  return finish(hash, plugin, registry);
}

// Separators keep (manifest, document) pairs from hashing alike when bytes shift between them.
const DOCUMENT = '\0document\0';

/** Ends a content hash begun over the manifest (and its document) with the plugin's declaration. */
function finish(hash: Hash, plugin: string | undefined, registry: PluginRegistry): string {
  const declaration = plugin === undefined ? undefined : registry.declaration(plugin);
  return hash
    .update('\0plugin\0')
    .update(JSON.stringify(declaration ?? null))
    .digest('hex');
}
