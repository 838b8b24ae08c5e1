/**
 * Shared set-up of the provider tests: the real manifests and plugins of the repo, a loopback
 * stand-in for the provider's API, a gateway whose base-URL override points there, an MCP client,
 * and the assertions on what the stand-in received. The request a provider expects stays in each
 * test file; only the plumbing lives here. The Google APIs' common pieces are in google.ts.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect } from 'vitest';
import type { ProviderPlugin } from '../../../core/catalog/plugins/types.js';
import { PLUGINS } from '../../../plugins/index.js';
import { connect, type TestClient } from '../../helpers/clients.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';
import {
  jsonAnswer as plainJsonAnswer,
  startReceiver,
  type Answer,
  type Received,
  type Receiver,
} from '../../helpers/receiver.js';
import { expectToolError, expectToolOk, type Mention, type ToolCallResult } from '../../helpers/results.js';

export type { Answer } from '../../helpers/receiver.js';

/** The loopback stand-in for a provider's API. */
export type LoopbackApi = Receiver;

const MANIFESTS = fileURLToPath(new URL('../../../manifests/', import.meta.url));

/** The repo's manifest of a provider, and its OpenAPI document when it has one. */
export function providerManifestFiles(id: string): string[] {
  const document = `${MANIFESTS}${id}.openapi.yaml`;
  return [`${MANIFESTS}${id}.yaml`, ...(existsSync(document) ? [document] : [])];
}

/** A JSON answer, as the provider sends it (`content-type: application/json; charset=utf-8`). */
export function jsonAnswer(status: number, value: unknown, headers: Record<string, string> = {}): Answer {
  return plainJsonAnswer(status, value, { 'content-type': 'application/json; charset=utf-8', ...headers });
}

/** The parsed JSON body of a request the loopback API received. */
export function jsonBody(request: Received | undefined): unknown {
  if (!request) throw new Error('no request was received');
  return JSON.parse(request.body) as unknown;
}

/** The form-encoded body of a request, as ordered key/value pairs (keys with brackets kept). */
export function formBody(request: Received | undefined): [string, string][] {
  if (!request) throw new Error('no request was received');
  return [...new URLSearchParams(request.body).entries()];
}

/** The query of a request, as ordered name/value pairs (decoded). */
export function queryPairs(request: Received | undefined): [string, string][] {
  if (!request) throw new Error('no request was received');
  return [...new URL(request.url, 'http://loopback.test').searchParams];
}

/**
 * What a test expects of one request the loopback API received. Each field given is asserted
 * exactly; `headers` names the headers that must have these values (`undefined`: absent).
 */
export interface ExpectedRequest {
  method: string;
  /** Path and query, exactly as sent (percent-encoding included). */
  url?: string;
  /** The path without the query. */
  path?: string;
  /** The query as ordered, decoded name/value pairs. */
  query?: [string, string][];
  headers?: Record<string, string | undefined>;
  /** The raw body ('' for none). */
  body?: string;
  /** The body parsed as JSON. */
  json?: unknown;
  /** The form-encoded body as ordered key/value pairs. */
  form?: [string, string][];
}

/** Asserts one received request field by field (see ExpectedRequest). */
export function expectRequest(request: Received | undefined, expected: ExpectedRequest): void {
  if (!request)
    throw new Error(`no request was received (expected ${expected.method} ${expected.url ?? ''})`);
  const { method, url, path, query, headers, body, json, form } = expected;
  expect(request.method).toBe(method);
  if (url !== undefined) expect(request.url).toBe(url);
  if (path !== undefined) expect(request.url.split('?')[0]).toBe(path);
  if (query !== undefined) expect(queryPairs(request)).toEqual(query);
  for (const [name, value] of Object.entries(headers ?? {})) expect(request.headers[name], name).toBe(value);
  if (body !== undefined) expect(request.body).toBe(body);
  if ('json' in expected) expect(jsonBody(request)).toEqual(json);
  if (form !== undefined) expect(formBody(request)).toEqual(form);
}

/** A tool's result, with the text of its first content block. */
export type ToolResult = ToolCallResult & { text: string };

/** What the call of an ExpectedCall must come to: `true`, or mentions its text holds (see Mention). */
export type Outcome = true | Mention | Mention[];

/**
 * One tool call of user u1 and what a test expects of it: that it succeeds (`ok`) or fails
 * (`error`: isError), with what its text holds; optionally its whole `text`; and, when `sent` is
 * given, the requests the API received since the last check, exactly (see `expectSent`).
 */
export type ExpectedCall = {
  tool: string;
  args?: Record<string, unknown>;
  /** The whole text of the result, exactly. */
  text?: string;
  sent?: ExpectedRequest | ExpectedRequest[];
} & ({ ok: Outcome; error?: never } | { error: Outcome; ok?: never });

