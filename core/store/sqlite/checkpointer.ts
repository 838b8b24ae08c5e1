import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the checkpointer copies what the WAL holds into the database file, by default. */
const CHECKPOINT_MS = 1_000;

/**
 * The worker's code: its own connection to the file, a PASSIVE checkpoint on a timer (it never
 * waits for, nor blocks, the server's connection), reported when it copied pages; on 'close', a
 * last one, then the connection closed. CommonJS evaluated as is, so that it runs alike from the
 * compiled gateway and from source (tsx, vitest); the driver comes by its resolved path.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
// The driver's errors reach the owner as plain objects without their message: thrown as Errors.
const sqlite = (work) => {
  try {
    return work();
  } catch (error) {
    throw new Error(String(error && error.message ? error.message : error));
  }
};
const db = sqlite(() => new Database(workerData.file, { fileMustExist: true }));
// The WAL's frames and how many are in the file: the same two again mean nothing was copied; fewer
// frames than were copied before, a WAL started over.
let last = { log: 0, checkpointed: 0 };
const checkpoint = () => {
  const [now] = sqlite(() => db.pragma('wal_checkpoint(PASSIVE)'));
  const restarted = now.log < last.checkpointed;
  const copied = now.checkpointed - (restarted ? 0 : last.checkpointed);
  if (copied > 0) parentPort.postMessage(copied);
  last = now;
};
const timer = setInterval(checkpoint, workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  checkpoint();
  db.close();
  parentPort.close();
});
`;

export interface CheckpointerOptions {
  /** Between checkpoints ({@link CHECKPOINT_MS} by default). */
  everyMs?: number;
  /** Pages a checkpoint copied into the database file. */
  onCheckpoint?: (pages: number) => void;
  /**
   * The worker failed (`error`: why, when it said) or stopped on its own: the connection must
   * checkpoint again itself.
   */
  onFailure: (error: Error | undefined) => void;
}

/**
 * Checkpoints a WAL-mode database from a worker thread, for a connection that no longer does so
 * itself (`wal_autocheckpoint = 0`). SQLite's own checkpoint runs inside the commit that takes the
 * WAL past 1,000 pages: it copies them and syncs both files while the event loop waits, 28-41 ms
 * once every ~16,000 audit entries, about 2 µs an entry in all (README, Performance: the audit
 * trail). A checkpoint changes nothing a reader sees and loses nothing on a crash: the WAL holds
 * every commit until it is copied.
 */
export class Checkpointer {
  private readonly worker: Worker;
  private closing = false;
  private readonly exited: Promise<void>;

  constructor(file: string, options: CheckpointerOptions) {
    this.worker = new Worker(WORKER, {
      eval: true,
      workerData: {
        file,
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        everyMs: options.everyMs ?? CHECKPOINT_MS,
      },
    });
    // It keeps no process alive: a server is kept by its listener, a command ends when it is done.
    this.worker.unref();
    this.worker.on('message', (pages: number) => options.onCheckpoint?.(pages));
    // An error ends the worker too: 'exit' follows, so the failure is handled there, once.
    let failure: Error | undefined;
    this.worker.on('error', (error) => (failure = error));
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', () => {
        if (!this.closing) options.onFailure(failure);
        resolve();
      }),
    );
  }

  /** A last checkpoint, then the worker's connection closed; resolves once the worker has exited. */
  close(): Promise<void> {
    this.closing = true;
    // Held now: nothing else may keep the process alive while it is closing.
    this.worker.ref();
    this.worker.postMessage('close');
    return this.exited;
  }
}
