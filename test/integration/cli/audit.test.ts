/**
 * The audit trail (issue 18) as an operator reads it: real MCP traffic through a loopback Pet Shop
 * API, then `toolgate audit list|export` on the gateway's data dir show every call with its outcome,
 * latency and upstream status, and the connection and key events, but no argument value or secret.
 * Entries a `toolgate serve` holds when it gets SIGTERM are written before it exits; entries older
 * than TOOLGATE_AUDIT_DAYS go.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditRetention } from '../../../core/jobs.js';
import type { AuditRecord } from '../../../core/store/types.js';
import { runToolgate, startServe } from '../../helpers/cli.js';
import { connect, connectWithKey, type TestClient } from '../../helpers/clients.js';
import { eventually } from '../../helpers/eventually.js';
import { freePort } from '../../helpers/gateway.js';
import { startPetshop, type PetshopGateway } from '../../helpers/petshop.js';
import { jsonAnswer, type Answer, type Received } from '../../helpers/receiver.js';
import { expectToolError, expectToolOk } from '../../helpers/results.js';

const PETSHOP_KEY = 'ps_auditsecret42';
/** Argument values the calls send: none may reach the audit trail. */
const PET_NAME = 'Zanzibar-the-argument';
const PET_TAG = 'tag-argument-value';

function petshopStandIn(req: Received): Answer {
  if (req.headers.authorization !== `Bearer ${PETSHOP_KEY}`)
    return jsonAnswer(401, { message: 'invalid api key' });
  if (req.method === 'GET' && req.url === '/me') return jsonAnswer(200, { email: 'owner@petshop.example' });
  if (req.method === 'POST' && req.url === '/pets')
    return jsonAnswer(201, { id: 'p2', ...(JSON.parse(req.body) as object) });
  if (req.method === 'GET' && req.url === '/pets/missing')
    return jsonAnswer(404, { message: 'pet not found' });
  // A provider that quotes the credential back: the agent, and so the audit trail, get it redacted.
  if (req.method === 'GET' && req.url === '/pets/locked')
    return jsonAnswer(403, { message: `the key ${PETSHOP_KEY} is read-only` });
  return jsonAnswer(400, { message: 'unexpected request' });
}

let gw: PetshopGateway;
let agent: TestClient;
let callerKey: string;
let keyId: string;
let env: Record<string, string>;

beforeAll(async () => {
  gw = await startPetshop(petshopStandIn);
  env = {
    TOOLGATE_DATA_DIR: gw.tg.dataDir,
    TOOLGATE_MANIFESTS_DIR: gw.tg.manifestsDir,
    TOOLGATE_LOG_LEVEL: 'silent',
  };
  ({ key: callerKey, id: keyId } = await gw.tg.key('platform', 'audit-co'));
  agent = await connect('2026-07-28', gw.tg.mcpUrl('?org_id=org-a&user_id=alice'), {
    'X-API-Key': callerKey,
  });
  expectToolOk(
    await agent.callTool('connect_provider', { provider: 'petshop', credentials: { api_key: PETSHOP_KEY } }),
  );
  expectToolOk(await agent.callTool('petshop_create_pet', { name: PET_NAME, tag: PET_TAG }));
  expectToolError(await agent.callTool('petshop_get_pet', { petId: 'missing' }), 'pet not found');
  expectToolError(await agent.callTool('petshop_get_pet', { petId: 'locked' }), 'is read-only');
  await expect(agent.callTool('petshop_create_pet', { name: 42, tag: PET_TAG })).rejects.toThrow(
    /Invalid arguments/,
  );
  expectToolOk(await agent.callTool('disconnect_provider', { provider: 'petshop' }));
  // A second client's call, for the filters.
  const other = await connectWithKey(gw.tg, '2025 (v1 client)', '?user_id=bob', 'client', 'other-co');
  expectToolOk(await other.callTool('list_providers'));
  await other.close();
  // The gateway writes its batch within a second; the test does not wait for the timer.
  await gw.tg.gateway.audit.flush();
}, 60_000);
afterAll(async () => {
  await agent?.close();
  await gw?.close();
});

function parseLines(stdout: string): AuditRecord[] {
  return stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as AuditRecord);
}

