/**
 * A gateway process as it last announced itself: what an operator compares across the processes
 * of a deployment (`/readyz`), and how long ago each was heard of.
 */
export interface ProcessRecord {
  /** Unique per process start. */
  id: string;
  /** The machine (container) and process id it runs as. */
  host: string;
  pid: number;
  startedAt: string;
  /** The catalog it serves (see CatalogSnapshot). */
  catalog: { version: number; fingerprint: string };
  /** When it announced itself last. */
  seenAt: string;
}

/** The live processes of the deployment, each listed while it keeps announcing itself. */
export interface ProcessDirectory {
  /** Lists (or updates) `record` until `ttlMs` passes without another announcement. */
  announce(record: ProcessRecord, ttlMs: number): Promise<void>;
  /** The processes whose last announcement has not expired, by id. */
  list(): Promise<ProcessRecord[]>;
  /** Unlists a process (at shutdown). */
  withdraw(id: string): Promise<void>;
}

/** The directory of one process (the embedded default): it lists that process only. */
export class MemoryProcessDirectory implements ProcessDirectory {
  private readonly records = new Map<string, { record: ProcessRecord; expiresAt: number }>();

  announce(record: ProcessRecord, ttlMs: number): Promise<void> {
    this.records.set(record.id, { record: structuredClone(record), expiresAt: Date.now() + ttlMs });
    return Promise.resolve();
  }

  list(): Promise<ProcessRecord[]> {
    const now = Date.now();
    const live: ProcessRecord[] = [];
    for (const [id, { record, expiresAt }] of this.records)
      if (expiresAt <= now) this.records.delete(id);
      else live.push(structuredClone(record));
    return Promise.resolve(live.sort((a, b) => (a.id < b.id ? -1 : 1)));
  }

  withdraw(id: string): Promise<void> {
    this.records.delete(id);
    return Promise.resolve();
  }
}
