import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Scope } from '../../../core/domain.js';
import { SqliteStore } from '../../../core/store/sqlite/index.js';

let dir: string;
let store: SqliteStore;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-store-'));
  store = new SqliteStore(join(dir, 'toolgate.db'));
  await store.migrate();
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A small deterministic PRNG so a failing case can be replayed from its seed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

describe('SqliteStore', () => {
  it('applies migrations once, and again applies none', async () => {
    const again = new SqliteStore(join(dir, 'toolgate.db'));
    expect(await again.migrate()).toEqual([]);
    await again.close();
  });

  it('sets a meta value only once', async () => {
    expect(await store.meta.setOnce('bootstrapped_at', 'a')).toBe(true);
    expect(await store.meta.setOnce('bootstrapped_at', 'b')).toBe(false);
    expect(await store.meta.get('bootstrapped_at')).toBe('a');
  });

  it("keeps every scope's rows to itself, over many random scopes", async () => {
    const random = prng(20261121);
    const clients = [
      await store.keys.createClient('c1'),
      await store.keys.createClient('c2'),
      await store.keys.createClient('c3'),
    ];
    const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
    // Deliberately colliding identifiers: the same user_id under different orgs and clients, the
    // same org_id under different clients, solo next to 2-level next to 3-level.
    const scopes: Scope[] = [];
    for (let i = 0; i < 60; i++) {
      const mode = pick(['solo', '2-level', '3-level']);
      scopes.push({
        clientId: pick(clients).id,
        orgId: mode === '3-level' ? pick(['org-1', 'org-2', 'ORG-1', 'org 1']) : null,
        userId: mode === 'solo' ? null : pick(['u1', 'u2', 'U1', 'u1 ', 'jane+x@example.com']),
      });
    }
    const key = (s: Scope) => JSON.stringify([s.clientId, s.orgId, s.userId]);
    const reports = new Map<string, string[]>();
    const connections = new Map<string, string[]>();
    for (const [i, scope] of scopes.entries()) {
      const report = await store.reports.insert(scope, {
        summary: `r${i}`,
        details: null,
        provider: null,
        tool: null,
      });
      reports.set(key(scope), [...(reports.get(key(scope)) ?? []), report.id]);
      await store.connections.put(scope, {
        id: `con_${i}`,
        provider: `p${i}`,
        state: 'connected',
        fields: {},
        account: null,
        credentials: `sealed-${i}`,
        oauthApp: null,
        expiresAt: null,
      });
      connections.set(key(scope), [...(connections.get(key(scope)) ?? []), `p${i}`]);
    }
    expect(reports.size).toBeGreaterThan(20);
    for (const scope of scopes) {
      const seenReports = await store.reports.listForScope(scope);
      expect(seenReports.map((r) => r.id).sort()).toEqual([...reports.get(key(scope))!].sort());
      for (const report of seenReports) expect(key(report.scope)).toBe(key(scope));
      const seenConnections = (await store.connections.list(scope)).map((c) => c.provider).sort();
      expect(seenConnections).toEqual([...connections.get(key(scope))!].sort());
      for (const provider of connections.get(key(scope))!) {
        expect((await store.connections.get(scope, provider))?.provider).toBe(provider);
      }
    }
    // Another scope's provider is invisible by name too, and cannot be deleted from here.
    const [first, other] = [scopes[0]!, scopes.find((s) => key(s) !== key(scopes[0]!))!];
    const foreign = connections.get(key(other))![0]!;
    expect(await store.connections.get(first, foreign)).toBeUndefined();
    expect(await store.connections.delete(first, foreign)).toBe(false);
    expect(await store.connections.get(other, foreign)).toBeDefined();
  });

  it('lists reports newest first and filters by status', async () => {
    const scope: Scope = { clientId: (await store.keys.createClient('c')).id, orgId: null, userId: null };
    const first = await store.reports.insert(scope, {
      summary: 'first',
      details: null,
      provider: 'github',
      tool: null,
    });
    await store.reports.insert(scope, {
      summary: 'second',
      details: 'd',
      provider: null,
      tool: 'github_issues_create',
    });
    expect(await store.reports.resolve(first.id, new Date().toISOString())).toBe(true);
    expect(await store.reports.resolve(first.id, new Date().toISOString())).toBe(false);
    expect((await store.reports.list({ status: 'open' })).map((r) => r.summary)).toEqual(['second']);
    expect((await store.reports.list({ status: 'resolved' })).map((r) => r.summary)).toEqual(['first']);
    expect((await store.reports.list({})).length).toBe(2);
  });

  it('sees the next write from this or another process on the per-call reads', async () => {
    const other = new SqliteStore(join(dir, 'toolgate.db'));
    const client = await store.keys.createClient('c');
    await store.keys.insertHashSecret({ version: 1, sealed: 'sealed-secret' });
    await store.keys.insert({
      id: 'key_1',
      clientId: client.id,
      type: 'solo',
      hash: 'h1',
      hashVersion: 1,
      hint: 'x',
    });
    const scope: Scope = { clientId: client.id, orgId: 'o', userId: 'u' };
    const connection = (id: string, credentials: string) => ({
      id,
      provider: 'github',
      state: 'connected' as const,
      fields: { site: 'a' },
      account: null,
      credentials,
      oauthApp: null,
      expiresAt: null,
    });
    await store.connections.put(scope, connection('con_1', 'sealed-1'));

    const key = await store.keys.findByHash(1, 'h1');
    const record = await store.connections.get(scope, 'github');
    expect(await store.keys.findByHash(1, 'h1')).toEqual(key);
    expect(await store.connections.get(scope, 'github')).toEqual(record);

    // Another connection (the CLI) revokes the key and replaces the connection.
    expect(await other.keys.revoke('key_1', '2026-11-22T00:00:00.000Z')).toBe(true);
    await other.connections.put(scope, connection('con_2', 'sealed-2'));
    expect((await store.keys.findByHash(1, 'h1'))?.revokedAt).toBe('2026-11-22T00:00:00.000Z');
    expect((await store.connections.get(scope, 'github'))?.credentials).toBe('sealed-2');

    // This connection's own writes.
    expect(await store.connections.delete(scope, 'github')).toBe(true);
    expect(await store.connections.get(scope, 'github')).toBeUndefined();
    await other.close();
  });
});
