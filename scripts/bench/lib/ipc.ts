import type { KeyType } from '../../../core/domain.js';
/** The messages between run.ts and its bench-only child processes (gateway.ts, catalog.ts). */

export type BenchCommand =
  | { id: number; cmd: 'heap' }
  | { id: number; cmd: 'key'; client: string; keyType: KeyType }
  | { id: number; cmd: 'reload' }
  | { id: number; cmd: 'sessions' }
  | { id: number; cmd: 'profile-start' }
  | { id: number; cmd: 'profile-stop'; file: string }
  | { id: number; cmd: 'exit' };

/** Distributes Omit over the union, so each command keeps its own fields. */
export type BenchCommandInput = BenchCommand extends infer C
  ? C extends { id: number }
    ? Omit<C, 'id'>
    : never
  : never;

export interface BenchReply {
  type: 'reply';
  id: number;
  ok: boolean;
  result: unknown;
}

export interface GatewayReady {
  type: 'ready';
  url: string;
  /** Milliseconds from process start until the gateway's modules were imported. */
  importMs: number;
  /** Gateway.create: store, migrations, keys, catalog load. */
  createMs: number;
  /** listen(): the HTTP server bound, timers started. */
  listenMs: number;
  tools: number;
  providers: number;
}

/** What catalog.ts reports for one cold build. */
export interface CatalogProbe {
  type: 'catalog';
  ms: number;
  providers: number;
  tools: number;
  failed: string[];
  /** Resident set before the build and at its peak (bytes). */
  rssBefore: number;
  rssPeak: number;
  heapUsedAfter: number;
}