describe('toolgate audit', () => {
  it('exports every call and event of a client as JSON lines, with outcome, latency and upstream status', async () => {
    const exported = await runToolgate(['audit', 'export', '--client', 'audit-co'], env);
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    const records = parseLines(exported.stdout).reverse();
    // A call's entry carries the time it started, so the event it caused may sort either side of it.
    const byCall = (r: AuditRecord): string => `${r.event} ${r.tool ?? ''} ${r.outcome}`;
    expect(records.map(byCall).sort()).toEqual(
      [
        'key_created  ok',
        'connected  ok',
        'tool_call connect_provider ok',
        'tool_call petshop_create_pet ok',
        'tool_call petshop_get_pet error',
        'tool_call petshop_get_pet error',
        'tool_call petshop_create_pet refused',
        'disconnected  ok',
        'tool_call disconnect_provider ok',
      ].sort(),
    );
    expect(records.filter((r) => r.event === 'tool_call').map(byCall)).toEqual([
      'tool_call connect_provider ok',
      'tool_call petshop_create_pet ok',
      'tool_call petshop_get_pet error',
      'tool_call petshop_get_pet error',
      'tool_call petshop_create_pet refused',
      'tool_call disconnect_provider ok',
    ]);
    for (const r of records) {
      // A connection event is the scope's (an OAuth consent or a refresh has no key): its call has the key.
      const eventOfScope = r.event === 'connected' || r.event === 'disconnected';
      expect(r).toMatchObject({ clientName: 'audit-co', keyId: eventOfScope ? null : keyId });
      if (r.event !== 'key_created') expect(r).toMatchObject({ orgId: 'org-a', userId: 'alice' });
    }
    const [created, missing, locked, invalid] = records.filter((r) => r.tool?.startsWith('petshop_'));
    expect(created).toMatchObject({ provider: 'petshop', upstreamStatus: 201, message: null });
    expect(created!.latencyUs).toBeGreaterThan(0);
    expect(missing).toMatchObject({ provider: 'petshop', upstreamStatus: 404 });
    expect(missing!.message).toMatch(/returned HTTP 404 Not Found: pet not found/);
    expect(locked).toMatchObject({ upstreamStatus: 403 });
    expect(locked!.message).toMatch(/returned HTTP 403 Forbidden: the key \S+ is read-only/);
    expect(invalid).toMatchObject({ upstreamStatus: null });
    expect(invalid!.message).toMatch(/^Invalid arguments for petshop_create_pet: /);
  });

  it('lists them as a table, newest first, narrowed by each filter', async () => {
    const list = await runToolgate(['audit', 'list', '--client', 'audit-co', '--event', 'tool_call'], env);
    expect(list.code).toBe(0);
    const lines = list.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^TIME +EVENT +CLIENT\/ORG\/USER +KEY +PROVIDER +TOOL +OUTCOME +LATENCY +HTTP +MESSAGE$/,
    );
    expect(lines.slice(1).map((line) => line.split(/ {2,}/).slice(5, 7))).toEqual([
      ['disconnect_provider', 'ok'],
      ['petshop_create_pet', 'refused'],
      ['petshop_get_pet', 'error'],
      ['petshop_get_pet', 'error'],
      ['petshop_create_pet', 'ok'],
      ['connect_provider', 'ok'],
    ]);
    expect(lines.find((line) => line.includes('pet not found'))).toMatch(
      /audit-co\/org-a\/alice .* petshop_get_pet +error +[\d.]+ ms +404 +petshop returned HTTP 404 Not Found: pet not found Check/,
    );

    const tools = async (...args: string[]) =>
      parseLines((await runToolgate(['audit', 'export', ...args], env)).stdout).map((r) => r.tool ?? r.event);
    expect(await tools('--outcome', 'error')).toEqual(['petshop_get_pet', 'petshop_get_pet']);
    expect(await tools('--user', 'bob')).toEqual(['list_providers']);
    expect(
      await tools('--org', 'org-a', '--provider', 'petshop', '--event', 'tool_call', '--limit', '2'),
    ).toEqual(['petshop_create_pet', 'petshop_get_pet']);
    expect(await tools('--since', '1h', '--client', 'other-co')).toEqual(['list_providers', 'key_created']);
    expect(await tools('--until', '2020-01-01')).toEqual([]);
    expect((await runToolgate(['audit', 'list', '--user', 'nobody'], env)).stdout).toBe(
      'No audit entries match.\n',
    );
  });

  it('refuses a filter it cannot read, saying what to give', async () => {
    const outcome = await runToolgate(['audit', 'list', '--outcome', 'bad'], env);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('--outcome is one of ok, error, refused, failed; got "bad".');
    const since = await runToolgate(['audit', 'export', '--since', 'yesterday'], env);
    expect(since.code).toBe(2);
    expect(since.stderr).toContain(
      'give an ISO time (2026-11-24T10:00:00Z, 2026-11-24) or an age (90m, 24h, 7d)',
    );
    expect((await runToolgate(['audit', 'show'], env)).stderr).toContain('Unknown audit command: show');
  });

  it('holds no argument value, credential or API key', async () => {
    const everything = [
      (await runToolgate(['audit', 'export'], env)).stdout,
      (await runToolgate(['audit', 'list', '--limit', '1000'], env)).stdout,
    ].join('\n');
    expect(everything).toContain('petshop_create_pet');
    for (const secret of [PETSHOP_KEY, callerKey, PET_NAME, PET_TAG, 'owner@petshop.example'])
      expect(everything).not.toContain(secret);
  });

  it('writes each entry within about a second with no flush asked for, which bounds what a kill -9 loses', async () => {
    expectToolOk(await agent.callTool('list_providers'));
    const { store } = gw.tg.gateway;
    await eventually(
      async () => (await store.audit.list({ user: 'alice', limit: 1 }))[0]?.tool === 'list_providers',
    );
  });

  it('records a key revoked by the CLI, from the CLI process', async () => {
    expect((await runToolgate(['keys', 'revoke', keyId], env)).code).toBe(0);
    const [revoked] = parseLines(
      (await runToolgate(['audit', 'export', '--event', 'key_revoked'], env)).stdout,
    );
    expect(revoked).toMatchObject({ keyId, clientName: 'audit-co', outcome: 'ok' });
  });

  it('deletes entries older than TOOLGATE_AUDIT_DAYS in its housekeeping job', async () => {
    const { store, config } = gw.tg.gateway;
    const old = (id: string, days: number) => ({
      id,
      at: new Date(Date.now() - days * 86_400_000).toISOString(),
      event: 'tool_call' as const,
      clientId: null,
      keyId: null,
      orgId: null,
      userId: 'old-user',
      provider: null,
      tool: 'list_providers',
      outcome: 'ok' as const,
      latencyUs: 10,
      upstreamStatus: null,
      message: null,
    });
    await store.audit.append([
      old('aud_old_31', config.auditDays + 1),
      old('aud_old_29', config.auditDays - 1),
    ]);
    await auditRetention({ store, config }).run();
    const left = parseLines((await runToolgate(['audit', 'export', '--user', 'old-user'], env)).stdout);
    expect(left.map((r) => r.id)).toEqual(['aud_old_29']);
    expect((await runToolgate(['audit', 'export', '--client', 'audit-co'], env)).stdout).toContain(
      'petshop_get_pet',
    );
  });
});

