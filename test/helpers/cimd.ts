/**
 * Client ID Metadata Documents served the way a real client serves them: over https, from a
 * loopback server whose certificate a throwaway CA signed, and a `toolgate serve` child process
 * trusting that CA (NODE_EXTRA_CA_CERTS is read when a process starts, so the gateway cannot be
 * the test's own process).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { runToolgate, startServe, type Serving } from './cli.js';
import { freePort } from './ports.js';
import { startReceiver, type Answer, type Received, type Receiver } from './receiver.js';
import type { KeyType } from '../../core/domain.js';

const run = promisify(execFile);

/** A CA made for one test run and a certificate for 127.0.0.1 it signed (PEM). */
interface Certificates {
  caFile: string;
  key: string;
  cert: string;
}

async function openssl(dir: string, args: string[]): Promise<void> {
  try {
    await run('openssl', args, { cwd: dir });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Error('openssl is missing: install Debian’s openssl package (apt-get install openssl).');
    throw error;
  }
}

async function makeCertificates(dir: string): Promise<Certificates> {
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  await openssl(dir, [
    'req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1',
    '-subj', '/CN=Toolgate test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE',
    '-addext', 'keyUsage=critical,keyCertSign',
  ]); // prettier-ignore
  await openssl(dir, ['req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
  writeFileSync(
    join(dir, 'server.ext'),
    'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n',
  );
  await openssl(dir, [
    'x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial',
    '-out', 'server.pem', '-days', '1', '-extfile', 'server.ext',
  ]); // prettier-ignore
  return {
    caFile: join(dir, 'ca.pem'),
    key: readFileSync(join(dir, 'server.key'), 'utf8'),
    cert: readFileSync(join(dir, 'server.pem'), 'utf8'),
  };
}

/** A metadata document as a client serves it: JSON, with its Cache-Control (kept ten minutes by default). */
export function documentAnswer(document: unknown, cacheControl = 'public, max-age=600'): Answer {
  return {
    status: 200,
    body: JSON.stringify(document),
    headers: { 'content-type': 'application/json', 'cache-control': cacheControl },
  };
}

export interface CimdGateway {
  /** The https server of the documents, with every request it received. */
  documents: Receiver;
  /** http://127.0.0.1:<port>, the gateway's base URL. */
  url: string;
  dataDir: string;
  serving: Serving;
  /** Creates a key with `toolgate keys create` on the gateway's data dir. */
  key(type: KeyType, client?: string): Promise<string>;
  /** How many times the gateway fetched the document at `path`. */
  fetches(path: string): number;
  /** Stops the gateway (SIGTERM, awaited), the document server, and removes their files. */
  close(): Promise<void>;
}

/**
 * Starts the https document server answering as `answer` and `toolgate serve` on a fresh data dir,
 * trusting the test CA and allowed to reach loopback addresses (TOOLGATE_ALLOW_PRIVATE_NETWORK).
 */
export async function startCimdGateway(answer: (req: Received) => Answer): Promise<CimdGateway> {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-cimd-'));
  const dataDir = join(dir, 'data');
  const certificates = await makeCertificates(dir);
  const documents = await startReceiver(answer, certificates);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    TOOLGATE_DATA_DIR: dataDir,
    TOOLGATE_HOST: '127.0.0.1',
    TOOLGATE_PORT: String(port),
    TOOLGATE_BASE_URL: url,
    TOOLGATE_LOG_LEVEL: 'info',
    TOOLGATE_ALLOW_PRIVATE_NETWORK: '1',
    NODE_EXTRA_CA_CERTS: certificates.caFile,
  };
  let serving: Serving;
  try {
    serving = await startServe(env);
  } catch (error) {
    await documents.close();
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    documents,
    url,
    dataDir,
    serving,
    async key(type, client = 'acme') {
      const created = await runToolgate(['keys', 'create', '--client', client, '--type', type], env);
      const key = /toolgate_[0-9A-Za-z]{49}/.exec(created.stdout)?.[0];
      if (created.code !== 0 || !key) throw new Error(`toolgate keys create failed:\n${created.stderr}`);
      return key;
    },
    fetches: (path) => documents.received.filter((req) => req.url === path).length,
    async close() {
      await serving.stop();
      await documents.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
