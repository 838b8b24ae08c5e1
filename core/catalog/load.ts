/**
 * Reading one manifest: the YAML with its source positions, pass 1 (structure), the OpenAPI
 * document it references, and the content hash that keys the compile cache.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { basename, dirname, resolve } from 'node:path';
import type { PluginRegistry } from '../plugins/registry.js';
import type { Manifest } from './manifest-schema.js';
import { checkStructure } from './structure.js';
import type { Finding } from './types.js';
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
  /** Whether that document exists (it is read for the hash). */
  documentFound: boolean;
  /** sha256 over the manifest, its document and its plugin's declaration. */
  contentHash: string;
}

/** The provider id a manifest file name implies. */
export function idFromFile(file: string): string {
  return basename(file).replace(/\.ya?ml$/, '');
}

export async function readManifest(file: string, registry: PluginRegistry): Promise<ManifestFile> {
  const bytes = await readFile(file);
  const hash = createHash('sha256').update(bytes);
  const source = new YamlSource(file, bytes.toString('utf8'));
  const base = { file, id: idFromFile(file), source, documentFound: false };
  if (source.findings.length > 0)
    return { ...base, findings: source.findings, contentHash: hash.digest('hex') };

  const { manifest, findings } = checkStructure(source, source.toJS());
  if (!manifest) return { ...base, findings, contentHash: hash.digest('hex') };

  let documentFile: string | undefined;
  let documentFound = false;
  if (manifest.openapi) {
    documentFile = resolve(dirname(file), manifest.openapi.file);
    const document = await readFile(documentFile).catch(() => undefined);
    documentFound = document !== undefined;
    // Separators keep (manifest, document) pairs from hashing alike when bytes shift between them.
    hash.update('\0document\0').update(document ?? '');
  }
  const plugin = manifest.plugin === undefined ? undefined : registry.declaration(manifest.plugin);
  hash.update('\0plugin\0').update(JSON.stringify(plugin ?? null));
  return {
    ...base,
    manifest,
    findings,
    ...(documentFile !== undefined ? { documentFile } : {}),
    documentFound,
    contentHash: hash.digest('hex'),
  };
}
