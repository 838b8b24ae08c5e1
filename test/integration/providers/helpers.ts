/**
 * Shared set-up of the provider tests: the real manifests of the repo, a loopback stand-in for the
 * provider's API, and a gateway whose base-URL override points there. Helpers only add exports
 * here (several provider tests use this file).
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ProviderPlugin } from '../../../core/plugins/types.js';
import { connect, type TestClient } from '../../helpers/clients.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import { startReceiver, type Received } from '../../helpers/receiver.js';

/** What a loopback API answers. */
export interface Answer {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

const MANIFESTS = fileURLToPath(new URL('../../../manifests/', import.meta.url));

/** The repo's manifest of a provider, and its OpenAPI document when it has one. */
export function providerManifestFiles(id: string): string[] {
  const document = `${MANIFESTS}${id}.openapi.yaml`;
  return [`${MANIFESTS}${id}.yaml`, ...(existsSync(document) ? [document] : [])];
}

/** A JSON answer, as the provider sends it. */
export function jsonAnswer(status: number, value: unknown, headers: Record<string, string> = {}): Answer {
  return {
    status,
    body: JSON.stringify(value),
    headers: { 'content-type': 'application/json; charset=utf-8', ...headers },
  };
}

/** The parsed JSON body of a request the loopback API received. */
export function jsonBody(request: Received | undefined): unknown {
  if (!request) throw new Error('no request was received');
  return JSON.parse(request.body) as unknown;
}

export interface SeededOAuthProvider {
  api: Awaited<ReturnType<typeof startReceiver>>;
  tg: TestGateway;
  /** A 2025-era MCP client of user u1, who has the connection. */
  client: TestClient;
  /** The requests the API received since the last call of `sent` (or since the start). */
  sent(): Received[];
  close(): Promise<void>;
}

/**
 * An OAuth2 provider of the repo's catalog, connected for user u1 by storing the connection
 * directly (as the consent flow does once the user approves), with its API on loopback.
 * `basePath` is appended to the loopback URL for providers whose base URL has a path.
 */
export async function seedOAuthProvider(options: {
  provider: string;
  accessToken: string;
  respond: (request: Received) => Answer;
  fields?: Record<string, string>;
  account?: string;
  basePath?: string;
  plugins?: ProviderPlugin[];
}): Promise<SeededOAuthProvider> {
  const { provider } = options;
  const api = await startReceiver(options.respond);
  const setting = `TOOLGATE_PROVIDER_${provider.replace(/-/g, '_').toUpperCase()}_BASE_URL`;
  const tg = await startGateway(
    { TOOLGATE_ALLOW_PRIVATE_NETWORK: '1', [setting]: `${api.url}${options.basePath ?? ''}` },
    {
      manifestFiles: providerManifestFiles(provider),
      ...(options.plugins ? { plugins: options.plugins } : {}),
    },
  );
  const { key } = await tg.key('client');
  const clientId = (await tg.gateway.keys.list())[0]!.clientId;
  await tg.gateway.connections.store(
    { clientId, orgId: null, userId: 'u1' },
    provider,
    { credentials: { access_token: options.accessToken }, fields: options.fields ?? {} },
    options.account ?? null,
  );
  const client = await connect('2025 (v1 client)', tg.mcpUrl('?user_id=u1'), { 'X-API-Key': key });
  let seen = 0;
  return {
    api,
    tg,
    client,
    sent() {
      const fresh = api.received.slice(seen);
      seen = api.received.length;
      return fresh;
    },
    async close() {
      await client.close();
      await tg.close();
      await api.close();
    },
  };
}

/**
 * An error as Google APIs answer it (Calendar, Gmail, Drive):
 * `{error: {code, message, errors: [{message, domain, reason}], status}}`.
 */
export function googleErrorAnswer(
  code: number,
  message: string,
  detail: { reason: string; domain?: string; status: string },
  headers: Record<string, string> = {},
): Answer {
  const errors = [{ message, domain: detail.domain ?? 'global', reason: detail.reason }];
  return jsonAnswer(code, { error: { code, message, errors, status: detail.status } }, headers);
}

export interface LoopbackProvider {
  api: Awaited<ReturnType<typeof startReceiver>>;
  tg: TestGateway;
  /** A 2025-era MCP client of user u1, not connected to the provider yet. */
  client: TestClient;
  /** The requests the API received since the last call of `sent` (or since the start). */
  sent(): Received[];
  close(): Promise<void>;
}

/**
 * An API-key or webhook provider of the repo's catalog with its API on loopback, for a test that
 * connects it through the real connect_provider tool (so the manifest's credential check and
 * identity run against the loopback API). `api`: the base-URL override points at the loopback API
 * (plus `basePath`); `webhook`: 127.0.0.1 becomes an allowed webhook host, so the webhook URL
 * given to connect_provider is `api.url` plus a path of the provider's shape.
 */
export async function startLoopbackProvider(options: {
  provider: string;
  respond: (request: Received) => Answer;
  kind?: 'api' | 'webhook';
  basePath?: string;
  plugins?: ProviderPlugin[];
}): Promise<LoopbackProvider> {
  const { provider } = options;
  const api = await startReceiver(options.respond);
  const prefix = `TOOLGATE_PROVIDER_${provider.replace(/-/g, '_').toUpperCase()}`;
  const setting =
    options.kind === 'webhook'
      ? { [`${prefix}_ALLOWED_HOSTS`]: '127.0.0.1' }
      : { [`${prefix}_BASE_URL`]: `${api.url}${options.basePath ?? ''}` };
  const tg = await startGateway(
    { TOOLGATE_ALLOW_PRIVATE_NETWORK: '1', ...setting },
    {
      manifestFiles: providerManifestFiles(provider),
      ...(options.plugins ? { plugins: options.plugins } : {}),
    },
  );
  const { key } = await tg.key('client');
  const client = await connect('2025 (v1 client)', tg.mcpUrl('?user_id=u1'), { 'X-API-Key': key });
  let seen = 0;
  return {
    api,
    tg,
    client,
    sent() {
      const fresh = api.received.slice(seen);
      seen = api.received.length;
      return fresh;
    },
    async close() {
      await client.close();
      await tg.close();
      await api.close();
    },
  };
}

/** The form-encoded body of a request, as ordered key/value pairs (keys with brackets kept). */
export function formBody(request: Received | undefined): [string, string][] {
  if (!request) throw new Error('no request was received');
  return [...new URLSearchParams(request.body).entries()];
}
