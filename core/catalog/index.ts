/**
 * The catalog's public surface for the server, the CLI and the tools: build or hold snapshots,
 * validate a manifests directory, format findings.
 */
export {
  buildCatalog,
  emptySnapshot,
  validateCatalogDir,
  type BuildCatalogOptions,
  type CatalogReport,
} from './catalog.js';
export { warmBuildWorker } from './build-pool.js';
export {
  CatalogHolder,
  logCatalogReport,
  type CatalogHolderEvents,
  type CatalogHolderOptions,
} from './holder.js';
export { FINDING_CODES, formatFinding, formatFindings, hasErrors, type FindingCode } from './findings.js';
export type { Manifest } from './manifest-schema.js';
export * from './types.js';
