import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, adminTokenFile } from '../../../core/http/admin.js';
import { connect, SYSTEM_TOOLS } from '../../helpers/clients.js';
import { startGateway, type TestGateway } from '../../helpers/gateway.js';

const ACME = fileURLToPath(new URL('../../fixtures/catalog/oauth2/acme.yaml', import.meta.url));

let tg: TestGateway;
let token: string;

beforeAll(async () => {
  tg = await startGateway({}, { manifestFiles: [ACME] });
  token = adminToken(tg.gateway.config);
});
afterAll(() => tg?.close());

async function admin(
  method: string,
  path: string,
  body?: unknown,
): Promise<{
  status: number;
  json: Record<string, unknown> & { error?: { code: string; message: string } };
}> {
  const response = await fetch(`${tg.url}/admin${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as never };
}

describe('the admin API', () => {
  it('refuses a request without the admin token', async () => {
    const response = await fetch(`${tg.url}/admin/keys`);
    expect(response.status).toBe(401);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
      'TG_ERR_ADMIN_UNAUTHORIZED',
    );
  });

  it('takes TOOLGATE_ADMIN_TOKEN, the token every process of a deployment shares, instead of its own', async () => {
    const shared = randomBytes(32).toString('base64url');
    const other = await startGateway({ TOOLGATE_ADMIN_TOKEN: shared });
    try {
      const status = async (bearer: string) =>
        (await fetch(`${other.url}/admin/keys`, { headers: { authorization: `Bearer ${bearer}` } })).status;
      expect(await status(shared)).toBe(200);
      expect(existsSync(adminTokenFile(other.gateway.config))).toBe(false);
      expect(await status(token)).toBe(401);
    } finally {
      await other.close();
    }
  });

  it('creates its token in a data dir that does not exist yet (master key and database elsewhere)', () => {
    const parent = mkdtempSync(join(tmpdir(), 'toolgate-admin-'));
    try {
      const config = { ...tg.gateway.config, dataDir: join(parent, 'data') };
      const created = adminToken(config);
      expect(created).toMatch(/^[\w-]{43}$/);
      expect(adminToken(config)).toBe(created);
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('creates clients and keys, tests a key, lists keys without values, and revokes', async () => {
    expect((await admin('POST', '/clients', { name: 'Zed' })).status).toBe(201);
    const duplicate = await admin('POST', '/clients', { name: 'Zed' });
    expect(duplicate.status).toBe(400);
    expect(duplicate.json.error!.code).toBe('TG_ERR_INVALID_INPUT');

    const bad = await admin('POST', '/keys', { client: 'Zed', type: 'gold' });
    expect(bad.json.error).toMatchObject({
      code: 'TG_ERR_INVALID_INPUT',
      message: expect.stringContaining('solo') as unknown,
    });
    const created = await admin('POST', '/keys', { client: 'Zed', type: 'client' });
    expect(created.status).toBe(201);
    const key = created.json.key as string;
    const id = (created.json.record as { id: string }).id;
    expect(created.json.config).toEqual({
      mcpServers: {
        toolgate: { url: `${tg.gateway.config.baseUrl}/mcp/?user_id=USER_ID`, headers: { 'X-API-Key': key } },
      },
    });

    expect((await admin('POST', '/keys/test', { key })).json).toEqual({ ok: true, tools: SYSTEM_TOOLS });
    const listed = await fetch(`${tg.url}/admin/keys`, { headers: { authorization: `Bearer ${token}` } });
    const text = await listed.text();
    expect(text).toContain(id);
    expect(text).not.toContain(key);

    const client = await connect('2025 (v1 client)', tg.mcpUrl('?user_id=u1'), { 'X-API-Key': key });
    const closed = client.closed;
    const revoked = await admin('POST', `/keys/${id}/revoke`);
    expect(revoked.json).toMatchObject({ id, revokedAt: expect.any(String) as unknown });
    // Revocation through the API closes the key's open streams at once, like the dashboard's.
    await expect(client.listToolNames()).rejects.toThrow();
    await client.close();
    await closed;
    expect((await admin('POST', '/keys/test', { key })).json).toMatchObject({
      ok: false,
      code: 'TG_ERR_KEY_REVOKED',
    });
    expect((await admin('POST', '/keys/key_0000000000000000/revoke')).json.error!.code).toBe(
      'TG_ERR_RECORD_NOT_FOUND',
    );
  });

  it('lists and resolves problem reports, filtered by status', async () => {
    const { key } = await tg.key('solo', 'Reporter');
    const client = await connect('2026-07-28', tg.mcpUrl(), { 'X-API-Key': key });
    await client.callTool('report_problem', { summary: 'nothing works', provider: 'acme' });
    await client.close();
    const open = await fetch(`${tg.url}/admin/reports?status=open`, {
      headers: { authorization: `Bearer ${token}` },
    });
    const [report] = (await open.json()) as { id: string; clientName: string; summary: string }[];
    expect(report).toMatchObject({ clientName: 'Reporter', summary: 'nothing works' });
    expect((await admin('POST', `/reports/${report!.id}/resolve`)).json).toEqual({
      id: report!.id,
      resolved: true,
    });
    const resolved = await fetch(`${tg.url}/admin/reports?status=resolved`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(((await resolved.json()) as { id: string }[]).map((r) => r.id)).toEqual([report!.id]);
    expect((await admin('POST', '/reports/rep_0000000000000000/resolve')).status).toBe(404);
    expect((await admin('GET', '/reports?status=closed')).status).toBe(400);
  });

  it('reads the audit trail with the filters of toolgate audit, refusing one it cannot read', async () => {
    const { key, id } = await tg.key('solo', 'Audited');
    const client = await connect('2026-07-28', tg.mcpUrl(), { 'X-API-Key': key });
    await client.callTool('list_providers');
    await client.close();
    await tg.gateway.audit.flush();
    const { status, json } = await admin('GET', '/audit?client=Audited&event=tool_call&since=1h');
    expect(status).toBe(200);
    expect(json).toEqual([
      expect.objectContaining({ clientName: 'Audited', keyId: id, tool: 'list_providers', outcome: 'ok' }),
    ]);
    const refused = await admin('GET', '/audit?outcome=maybe');
    expect(refused.status).toBe(400);
    expect(refused.json.error).toMatchObject({ code: 'TG_ERR_INVALID_INPUT' });
    expect(refused.json.error!.message).toContain('--outcome is one of ok, error, refused, failed');
  });

  it('shows the catalog with its status, and reloads it', async () => {
    const catalog = await admin('GET', '/catalog');
    expect(catalog.json.providers).toEqual([
      expect.objectContaining({ id: 'acme', state: 'loaded', authKind: 'oauth2', tools: 1, categories: 1 }),
    ]);
    const detail = await admin('GET', '/catalog/acme');
    expect(detail.json.categories).toEqual([
      {
        id: 'account',
        title: 'Account',
        tools: [{ name: 'acme_me', description: 'The connected account.' }],
      },
    ]);
    expect((await admin('GET', '/catalog/nope')).status).toBe(404);
    expect((await admin('POST', '/catalog/reload')).json).toMatchObject({
      swapped: false,
      unchanged: ['acme'],
    });
  });

  it('sets, shows and clears the tool policy of a client and of one of its organizations', async () => {
    await admin('POST', '/clients', { name: 'Policy Co' });
    const none = await admin('GET', '/policies?client=Policy%20Co');
    expect(none.json).toMatchObject({ orgId: null, surface: 'auto', allow: null, deny: [], updatedAt: null });
    const set = await admin('PUT', '/policies', { client: 'Policy Co', surface: 'full', deny: ['acme_*'] });
    expect(set.status).toBe(200);
    expect(set.json).toMatchObject({ orgId: null, surface: 'full', allow: null, deny: ['acme_*'] });
    const org = await admin('PUT', '/policies', { client: 'Policy Co', org_id: 'org-1', allow: 'acme' });
    expect(org.json).toMatchObject({ orgId: 'org-1', surface: 'auto', allow: ['acme'], deny: [] });
    expect((await admin('GET', '/policies?client=Policy%20Co')).json).toEqual(set.json);

    const refused = await admin('PUT', '/policies', { client: 'Policy Co', allow: 'nope_*' });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toEqual({
      code: 'TG_ERR_INVALID_INPUT',
      message: '"nope_*" matches no tool or provider of the catalog.',
    });
    expect((await admin('GET', '/policies?client=Nobody')).status).toBe(400);

    expect((await admin('DELETE', '/policies?client=Policy%20Co&org_id=org-1')).json).toEqual({
      cleared: true,
    });
    expect((await admin('DELETE', '/policies?client=Policy%20Co&org_id=org-1')).json).toEqual({
      cleared: false,
    });
    expect((await admin('GET', '/policies?client=Policy%20Co')).json).toEqual(set.json);
  });

  // Issue 18: README says identifiers are "up to 256 characters"; /mcp/ counts code points, and so
  // does what an operator types for an org_id (256 emoji are 512 UTF-16 units).
  it('takes an org_id of 256 emoji as /mcp/ does, and refuses 257', async () => {
    await admin('POST', '/clients', { name: 'Emoji Co' });
    const emoji = (count: number) => '😀'.repeat(count);
    const taken = await admin('PUT', '/policies', {
      client: 'Emoji Co',
      org_id: emoji(256),
      surface: 'full',
    });
    expect(taken.status).toBe(200);
    expect(taken.json).toMatchObject({ orgId: emoji(256), surface: 'full' });
    const refused = await admin('PUT', '/policies', {
      client: 'Emoji Co',
      org_id: emoji(257),
      surface: 'full',
    });
    expect(refused.status).toBe(400);
    expect(refused.json.error).toEqual({
      code: 'TG_ERR_INVALID_INPUT',
      message: 'The org_id must be one line of at most 256 characters.',
    });
  });

  it('sets OAuth apps with a write-only secret, and lists them and the organizations without secrets', async () => {
    const platform = await tg.key('platform', 'Plat');
    const agent = await connect('2026-07-28', tg.mcpUrl('?org_id=org-1&user_id=u1'), {
      'X-API-Key': platform.key,
    });
    await agent.callTool('report_problem', { summary: 'first request of org-1' });
    await agent.close();

    const missingSecret = await admin('PUT', '/oauth-apps/acme', {
      client: 'Plat',
      org_id: 'org-1',
      client_id: 'a',
    });
    expect(missingSecret.json.error).toMatchObject({ code: 'TG_ERR_INVALID_INPUT' });
    const set = await admin('PUT', '/oauth-apps/acme', {
      client: 'Plat',
      org_id: 'org-1',
      client_id: 'org-1-app',
      client_secret: 'org-1-secret',
      display_name: 'Org One',
      accent_color: '#112233',
    });
    expect(set.json).toMatchObject({ changed: 'app' });
    const rebrand = await admin('PUT', '/oauth-apps/acme', {
      client: 'Plat',
      org_id: 'org-1',
      client_id: 'org-1-app',
      display_name: 'Org One Ltd',
    });
    expect(rebrand.json).toEqual({ id: set.json.id, changed: 'branding' });
    const newId = await admin('PUT', '/oauth-apps/acme', {
      client: 'Plat',
      org_id: 'org-1',
      client_id: 'other',
    });
    expect(newId.json.error!.message).toContain('needs its own client secret');
    expect((await admin('PUT', '/oauth-apps/nope', { client_id: 'x', client_secret: 'y' })).status).toBe(400);
    expect(
      (await admin('PUT', '/oauth-apps/acme', { client: 'Nobody', org_id: 'o', client_id: 'x' })).status,
    ).toBe(400);

    const apps = await fetch(`${tg.url}/admin/oauth-apps`, { headers: { authorization: `Bearer ${token}` } });
    const text = await apps.text();
    expect(text).not.toContain('org-1-secret');
    expect(JSON.parse(text)).toEqual([
      expect.objectContaining({
        provider: 'acme',
        clientName: 'Plat',
        orgId: 'org-1',
        oauthClientId: 'org-1-app',
        branding: { displayName: 'Org One Ltd' },
        current: true,
      }),
    ]);
    const orgs = await fetch(`${tg.url}/admin/organizations`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(await orgs.json()).toEqual([
      {
        clientName: 'Plat',
        orgId: 'org-1',
        users: 1,
        firstSeenAt: expect.any(String) as unknown,
        ownApps: ['acme'],
      },
    ]);
    const connections = await admin('GET', '/connections');
    expect(connections.json).toEqual({ rows: [], events: [] });
  });
});