/**
 * How the harness's MCP client (user u1) comes to have the provider:
 * - `oauth`: the connection is stored directly, as the consent flow does once the user approves;
 * - `connect`: not yet; the test connects through the real connect_provider tool, so the
 *   manifest's credential check and identity run against the loopback API;
 * - `webhook`: as `connect`, but 127.0.0.1 becomes an allowed webhook host instead of the base URL
 *   being overridden, so the webhook URL given to connect_provider is `api.url` plus a path.
 */
export type ProviderAuth =
  | { auth: 'oauth'; accessToken: string; account?: string; fields?: Record<string, string> }
  | { auth: 'connect' }
  | { auth: 'webhook' };

export type HarnessOptions = ProviderAuth & {
  /** The provider's id in the repo's catalog. */
  provider: string;
  /** How the loopback API answers each request. */
  answer: (request: Received) => Answer;
  /** The manifest files the gateway loads; the provider's own by default. */
  manifests?: string[];
  /** Appended to the loopback URL for providers whose base URL has a path. */
  basePath?: string;
  /** The code plugins; all of the repo's by default, as the composition root registers them. */
  plugins?: ProviderPlugin[];
};

export interface ProviderHarness {
  api: LoopbackApi;
  tg: TestGateway;
  /** A 2025-era MCP client of user u1. */
  client: TestClient;
  /** The requests the API received since the last call of `sent` (or since the start). */
  sent(): Received[];
  /**
   * Asserts that the requests received since the last `sent` are exactly these, in this order
   * (see ExpectedRequest), and returns them.
   */
  expectSent(...expected: ExpectedRequest[]): Received[];
  /** Calls a tool as user u1. */
  call(tool: string, args?: Record<string, unknown>): Promise<ToolResult>;
  /**
   * Calls a tool as user u1 and asserts what `expected` says of the result and of the requests
   * sent; returns the result and those requests (none when `expected.sent` is not given).
   */
  expectCall(expected: ExpectedCall): Promise<{ result: ToolResult; requests: Received[] }>;
  /** Calls connect_provider for this provider. */
  connectProvider(credentials: Record<string, string>, fields?: Record<string, string>): Promise<ToolResult>;
  /** What inspect_provider says about this provider. */
  inspect(): Promise<string>;
  close(): Promise<void>;
}

/** One provider of a shared gateway: its id, how it comes to be connected, and its loopback API. */
export type ProviderSpec = ProviderAuth & Omit<HarnessOptions, 'manifests' | 'plugins' | keyof ProviderAuth>;

/** The settings that point a provider at its loopback API (base URL, or allowed webhook host). */
function loopbackSetting(spec: ProviderSpec, api: LoopbackApi): Record<string, string> {
  const prefix = `TOOLGATE_PROVIDER_${spec.provider.replace(/-/g, '_').toUpperCase()}`;
  return spec.auth === 'webhook'
    ? { [`${prefix}_ALLOWED_HOSTS`]: '127.0.0.1' }
    : { [`${prefix}_BASE_URL`]: `${api.url}${spec.basePath ?? ''}` };
}

/** A provider's view of a gateway and client that may be shared with other providers. */
function bindProvider(
  provider: string,
  api: LoopbackApi,
  tg: TestGateway,
  client: TestClient,
  close: () => Promise<void>,
): ProviderHarness {
  let seen = 0;
  const sent = (): Received[] => {
    const fresh = api.received.slice(seen);
    seen = api.received.length;
    return fresh;
  };
  const expectSent = (...expected: ExpectedRequest[]): Received[] => {
    const requests = sent();
    const received = requests.map((r) => `${r.method} ${r.url}`).join(', ');
    expect(requests.length, `requests received: ${received || 'none'}`).toBe(expected.length);
    expected.forEach((one, i) => expectRequest(requests[i], one));
    return requests;
  };
  const call = async (tool: string, args: Record<string, unknown> = {}): Promise<ToolResult> => {
    const result = await client.callTool(tool, args);
    return { ...result, text: result.content[0]?.text ?? '' };
  };
  return {
    api,
    tg,
    client,
    sent,
    expectSent,
    call,
    async expectCall(expected) {
      const result = await call(expected.tool, expected.args);
      const mentions = (outcome: Outcome): Mention[] =>
        outcome === true ? [] : Array.isArray(outcome) ? outcome : [outcome];
      if (expected.ok !== undefined) expectToolOk(result, ...mentions(expected.ok));
      else expectToolError(result, ...mentions(expected.error));
      if (expected.text !== undefined) expect(result.text).toBe(expected.text);
      const requests = expected.sent === undefined ? [] : expectSent(...[expected.sent].flat());
      return { result, requests };
    },
    connectProvider: (credentials, fields) =>
      call('connect_provider', { provider, credentials, ...(fields ? { fields } : {}) }),
    inspect: async () => (await call('inspect_provider', { provider })).text,
    close,
  };
}

