/**
 * Tool policies (issue 15): per client and organization, which providers and tools are exposed and
 * which tool list is served by default. A hidden tool is neither listed, searched nor callable, and
 * answers a call exactly as a tool that does not exist. Policies are set through the operations the
 * dashboard, the admin API and the CLI share.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PolicyInput } from '../../../core/admin/policies.js';
import { connect } from '../../helpers/clients.js';
import { until } from '../../helpers/gateway.js';
import {
  COMPACT_TOOLS,
  PETSHOP_KEY,
  PETSHOP_TOOLS,
  names,
  rpc,
  startCompactGateway,
  type CompactGateway,
  type RpcAnswer,
} from './compact-gateway.js';

const CLIENT = 'policy-co';
const LIST = { method: 'tools/list' };
const ORG_1 = '?org_id=org-1&user_id=u';
const ORG_2 = '?org_id=org-2&user_id=u';

let gw: CompactGateway;
let key: string;

const call = (name: string, args: Record<string, unknown> = {}) => ({
  method: 'tools/call',
  params: { name, arguments: args },
});

async function owner(orgId: string | null) {
  return gw.tg.gateway.operations.policies.owner(CLIENT, orgId ?? '');
}

/** Sets the policy of the client (`orgId` null) or of one of its organizations, as the operator does. */
async function setPolicy(orgId: string | null, input: PolicyInput): Promise<void> {
  await gw.tg.gateway.operations.policies.set(await owner(orgId), input);
}

async function send(query: string, message: { method: string; params?: unknown }): Promise<RpcAnswer> {
  return (await rpc(gw.tg, key, query, message)).json;
}

function text(answer: RpcAnswer): string {
  expect(answer.error).toBeUndefined();
  return answer.result?.content?.map((c) => c.text).join('\n') ?? '';
}

async function searchNames(query: string, args: Record<string, unknown>): Promise<string[]> {
  const found = await send(query, call('search_tools', args));
  text(found);
  return ((found.result?.structuredContent?.tools ?? []) as { name: string }[]).map((h) => h.name);
}

beforeAll(async () => {
  gw = await startCompactGateway();
  key = (await gw.tg.key('platform', CLIENT)).key;
  for (const query of [ORG_1, ORG_2]) {
    const connected = await send(
      query,
      call('connect_provider', { provider: 'petshop', credentials: { api_key: PETSHOP_KEY } }),
    );
    expect(text(connected)).toContain('Connected Pet Shop');
  }
});
afterEach(async () => {
  for (const orgId of [null, 'org-1']) await gw.tg.gateway.operations.policies.clear(await owner(orgId));
});
afterAll(async () => {
  await gw.close();
});

describe('a tool hidden by name', () => {
  it('is not listed (full list), not found by search_tools, and called answers as an unknown tool', async () => {
    await setPolicy(null, { deny: 'petshop_create_pet' });
    const listed = names(await send(`${ORG_1}&tools=full`, LIST));
    expect(listed).toEqual(expect.arrayContaining(PETSHOP_TOOLS.filter((t) => t !== 'petshop_create_pet')));
    expect(listed).not.toContain('petshop_create_pet');

    const hits = await searchNames(ORG_1, { query: 'add a new critter' });
    expect(hits.length).toBeGreaterThan(0);
    expect(hits).not.toContain('petshop_create_pet');

    const before = gw.api.received.length;
    const hidden = await send(ORG_1, call('petshop_create_pet', { name: 'Rex' }));
    const unknown = await send(ORG_1, call('petshop_no_such_tool', { name: 'Rex' }));
    expect(hidden.error?.code).toBe(unknown.error?.code);
    expect(hidden.error?.message).toBe(
      unknown.error?.message.replace('petshop_no_such_tool', 'petshop_create_pet'),
    );
    const viaCallTool = await send(
      ORG_1,
      call('call_tool', { name: 'petshop_create_pet', arguments: { name: 'Rex' } }),
    );
    expect(viaCallTool.error).toEqual(hidden.error);
    expect(gw.api.received.length).toBe(before);
  });

  it("is dropped from an open session's list, which is told its tools changed", async () => {
    const session = await connect('2025 (v2 client)', new URL(`${gw.tg.url}/mcp/${ORG_1}&tools=full`), {
      'x-api-key': key,
    });
    try {
      expect(await session.listToolNames()).toContain('petshop_create_pet');
      const changed = new Promise<void>((resolve) => void session.watchToolsChanged(resolve));
      await until(gw.tg.gateway.mcp.hub, 'change', () => gw.tg.gateway.mcp.hub.size > 0);
      await setPolicy('org-1', { deny: 'petshop_create_pet' });
      await changed;
      expect(await session.listToolNames()).not.toContain('petshop_create_pet');
    } finally {
      await session.close();
    }
  });

  it('comes back once the policy is cleared', async () => {
    await setPolicy(null, { deny: 'petshop_create_pet' });
    await gw.tg.gateway.operations.policies.clear(await owner(null));
    expect(names(await send(`${ORG_1}&tools=full`, LIST))).toContain('petshop_create_pet');
    expect(await searchNames(ORG_1, { query: 'add a new critter' })).toContain('petshop_create_pet');
  });

  it('leaves the compact list byte-identical', async () => {
    const before = await rpc(gw.tg, key, `${ORG_1}&tools=compact`, LIST);
    await setPolicy(null, { allow: 'petshop_get_*', deny: 'sendgrid' });
    const after = await rpc(gw.tg, key, `${ORG_1}&tools=compact`, LIST);
    expect(names(after.json)).toEqual(expect.arrayContaining(COMPACT_TOOLS));
    expect(after.text).toBe(before.text);
  });
});

