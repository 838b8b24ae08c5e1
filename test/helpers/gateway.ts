import { EventEmitter } from 'node:events';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { loadConfig } from '../../core/config.js';
import { Gateway, type GatewayOptions } from '../../core/gateway.js';
import type { KeyType } from '../../core/domain.js';

export { freePort } from './ports.js';

export interface TestGateway {
  gateway: Gateway;
  /** http://127.0.0.1:<port> */
  url: string;
  dataDir: string;
  /** The manifests directory the gateway watches (inside dataDir). */
  manifestsDir: string;
  /** Every log line the gateway wrote, as text. */
  logs: string[];
  /** Emits 'line' for each log line written. */
  logEvents: EventEmitter;
  /** The MCP endpoint with an optional query string ("?user_id=u1"). */
  mcpUrl(query?: string): URL;
  key(type: KeyType, client?: string): Promise<{ key: string; id: string }>;
  close(): Promise<void>;
}

/** Starts the real gateway on an ephemeral loopback port with a fresh data dir. */
export async function startGateway(
  env: Record<string, string> = {},
  options: Omit<GatewayOptions, 'config' | 'logStream'> & { manifestFiles?: string[] } = {},
): Promise<TestGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), 'toolgate-test-'));
  const manifestsDir = join(dataDir, 'manifests');
  mkdirSync(manifestsDir);
  for (const file of options.manifestFiles ?? []) copyFileSync(file, join(manifestsDir, basename(file)));
  const logs: string[] = [];
  const logEvents = new EventEmitter();
  const config = loadConfig({
    TOOLGATE_DATA_DIR: dataDir,
    TOOLGATE_HOST: '127.0.0.1',
    TOOLGATE_PORT: '0',
    TOOLGATE_LOG_LEVEL: 'debug',
    TOOLGATE_MANIFESTS_DIR: manifestsDir,
    ...env,
  });
  const gateway = await Gateway.create({
    ...(options.plugins ? { plugins: options.plugins } : {}),
    config,
    logStream: {
      write: (line: string) => {
        logs.push(line);
        logEvents.emit('line', line);
      },
    },
  });
  const url = await gateway.listen();
  return {
    gateway,
    url,
    dataDir,
    manifestsDir,
    logs,
    logEvents,
    mcpUrl: (query = '') => new URL(`${url}/mcp/${query}`),
    async key(type, client = 'acme') {
      const { key, record } = await gateway.keys.create(client, type);
      return { key, id: record.id };
    },
    async close() {
      await gateway.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Resolves once `predicate()` holds, re-checking on every `event` from `emitter` (no polling). */
export function until(emitter: NodeJS.EventEmitter, event: string, predicate: () => boolean): Promise<void> {
  if (predicate()) return Promise.resolve();
  return new Promise((resolve) => {
    const check = (): void => {
      if (!predicate()) return;
      emitter.off(event, check);
      resolve();
    };
    emitter.on(event, check);
  });
}

/**
 * POSTs `body` (sent as it is when a string, else as JSON) to an MCP URL with the key, the JSON
 * content type and the Accept a Streamable HTTP client sends, plus `headers`.
 */
export function postMcp(
  url: string | URL,
  key: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'x-api-key': key,
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