describe('toolgate serve stopped with SIGTERM', () => {
  let dataDir: string;
  beforeAll(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'toolgate-audit-'));
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('writes the entries it still holds before it exits', async () => {
    const port = await freePort();
    const serveEnv = { TOOLGATE_DATA_DIR: dataDir, TOOLGATE_PORT: String(port) };
    const created = await runToolgate(['keys', 'create', '--client', 'term-co', '--type', 'solo'], serveEnv);
    const key = /toolgate_[0-9A-Za-z]{49}/.exec(created.stdout)![0];
    const serving = await startServe(serveEnv);
    const client = await connect('2026-07-28', new URL(`http://127.0.0.1:${port}/mcp/`), {
      'X-API-Key': key,
    });
    const calls = 20;
    // All at once, then SIGTERM at once: the batch is still in memory, well within its second.
    await Promise.all(Array.from({ length: calls }, () => client.callTool('list_providers')));
    await client.close();
    expect(await serving.stop()).toBe(0);
    const exported = await runToolgate(['audit', 'export', '--event', 'tool_call'], {
      ...serveEnv,
      TOOLGATE_LOG_LEVEL: 'silent',
    });
    const records = parseLines(exported.stdout);
    expect(records).toHaveLength(calls);
    expect(new Set(records.map((r) => `${r.clientName} ${r.tool} ${r.outcome}`))).toEqual(
      new Set(['term-co list_providers ok']),
    );
  }, 60_000);
});