/**
 * Starts one gateway holding several providers, each with its own loopback API, and one client of
 * user u1; returns each provider's harness by id (they share the gateway and the client, so a test
 * file of several providers starts one gateway, not one per provider).
 */
export async function providersHarness(
  specs: ProviderSpec[],
  plugins: ProviderPlugin[] = PLUGINS,
): Promise<Record<string, ProviderHarness>> {
  const apis = await Promise.all(specs.map((spec) => startReceiver(spec.answer)));
  const settings = Object.assign({}, ...specs.map((spec, i) => loopbackSetting(spec, apis[i]!))) as Record<
    string,
    string
  >;
  const tg = await startGateway(
    { TOOLGATE_ALLOW_PRIVATE_NETWORK: '1', ...settings },
    { manifestFiles: specs.flatMap((spec) => providerManifestFiles(spec.provider)), plugins },
  );
  const { key } = await tg.key('client');
  const clientId = (await tg.gateway.keys.list())[0]!.clientId;
  for (const spec of specs) {
    if (spec.auth !== 'oauth') continue;
    await tg.gateway.connections.store(
      { clientId, orgId: null, userId: 'u1' },
      spec.provider,
      { credentials: { access_token: spec.accessToken }, fields: spec.fields ?? {} },
      spec.account ?? null,
    );
  }
  const client = await connect('2025 (v1 client)', tg.mcpUrl('?user_id=u1'), { 'X-API-Key': key });
  const close = async (): Promise<void> => {
    await client.close();
    await tg.close();
    await Promise.all(apis.map((api) => api.close()));
  };
  return Object.fromEntries(
    specs.map((spec, i) => [spec.provider, bindProvider(spec.provider, apis[i]!, tg, client, close)]),
  );
}

/** Starts a provider's loopback API, a gateway pointed at it, and a client of user u1. */
export async function providerHarness(options: HarnessOptions): Promise<ProviderHarness> {
  const { provider } = options;
  const api = await startReceiver(options.answer);
  const tg = await startGateway(
    { TOOLGATE_ALLOW_PRIVATE_NETWORK: '1', ...loopbackSetting(options, api) },
    {
      manifestFiles: options.manifests ?? providerManifestFiles(provider),
      plugins: options.plugins ?? PLUGINS,
    },
  );
  const { key } = await tg.key('client');
  if (options.auth === 'oauth') {
    const clientId = (await tg.gateway.keys.list())[0]!.clientId;
    await tg.gateway.connections.store(
      { clientId, orgId: null, userId: 'u1' },
      provider,
      { credentials: { access_token: options.accessToken }, fields: options.fields ?? {} },
      options.account ?? null,
    );
  }
  const client = await connect('2025 (v1 client)', tg.mcpUrl('?user_id=u1'), { 'X-API-Key': key });
  return bindProvider(provider, api, tg, client, async () => {
    await client.close();
    await tg.close();
    await api.close();
  });
}

/** A harness that stands for one started later: its members throw until `get` returns one. */
function lazyHarness(get: () => ProviderHarness): ProviderHarness {
  return {
    get api() {
      return get().api;
    },
    get tg() {
      return get().tg;
    },
    get client() {
      return get().client;
    },
    sent: () => get().sent(),
    expectSent: (...expected) => get().expectSent(...expected),
    call: (tool, args) => get().call(tool, args),
    expectCall: (expected) => get().expectCall(expected),
    connectProvider: (credentials, fields) => get().connectProvider(credentials, fields),
    inspect: () => get().inspect(),
    close: () => get().close(),
  };
}

/**
 * The harness of a test file: started before its tests and closed after them. The object returned
 * stands for the harness once started (its members throw before then).
 */
export function useProviderHarness(options: HarnessOptions): ProviderHarness {
  let started: ProviderHarness | undefined;
  beforeAll(async () => {
    started = await providerHarness(options);
  });
  afterAll(() => started?.close());
  return lazyHarness(() => {
    if (!started) throw new Error(`the ${options.provider} harness is not started yet`);
    return started;
  });
}

/**
 * The harnesses of a test file of several providers behind one gateway (see providersHarness),
 * started before its tests and closed after them, by provider id.
 */
export function useProvidersHarness<const Id extends string>(
  specs: (ProviderSpec & { provider: Id })[],
): Record<Id, ProviderHarness> {
  let started: Record<string, ProviderHarness> | undefined;
  beforeAll(async () => {
    started = await providersHarness(specs);
  });
  afterAll(() => Object.values(started ?? {})[0]?.close());
  return Object.fromEntries(
    specs.map(({ provider }): [Id, ProviderHarness] => [
      provider,
      lazyHarness(() => {
        const harness = started?.[provider];
        if (!harness) throw new Error(`the ${provider} harness is not started yet`);
        return harness;
      }),
    ]),
  ) as Record<Id, ProviderHarness>;
}
