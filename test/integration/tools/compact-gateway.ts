/**
 * The gateway the compact-surface tests run against: Pet Shop (API key, pointed at a loopback API,
 * its manifest given the synonym group [critter, pet]) and SendGrid (API key, never connected
 * here), with TOOLGATE_COMPACT_THRESHOLD at 3 so that Pet Shop's 4 tools alone cross it.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { TestClient } from '../../helpers/clients.js';
import { postMcp, startGateway, type TestGateway } from '../../helpers/gateway.js';
import { PETSHOP_MANIFESTS, petshopApi, petshopEnv } from '../../helpers/petshop.js';
import { jsonAnswer, startReceiver, type Receiver } from '../../helpers/receiver.js';
import { expectToolOk } from '../../helpers/results.js';

/** The Pet Shop key the loopback API accepts. */
export const PETSHOP_KEY = 'ps_compact1';
export const PETSHOP_TOOLS = ['petshop_create_pet', 'petshop_get_pet', 'petshop_list_pets', 'petshop_whoami'];
export const COMPACT_TOOLS = ['search_tools', 'call_tool'];

const MANIFESTS = fileURLToPath(new URL('../../../manifests/', import.meta.url));

export interface CompactGateway {
  tg: TestGateway;
  api: Receiver;
  close(): Promise<void>;
}

/** Pet Shop's manifest and document, the manifest with a `synonyms` group, in a directory of their own. */
function petshopWithSynonyms(dir: string): string[] {
  const [manifest, document] = PETSHOP_MANIFESTS as [string, string];
  const files = [join(dir, 'petshop.yaml'), join(dir, 'petshop.openapi.yaml')] as const;
  writeFileSync(files[0], `${readFileSync(manifest, 'utf8')}synonyms:\n  - [critter, pet]\n`);
  copyFileSync(document, files[1]);
  return [...files];
}

export async function startCompactGateway(): Promise<CompactGateway> {
  // A pet named "missing" is not found: the provider's own 404, for the upstream-error case.
  const ok = petshopApi({ keys: [PETSHOP_KEY], body: { email: 'ana@example.com', items: [{ id: 'p1' }] } });
  const api = await startReceiver((req) =>
    req.url.startsWith('/pets/missing') ? jsonAnswer(404, { message: 'pet not found' }) : ok(req),
  );
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-compact-'));
  const manifestFiles = [
    ...petshopWithSynonyms(dir),
    `${MANIFESTS}sendgrid.yaml`,
    `${MANIFESTS}sendgrid.openapi.yaml`,
  ];
  const tg = await startGateway(
    { ...petshopEnv(api.url), TOOLGATE_COMPACT_THRESHOLD: '3' },
    { manifestFiles },
  ).finally(() => rmSync(dir, { recursive: true, force: true }));
  return {
    tg,
    api,
    async close() {
      await tg.close();
      await api.close();
    },
  };
}

/** Connects Pet Shop for the client's scope through connect_provider. */
export async function connectPetshop(client: TestClient): Promise<void> {
  expectToolOk(
    await client.callTool('connect_provider', { provider: 'petshop', credentials: { api_key: PETSHOP_KEY } }),
    'Connected Pet Shop',
  );
}

/** One JSON-RPC request POSTed to /mcp/ (2025-era, stateless unless a session header is given). */
export async function rpc(
  tg: TestGateway,
  key: string,
  query: string,
  message: { method: string; params?: unknown; id?: number },
  headers: Record<string, string> = {},
): Promise<{ status: number; text: string; headers: Headers; json: RpcAnswer }> {
  const response = await postMcp(
    tg.mcpUrl(query),
    key,
    { jsonrpc: '2.0', id: message.id ?? 1, ...message },
    headers,
  );
  const text = await response.text();
  return { status: response.status, text, headers: response.headers, json: JSON.parse(text) as RpcAnswer };
}

/** What tests read of an answer: a JSON-RPC result or error, or a gateway refusal. */
export interface RpcAnswer {
  result?: {
    tools?: { name: string }[];
    isError?: boolean;
    content?: { type: string; text: string }[];
    structuredContent?: Record<string, unknown>;
  };
  error?: { code: number | string; message: string };
}

/** The tool names of a tools/list answer. */
export function names(answer: RpcAnswer): string[] {
  expect(answer.error).toBeUndefined();
  return (answer.result?.tools ?? []).map((t) => t.name);
}
