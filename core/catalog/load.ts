/**
 * Reading one manifest: the YAML with its source positions, pass 1 (structure), the OpenAPI
 * document it references, and the content hash that keys the compile cache.
 */
import { createHash, type Hash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
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

  const hash = createHash('sha256').update(bytes);
  let documentFile: string | undefined;
  let document: Buffer | undefined;
  if (manifest.openapi) {
    documentFile = resolve(dirname(file), manifest.openapi.file);
    document = await readDocument(documentFile, hash.update(DOCUMENT));
  }
  return {
    ...base,
    manifest,
    findings,
    ...(documentFile !== undefined ? { documentFile } : {}),
    ...(document !== undefined ? { document } : {}),
    contentHash: finish(hash, manifest.plugin, registry),
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
    return finish(createHash('sha256').update(bytes), entry.plugin, registry) === entry.contentHash;
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

/** Bytes of a document read at a time: each chunk is hashed while the next one is read. */
const READ_CHUNK = 1024 * 1024;

/**
 * A document's bytes, fed to `hash` as they are read: a chunk is hashed while the thread pool reads
 * the next, where reading the whole file and then hashing it did one after the other (GitHub's
 * 13 MB description: ~10-15 ms of reading, then ~8 of hashing). Undefined when the file cannot be
 * read (the hash then fed with none of it, or part).
 */
async function readDocument(file: string, hash: Hash): Promise<Buffer | undefined> {
  const handle = await open(file).catch(() => undefined);
  if (!handle) return undefined;
  try {
    const { size } = await handle.stat();
    const bytes = Buffer.allocUnsafeSlow(size);
    let length = 0;
    let reading = handle.read(bytes, 0, Math.min(READ_CHUNK, size), 0);
    for (;;) {
      const { bytesRead } = await reading;
      const start = length;
      length += bytesRead;
      const more = bytesRead > 0 && length < size;
      if (more) reading = handle.read(bytes, length, Math.min(READ_CHUNK, size - length), length);
      hash.update(bytes.subarray(start, length));
      if (!more) return bytes.subarray(0, length);
    }
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
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