describe('a provider all of whose tools are hidden', () => {
  it('is not in the catalog for list_providers, inspect_provider, connect_provider and search_tools', async () => {
    await setPolicy(null, { deny: 'sendgrid' });
    const providers = text(await send(ORG_1, call('list_providers')));
    expect(providers).toContain('petshop');
    expect(providers).not.toContain('sendgrid');
    for (const tool of ['inspect_provider', 'connect_provider']) {
      const answer = await send(ORG_1, call(tool, { provider: 'sendgrid' }));
      expect(answer.result?.isError).toBe(true);
      expect(text(answer)).toBe(
        'No provider "sendgrid" in this gateway. Call list_providers to see the provider ids.',
      );
    }
    expect(await searchNames(ORG_1, { query: 'send an email' })).not.toContain('sendgrid_send_email');
    const filtered = await send(ORG_1, call('search_tools', { query: 'email', provider: 'sendgrid' }));
    expect(filtered.result?.isError).toBe(true);
    expect(filtered.result?.content?.[0]?.text).toBe(
      'No provider "sendgrid" in this gateway. Valid providers: petshop.',
    );
  });

  it('leaves list_providers saying a policy hides them when it hides every provider', async () => {
    await setPolicy(null, { allow: 'petshop_get_pet' });
    await setPolicy('org-1', { deny: 'petshop' });
    expect(text(await send(ORG_1, call('list_providers')))).toBe(
      "No providers are available to you: this client's tool policy hides them all. The operator can change it (toolgate policy, or the dashboard).",
    );
  });

  it('inspect_provider shows only the tools the policy lets through', async () => {
    await setPolicy(null, { allow: 'petshop_get_*,petshop_list_pets' });
    const inspected = text(await send(ORG_1, call('inspect_provider', { provider: 'petshop' })));
    expect(inspected).toContain('Tools by category (2):');
    expect(inspected).toContain('petshop_get_pet');
    expect(inspected).not.toContain('petshop_create_pet');
    expect(inspected).not.toContain('petshop_whoami');
  });
});

describe("an organization's policy", () => {
  it("narrows its client's: both must let a tool through", async () => {
    await setPolicy(null, { allow: 'petshop' });
    await setPolicy('org-1', { deny: 'petshop_whoami' });
    const org1 = names(await send(`${ORG_1}&tools=full`, LIST));
    const org2 = names(await send(`${ORG_2}&tools=full`, LIST));
    expect(org1.filter((n) => n.startsWith('petshop_'))).toEqual(
      PETSHOP_TOOLS.filter((t) => t !== 'petshop_whoami'),
    );
    expect(org2.filter((n) => n.startsWith('petshop_'))).toEqual(PETSHOP_TOOLS);
    // The client's allow-list hides SendGrid from both organizations.
    expect(await searchNames(ORG_2, { query: 'send an email' })).not.toContain('sendgrid_send_email');
    expect((await send(ORG_1, call('petshop_whoami'))).error?.message).toMatch(
      /^Unknown tool: petshop_whoami\./,
    );
    expect(text(await send(ORG_2, call('petshop_whoami')))).toContain('ana@example.com');
  });
});

describe('the tool surface a policy sets', () => {
  it('is served when the request asks for none, and the tools= parameter overrides it', async () => {
    // Pet Shop's 4 tools cross TOOLGATE_COMPACT_THRESHOLD (3): auto serves the compact list.
    expect(names(await send(ORG_1, LIST))).toContain('search_tools');
    await setPolicy(null, { surface: 'full' });
    expect(names(await send(ORG_1, LIST))).toEqual(expect.arrayContaining(PETSHOP_TOOLS));
    expect(names(await send(`${ORG_1}&tools=compact`, LIST))).not.toContain('petshop_list_pets');

    // An organization's surface, when not auto, overrides its client's.
    await setPolicy('org-1', { surface: 'compact' });
    expect(names(await send(ORG_1, LIST))).not.toContain('petshop_list_pets');
    expect(names(await send(ORG_2, LIST))).toContain('petshop_list_pets');
    expect(names(await send(`${ORG_1}&tools=full`, LIST))).toContain('petshop_list_pets');
  });
});

describe('setting a policy', () => {
  it('refuses entries that name nothing in the catalog, saying which', async () => {
    const policies = gw.tg.gateway.operations.policies;
    const client = await owner(null);
    await expect(policies.set(client, { deny: 'petshop_feed_pet' })).rejects.toThrow(
      '"petshop_feed_pet" is no provider id or tool name of the catalog',
    );
    await expect(policies.set(client, { allow: 'stripe_*' })).rejects.toThrow(
      '"stripe_*" matches no tool or provider of the catalog.',
    );
    await expect(policies.set(client, { allow: 'Pet Shop!' })).rejects.toThrow(
      'is not a provider id or tool name',
    );
    await expect(policies.set(client, { surface: 'tiny' })).rejects.toThrow(
      'Choose the tool surface: auto, compact or full.',
    );
    expect((await policies.get(client)).updatedAt).toBeNull();
  });
});
