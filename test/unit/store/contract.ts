import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Scope } from '../../../core/domain.js';
import type {
  AuditEntry,
  AuditRecord,
  ConnectionCount,
  ConnectionEvent,
  LinkRecord,
  NewConnection,
  NewIdentityProvider,
  OAuthAppRecord,
  SealedItem,
  Store,
} from '../../../core/store/types.js';

/**
 * One database for one test: a fresh, migrated, empty store, and the means to open more handles on
 * the same database. The suite closes every handle it got (`store` and each `open()`) exactly once,
 * then calls `destroy`.
 */
export interface StoreFixture {
  /** A fresh, migrated, empty store. */
  store: Store;
  /** Another independent handle on the same database, as another process (the CLI, a replica) opens it. */
  open(): Promise<Store>;
  /** Removes the database (files, schema) once every handle is closed. */
  destroy(): Promise<void>;
}

export type StoreFactory = () => Promise<StoreFixture>;

/** A small deterministic PRNG so a failing case can be replayed from its seed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** A fixed instant the explicit times of the tests count from. */
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);

/** The ISO time `seconds` after {@link T0}. */
function at(seconds: number): string {
  return new Date(T0 + seconds * 1000).toISOString();
}

/** Matches any string (a time the store stamps itself); typed so that it is no `any`. */
const anyString: unknown = expect.any(String);

let connectionIds = 0;

/** A connection to `provider`, with a fresh id (connection ids are unique across scopes). */
function connection(provider: string, overrides: Partial<NewConnection> = {}): NewConnection {
  return {
    id: `con_${provider}_${++connectionIds}`,
    provider,
    state: 'connected',
    fields: {},
    account: null,
    credentials: `sealed-${provider}`,
    oauthApp: null,
    expiresAt: null,
    ...overrides,
  };
}

/** A client named `clientName` with one solo key `key_1` stored under hash `h1` (hashing secret version 1). */
export async function seedKey(store: Store, clientName: string): Promise<{ clientId: string }> {
  const client = await store.keys.createClient(clientName);
  await store.keys.insertHashSecret({ version: 1, sealed: 'sealed-secret' });
  await store.keys.insert({
    id: 'key_1',
    clientId: client.id,
    type: 'solo',
    hash: 'h1',
    hashVersion: 1,
    hint: 'x',
  });
  return { clientId: client.id };
}

/**
 * Audit entries as migration 9 stored them, one column per field (SQL both dialects run as it is),
 * and the records they are read back as once migration 10 moved who and what into `context`.
 */
export const AUDIT_BEFORE_10 = {
  sql: `
INSERT INTO clients (id, name, created_at) VALUES ('cli_1', 'acme', '2026-11-22T10:00:00.000Z');
INSERT INTO audit_events (id, at, event, client_id, key_id, org_id, user_id, provider, tool, outcome,
  latency_us, upstream_status, message) VALUES
('aud_1', '2026-11-22T10:00:01.000Z', 'tool_call', 'cli_1', 'key_1', 'o1', 'u "1" \\ é', 'github',
  'github_get_user', 'error', 1234, 404, 'GitHub returned HTTP 404 Not Found.'),
('aud_2', '2026-11-22T10:00:02.000Z', 'key_revoked', 'cli_1', 'key_1', NULL, NULL, NULL, NULL, 'ok',
  NULL, NULL, NULL);`,
  records: [
    {
      id: 'aud_2',
      at: '2026-11-22T10:00:02.000Z',
      event: 'key_revoked',
      clientId: 'cli_1',
      clientName: 'acme',
      keyId: 'key_1',
      orgId: null,
      userId: null,
      provider: null,
      tool: null,
      outcome: 'ok',
      latencyUs: null,
      upstreamStatus: null,
      message: null,
    },
    {
      id: 'aud_1',
      at: '2026-11-22T10:00:01.000Z',
      event: 'tool_call',
      clientId: 'cli_1',
      clientName: 'acme',
      keyId: 'key_1',
      orgId: 'o1',
      userId: 'u "1" \\ é',
      provider: 'github',
      tool: 'github_get_user',
      outcome: 'error',
      latencyUs: 1234,
      upstreamStatus: 404,
      message: 'GitHub returned HTTP 404 Not Found.',
    },
  ] satisfies AuditRecord[],
};

/**
 * Migrates a store holding {@link AUDIT_BEFORE_10} at version 9 and reads the entries back: all of
 * them, and narrowed by fields that moved into the context column.
 */
export async function expectAuditBefore10Kept(store: Store): Promise<void> {
  expect(await store.migrate()).toEqual([10, 11]);
  expect(await store.audit.list({ limit: 10 })).toEqual(AUDIT_BEFORE_10.records);
  const user = AUDIT_BEFORE_10.records[1]!.userId!;
  expect((await store.audit.list({ limit: 10, user, client: 'acme' })).map((r) => r.id)).toEqual(['aud_1']);
}

type NewOAuthApp = Omit<OAuthAppRecord, 'createdAt' | 'supersededAt'>;

function oauthApp(
  id: string,
  provider: string,
  owner: { clientId: string; orgId: string } | null,
): NewOAuthApp {
  return {
    id,
    provider,
    clientId: owner?.clientId ?? null,
    orgId: owner?.orgId ?? null,
    oauthClientId: `client-of-${id}`,
    clientSecret: `sealed-secret-of-${id}`,
    branding: null,
    server: null,
  };
}

function link(scope: Scope, expiresAt: string, purpose = 'credentials'): LinkRecord {
  return { scope, provider: 'github', purpose, payload: '{"step":1}', expiresAt };
}

/**
 * Registers the contract every {@link Store} implementation passes (core/store/types.ts): what each
 * port promises, scope isolation, visibility of another process's writes, and failure by rejection.
 * A new implementation joins with one call and a factory.
 */
export function describeStoreContract(name: string, factory: StoreFactory): void {
  describe(`${name} (store contract)`, () => {
    let fixture: StoreFixture;
    let store: Store;
    let handles: Store[];

    beforeEach(async () => {
      fixture = await factory();
      store = fixture.store;
      handles = [store];
    });
    afterEach(async () => {
      vi.useRealTimers();
      try {
        await Promise.all(handles.map((handle) => handle.close()));
      } finally {
        await fixture.destroy();
      }
    });

    /** Another handle on the same database: another process (the CLI, a replica). */
    async function otherProcess(): Promise<Store> {
      const handle = await fixture.open();
      handles.push(handle);
      return handle;
    }

    async function close(handle: Store): Promise<void> {
      handles = handles.filter((h) => h !== handle);
      await handle.close();
    }

    /** A client and a scope under it (`orgId`/`userId` null unless given). */
    async function scopeOf(
      clientName: string,
      orgId: string | null = null,
      userId: string | null = null,
    ): Promise<Scope> {
      const client = (await store.keys.findClient(clientName)) ?? (await store.keys.createClient(clientName));
      return { clientId: client.id, orgId, userId };
    }

    describe('lifecycle', () => {
      it('applies migrations once, and again applies none, from any handle', async () => {
        const again = await otherProcess();
        expect(await again.migrate()).toEqual([]);
        expect(await store.migrate()).toEqual([]);
      });

      it('answers ping with true while open', async () => {
        expect(await store.ping()).toBe(true);
      });

      it('rejects (never throws synchronously) once closed, and ping answers false', async () => {
        const scope = await scopeOf('acme', 'o', 'u');
        await close(store);
        // The per-call reads may answer with a value (store/types.ts): these hold nothing in memory,
        // so they go to the closed database, and must reject.
        const calls: [string, () => unknown][] = [
          ['meta.setOnce', () => store.meta.setOnce('k', 'v')],
          ['keys.list', () => store.keys.list()],
          ['keys.findByHash', () => store.keys.findByHash(1, 'h')],
          ['scopes.listOrganizations', () => store.scopes.listOrganizations()],
          [
            'reports.insert',
            () => store.reports.insert(scope, { summary: 's', details: null, provider: null, tool: null }),
          ],
          ['connections.get', () => store.connections.get(scope, 'github')],
          ['connections.put', () => store.connections.put(scope, connection('github'))],
          ['links.consume', () => store.links.consume('h', at(0))],
          ['oauthApps.current', () => store.oauthApps.current('github', null)],
          ['dashboard.getPasswordHash', () => store.dashboard.getPasswordHash()],
          ['policies.get', () => store.policies.get(scope.clientId, null)],
          ['migrate', () => store.migrate()],
          ['resealAll', () => store.resealAll((item) => item.sealed)],
        ];
        for (const [method, call] of calls) {
          let promise: unknown;
          expect(() => {
            promise = call();
          }, method).not.toThrow();
          await expect(promise, method).rejects.toThrow();
        }
        let ping: Promise<boolean> | undefined;
        expect(() => {
          ping = store.ping();
        }).not.toThrow();
        await expect(ping).resolves.toBe(false);
      });
    });

    describe('meta', () => {
      it('sets a meta value only once', async () => {
        expect(await store.meta.get('bootstrapped_at')).toBeUndefined();
        expect(await store.meta.setOnce('bootstrapped_at', 'a')).toBe(true);
        expect(await store.meta.setOnce('bootstrapped_at', 'b')).toBe(false);
        expect(await store.meta.get('bootstrapped_at')).toBe('a');
      });
    });

    describe('keys', () => {
      it('inserts a hashing secret version once; an existing version is kept and reported false', async () => {
        expect(await store.keys.listHashSecrets()).toEqual([]);
        expect(await store.keys.insertHashSecret({ version: 1, sealed: 'sealed-1' })).toBe(true);
        expect(await store.keys.insertHashSecret({ version: 1, sealed: 'other' })).toBe(false);
        expect(await store.keys.insertHashSecret({ version: 2, sealed: 'sealed-2' })).toBe(true);
        const secrets = (await store.keys.listHashSecrets()).sort((a, b) => a.version - b.version);
        expect(secrets).toEqual([
          { version: 1, sealed: 'sealed-1' },
          { version: 2, sealed: 'sealed-2' },
        ]);
      });

      it('creates clients and finds them by name', async () => {
        const acme = await store.keys.createClient('acme');
        const beta = await store.keys.createClient('beta');
        expect(acme).toEqual({ id: anyString, name: 'acme', createdAt: anyString });
        expect(acme.id).not.toBe(beta.id);
        expect(await store.keys.findClient('acme')).toEqual(acme);
        expect(await store.keys.findClient('ACME')).toBeUndefined();
        expect(await store.keys.findClient('nobody')).toBeUndefined();
        const names = (await store.keys.listClients()).map((c) => c.name).sort();
        expect(names).toEqual(['acme', 'beta']);
      });

      it('finds a key by hash version and hash, gets and lists it', async () => {
        const client = await store.keys.createClient('acme');
        await store.keys.insertHashSecret({ version: 1, sealed: 's1' });
        await store.keys.insertHashSecret({ version: 2, sealed: 's2' });
        await store.keys.insert({
          id: 'key_1',
          clientId: client.id,
          type: 'client',
          hash: 'h1',
          hashVersion: 1,
          hint: 'tg_…abcd',
        });
        await store.keys.insert({
          id: 'key_2',
          clientId: client.id,
          type: 'solo',
          hash: 'h2',
          hashVersion: 2,
          hint: 'tg_…efgh',
        });
        const expected = {
          id: 'key_1',
          clientId: client.id,
          clientName: 'acme',
          type: 'client',
          hint: 'tg_…abcd',
          createdAt: anyString,
          lastUsedAt: null,
          revokedAt: null,
        };
        expect(await store.keys.findByHash(1, 'h1')).toEqual(expected);
        expect(await store.keys.findByHash(2, 'h1')).toBeUndefined();
        expect(await store.keys.findByHash(1, 'h2')).toBeUndefined();
        expect(await store.keys.findByHash(1, 'nope')).toBeUndefined();
        expect(await store.keys.get('key_1')).toEqual(expected);
        expect(await store.keys.get('key_missing')).toBeUndefined();
        const listed = await store.keys.list();
        expect(listed.map((k) => k.id).sort()).toEqual(['key_1', 'key_2']);
        expect(listed.find((k) => k.id === 'key_1')).toEqual(expected);
        // The same hash under another version is another key, whichever was asked for first.
        await store.keys.insert({
          id: 'key_3',
          clientId: client.id,
          type: 'solo',
          hash: 'h1',
          hashVersion: 2,
          hint: 'tg_…ijkl',
        });
        expect((await store.keys.findByHash(1, 'h1'))?.id).toBe('key_1');
        expect((await store.keys.findByHash(2, 'h1'))?.id).toBe('key_3');
        expect((await store.keys.findByHash(1, 'h1'))?.id).toBe('key_1');
      });

      it('revokes a key once, keeps finding it by hash, and lists it as revoked since a time', async () => {
        const client = await store.keys.createClient('acme');
        await store.keys.insertHashSecret({ version: 1, sealed: 's1' });
        for (const id of ['key_1', 'key_2', 'key_3']) {
          await store.keys.insert({
            id,
            clientId: client.id,
            type: 'solo',
            hash: id,
            hashVersion: 1,
            hint: 'x',
          });
        }
        expect(await store.keys.revoke('key_1', at(10))).toBe(true);
        expect(await store.keys.revoke('key_1', at(20))).toBe(false);
        expect(await store.keys.revoke('key_missing', at(20))).toBe(false);
        expect(await store.keys.revoke('key_2', at(30))).toBe(true);
        expect((await store.keys.get('key_1'))?.revokedAt).toBe(at(10));
        expect((await store.keys.findByHash(1, 'key_1'))?.revokedAt).toBe(at(10));
        expect((await store.keys.get('key_3'))?.revokedAt).toBeNull();
        expect((await store.keys.revokedSince(at(0))).sort()).toEqual(['key_1', 'key_2']);
        expect(await store.keys.revokedSince(at(10))).toContain('key_1');
        expect(await store.keys.revokedSince(at(11))).toEqual(['key_2']);
        expect(await store.keys.revokedSince(at(31))).toEqual([]);
      });

      it('records when a key was last used, seen by the next lookup by hash', async () => {
        await seedKey(store, 'acme');
        expect((await store.keys.findByHash(1, 'h1'))?.lastUsedAt).toBeNull();
        await store.keys.touch('key_1', at(5));
        expect((await store.keys.findByHash(1, 'h1'))?.lastUsedAt).toBe(at(5));
        await store.keys.touch('key_1', at(6));
        expect((await store.keys.get('key_1'))?.lastUsedAt).toBe(at(6));
      });
    });

    describe('scopes', () => {
      it('ensures a scope idempotently, with one id per distinct scope, from any process', async () => {
        const a = await scopeOf('acme', 'org-1', 'u1');
        const id = await store.scopes.ensure(a);
        expect(typeof id).toBe('string');
        expect(await store.scopes.ensure(a)).toBe(id);
        expect(await store.scopes.ensure({ ...a })).toBe(id);
        expect(await (await otherProcess()).scopes.ensure(a)).toBe(id);
        const others = await Promise.all([
          store.scopes.ensure({ ...a, userId: 'U1' }),
          store.scopes.ensure({ ...a, userId: null }),
          store.scopes.ensure({ ...a, orgId: null }),
          store.scopes.ensure({ ...a, orgId: null, userId: null }),
          store.scopes.ensure({ ...(await scopeOf('beta')), orgId: 'org-1', userId: 'u1' }),
        ]);
        expect(new Set([id, ...others]).size).toBe(6);
      });

      it('lists organizations by client name then org, counting their users', async () => {
        const beta = await scopeOf('beta');
        const acme = await scopeOf('acme');
        const ensure = (base: Scope, orgId: string | null, userId: string | null) =>
          store.scopes.ensure({ clientId: base.clientId, orgId, userId });
        await ensure(beta, 'org-1', 'u1');
        await ensure(acme, 'org-2', 'u1');
        await ensure(acme, 'org-1', 'u1');
        await ensure(acme, 'org-1', 'u2');
        await ensure(acme, 'org-1', 'u2');
        // Solo and 2-level scopes are no organization.
        await ensure(acme, null, null);
        await ensure(acme, null, 'u3');
        // A scope created by a write counts too.
        await store.connections.put(
          { clientId: acme.clientId, orgId: 'org-2', userId: 'u2' },
          connection('x'),
        );

        const organizations = await store.scopes.listOrganizations();
        expect(organizations).toEqual([
          {
            clientId: acme.clientId,
            clientName: 'acme',
            orgId: 'org-1',
            users: 2,
            firstSeenAt: anyString,
          },
          {
            clientId: acme.clientId,
            clientName: 'acme',
            orgId: 'org-2',
            users: 2,
            firstSeenAt: anyString,
          },
          {
            clientId: beta.clientId,
            clientName: 'beta',
            orgId: 'org-1',
            users: 1,
            firstSeenAt: anyString,
          },
        ]);
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
          await store.connections.put(
            scope,
            connection(`p${i}`, { id: `con_${i}`, credentials: `sealed-${i}` }),
          );
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
        expect(await store.connections.setState(first, foreign, 'reapproval_needed')).toBe(false);
        expect(
          await store.connections.swapCredentials(first, foreign, `sealed-${scopes.indexOf(other)}`, {
            credentials: 'stolen',
            expiresAt: null,
          }),
        ).toBe(false);
        const untouched = await store.connections.get(other, foreign);
        expect(untouched?.state).toBe('connected');
        expect(untouched?.credentials).not.toBe('stolen');
      });
    });

    describe('reports', () => {
      it('lists reports newest first and filters by status', async () => {
        const scope = await scopeOf('c');
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
        expect(await store.reports.resolve('rep_missing', new Date().toISOString())).toBe(false);
        expect((await store.reports.list({ status: 'open' })).map((r) => r.summary)).toEqual(['second']);
        expect((await store.reports.list({ status: 'resolved' })).map((r) => r.summary)).toEqual(['first']);
        expect((await store.reports.list({})).length).toBe(2);
      });

      it('keeps a report whose texts hold NUL or lone surrogates, those characters as U+FFFD', async () => {
        const scope = await scopeOf('c');
        const odd = 'a\u0000b\ud800c\udc00d😀';
        const filed = await store.reports.insert(scope, {
          summary: odd,
          details: `details ${odd}`,
          provider: odd,
          tool: odd,
        });
        const kept = 'a\ufffdb\ufffdc\ufffdd😀';
        expect(filed).toMatchObject({
          summary: kept,
          details: `details ${kept}`,
          provider: kept,
          tool: kept,
        });
        expect(await store.reports.listForScope(scope)).toEqual([filed]);
      });

      it('returns the filed report as it is listed, and shows when it was resolved', async () => {
        const scope = await scopeOf('acme', 'org-1', 'u1');
        const filed = await store.reports.insert(scope, {
          summary: 'broken',
          details: 'stack',
          provider: 'github',
          tool: 'github_issues_list',
        });
        expect(filed).toEqual({
          id: anyString,
          scope,
          summary: 'broken',
          details: 'stack',
          provider: 'github',
          tool: 'github_issues_list',
          createdAt: anyString,
          resolvedAt: null,
        });
        expect(await store.reports.listForScope(scope)).toEqual([filed]);
        expect(await store.reports.resolve(filed.id, at(60))).toBe(true);
        expect(await store.reports.list({})).toEqual([{ ...filed, resolvedAt: at(60) }]);
      });

      it('lists reports filed at different times newest first, per scope and overall', async () => {
        const a = await scopeOf('acme', null, 'u1');
        const b = await scopeOf('acme', null, 'u2');
        vi.useFakeTimers({ toFake: ['Date'] });
        const file = async (scope: Scope, summary: string, seconds: number) => {
          vi.setSystemTime(T0 + seconds * 1000);
          await store.reports.insert(scope, { summary, details: null, provider: null, tool: null });
        };
        await file(a, 'a1', 0);
        await file(b, 'b1', 1);
        await file(a, 'a2', 2);
        await file(b, 'b2', 3);
        vi.useRealTimers();
        expect((await store.reports.listForScope(a)).map((r) => r.summary)).toEqual(['a2', 'a1']);
        expect((await store.reports.list({})).map((r) => r.summary)).toEqual(['b2', 'a2', 'b1', 'a1']);
      });

      it('lists reports filed within the same millisecond newest first', async () => {
        const scope = await scopeOf('acme');
        vi.useFakeTimers({ toFake: ['Date'] });
        vi.setSystemTime(T0);
        for (let i = 0; i < 8; i++) {
          await store.reports.insert(scope, { summary: `#${i}`, details: null, provider: null, tool: null });
        }
        vi.useRealTimers();
        const newestFirst = ['#7', '#6', '#5', '#4', '#3', '#2', '#1', '#0'];
        expect((await store.reports.listForScope(scope)).map((r) => r.summary)).toEqual(newestFirst);
        expect((await store.reports.list({})).map((r) => r.summary)).toEqual(newestFirst);
      });
    });

    describe('connections', () => {
      it('stores a connection and gives it back whole', async () => {
        const scope = await scopeOf('acme', 'org-1', 'u1');
        const stored = connection('github', {
          id: 'con_1',
          fields: { site: 'https://example.com', region: 'eu' },
          account: 'jane',
          credentials: 'sealed-1',
          oauthApp: 'app_1',
          expiresAt: at(3600),
        });
        await store.connections.put(scope, stored);
        const got = await store.connections.get(scope, 'github');
        expect(got).toEqual({ ...stored, createdAt: anyString, updatedAt: anyString });
        expect(await store.connections.list(scope)).toEqual([got]);
        expect(await store.connections.get(scope, 'slack')).toBeUndefined();
      });

      it('replaces a connection whole on put (id, credentials and all)', async () => {
        const scope = await scopeOf('acme', null, 'u1');
        await store.connections.put(
          scope,
          connection('github', {
            id: 'con_old',
            fields: { site: 'old', extra: 'gone' },
            account: 'old-account',
            credentials: 'sealed-old',
            oauthApp: 'app_old',
            expiresAt: at(10),
            state: 'reapproval_needed',
          }),
        );
        const next = connection('github', {
          id: 'con_new',
          fields: { site: 'new' },
          account: null,
          credentials: 'sealed-new',
          oauthApp: null,
          expiresAt: null,
        });
        await store.connections.put(scope, next);
        const got = await store.connections.get(scope, 'github');
        expect(got).toEqual({ ...next, createdAt: anyString, updatedAt: anyString });
        expect((await store.connections.list(scope)).map((c) => c.id)).toEqual(['con_new']);
      });

      it('deletes a connection, and reports false when there is none', async () => {
        const scope = await scopeOf('acme');
        await store.connections.put(scope, connection('github'));
        expect(await store.connections.delete(scope, 'github')).toBe(true);
        expect(await store.connections.get(scope, 'github')).toBeUndefined();
        expect(await store.connections.list(scope)).toEqual([]);
        expect(await store.connections.delete(scope, 'github')).toBe(false);
        expect(await store.connections.delete(scope, 'never')).toBe(false);
      });

      it('sets the state of an existing connection only', async () => {
        const scope = await scopeOf('acme');
        await store.connections.put(scope, connection('github'));
        expect(await store.connections.setState(scope, 'github', 'reapproval_needed')).toBe(true);
        expect((await store.connections.get(scope, 'github'))?.state).toBe('reapproval_needed');
        expect(await store.connections.setState(scope, 'github', 'connected')).toBe(true);
        expect((await store.connections.get(scope, 'github'))?.state).toBe('connected');
        expect(await store.connections.setState(scope, 'slack', 'connected')).toBe(false);
        expect(await store.connections.get(scope, 'slack')).toBeUndefined();
      });

      it('lists only connected connections whose token expires before the bound', async () => {
        const a = await scopeOf('acme', 'org-1', 'u1');
        const b = await scopeOf('beta', null, 'u2');
        await store.connections.put(a, connection('github', { expiresAt: at(100) }));
        await store.connections.put(b, connection('github', { expiresAt: at(50) }));
        await store.connections.put(a, connection('slack', { expiresAt: at(500) }));
        await store.connections.put(a, connection('bound', { expiresAt: at(200) }));
        await store.connections.put(a, connection('never', { expiresAt: null }));
        await store.connections.put(
          b,
          connection('stuck', { expiresAt: at(10), state: 'reapproval_needed' }),
        );
        const expiring = await store.connections.listExpiring(at(200));
        expect(expiring.sort((x, y) => x.expiresAt.localeCompare(y.expiresAt))).toEqual([
          { scope: b, provider: 'github', expiresAt: at(50) },
          { scope: a, provider: 'github', expiresAt: at(100) },
        ]);
        expect(await store.connections.listExpiring(at(0))).toEqual([]);
      });

      it('swaps credentials only against the expected value (compare-and-set), back to connected', async () => {
        const scope = await scopeOf('acme', null, 'u1');
        await store.connections.put(
          scope,
          connection('github', { credentials: 'sealed-old', expiresAt: at(10) }),
        );
        expect(await store.connections.setState(scope, 'github', 'reapproval_needed')).toBe(true);

        const stale = await store.connections.swapCredentials(scope, 'github', 'sealed-stale', {
          credentials: 'sealed-wrong',
          expiresAt: at(99),
        });
        expect(stale).toBe(false);
        const before = await store.connections.get(scope, 'github');
        expect(before?.credentials).toBe('sealed-old');
        expect(before?.expiresAt).toBe(at(10));
        expect(before?.state).toBe('reapproval_needed');

        const next = { credentials: 'sealed-new', expiresAt: at(3600) };
        expect(await store.connections.swapCredentials(scope, 'github', 'sealed-old', next)).toBe(true);
        const after = await store.connections.get(scope, 'github');
        expect(after?.credentials).toBe('sealed-new');
        expect(after?.expiresAt).toBe(at(3600));
        expect(after?.state).toBe('connected');
        expect(after?.id).toBe(before?.id);
        expect(await store.connections.swapCredentials(scope, 'github', 'sealed-old', next)).toBe(false);
        expect(
          await store.connections.swapCredentials(scope, 'slack', 'sealed-new', {
            credentials: 'x',
            expiresAt: null,
          }),
        ).toBe(false);
        const cleared = { credentials: 'sealed-newer', expiresAt: null };
        expect(await store.connections.swapCredentials(scope, 'github', 'sealed-new', cleared)).toBe(true);
        expect((await store.connections.get(scope, 'github'))?.expiresAt).toBeNull();
      });

      it('lets exactly one of two processes swap the same credentials', async () => {
        const scope = await scopeOf('acme', null, 'u1');
        const other = await otherProcess();
        await store.connections.put(scope, connection('github', { credentials: 'sealed-old' }));
        const results = await Promise.all([
          store.connections.swapCredentials(scope, 'github', 'sealed-old', {
            credentials: 'by-a',
            expiresAt: null,
          }),
          other.connections.swapCredentials(scope, 'github', 'sealed-old', {
            credentials: 'by-b',
            expiresAt: null,
          }),
        ]);
        expect(results.filter(Boolean)).toHaveLength(1);
        const winner = results[0] ? 'by-a' : 'by-b';
        expect((await store.connections.get(scope, 'github'))?.credentials).toBe(winner);
        expect((await other.connections.get(scope, 'github'))?.credentials).toBe(winner);
      });

      it('lists connection events newest first, up to the limit', async () => {
        const a = await scopeOf('acme', 'org-1', 'u1');
        const b = await scopeOf('beta');
        vi.useFakeTimers({ toFake: ['Date'] });
        const record = async (
          scope: Scope,
          provider: string,
          event: ConnectionEvent,
          seconds: number,
          detail?: string,
        ) => {
          vi.setSystemTime(T0 + seconds * 1000);
          await (detail === undefined
            ? store.connections.addEvent(scope, provider, event)
            : store.connections.addEvent(scope, provider, event, detail));
        };
        await record(a, 'github', 'connected', 0);
        await record(a, 'github', 'refreshed', 1, 'token refreshed');
        await record(b, 'slack', 'reapproval_needed', 2, 'invalid_grant');
        await record(a, 'github', 'disconnected', 3);
        vi.useRealTimers();

        const events = await store.connections.listEvents(10);
        expect(events.map((e) => e.event)).toEqual([
          'disconnected',
          'reapproval_needed',
          'refreshed',
          'connected',
        ]);
        expect(events[1]).toEqual({
          scope: b,
          clientName: 'beta',
          provider: 'slack',
          event: 'reapproval_needed',
          detail: 'invalid_grant',
          createdAt: anyString,
        });
        expect(events[0]).toEqual({
          scope: a,
          clientName: 'acme',
          provider: 'github',
          event: 'disconnected',
          detail: null,
          createdAt: anyString,
        });
        expect((await store.connections.listEvents(2)).map((e) => e.event)).toEqual([
          'disconnected',
          'reapproval_needed',
        ]);
        expect(await store.connections.listEvents(0)).toEqual([]);
      });

      it('lists connection events recorded within the same millisecond newest first', async () => {
        const scope = await scopeOf('acme', null, 'u1');
        vi.useFakeTimers({ toFake: ['Date'] });
        vi.setSystemTime(T0);
        const events: ConnectionEvent[] = ['connected', 'refreshed', 'reapproval_needed', 'disconnected'];
        for (let i = 0; i < 8; i++) {
          await store.connections.addEvent(scope, 'github', events[i % events.length]!, `#${i}`);
        }
        vi.useRealTimers();
        expect((await store.connections.listEvents(8)).map((e) => e.detail)).toEqual([
          '#7',
          '#6',
          '#5',
          '#4',
          '#3',
          '#2',
          '#1',
          '#0',
        ]);
      });

      it('counts connections per client, organization, provider and state', async () => {
        const acme = await scopeOf('acme');
        const beta = await scopeOf('beta');
        const under = (base: Scope, orgId: string | null, userId: string | null): Scope => ({
          clientId: base.clientId,
          orgId,
          userId,
        });
        await store.connections.put(under(acme, null, 'u1'), connection('github'));
        await store.connections.put(under(acme, null, 'u2'), connection('github'));
        await store.connections.put(
          under(acme, null, 'u3'),
          connection('github', { state: 'reapproval_needed' }),
        );
        await store.connections.put(under(acme, 'org-1', 'u1'), connection('github'));
        await store.connections.put(under(acme, 'org-1', 'u2'), connection('slack'));
        await store.connections.put(under(beta, null, null), connection('github'));
        await store.connections.put(under(beta, null, null), connection('github', { id: 'con_again' }));

        const key = (c: ConnectionCount) => [c.clientName, c.orgId ?? '', c.provider, c.state].join('|');
        const counts = (await store.connections.count()).sort((x, y) => key(x).localeCompare(key(y)));
        const row = (base: Scope, clientName: string, orgId: string | null, provider: string) => ({
          clientId: base.clientId,
          clientName,
          orgId,
          provider,
        });
        expect(counts).toEqual([
          { ...row(acme, 'acme', null, 'github'), state: 'connected', count: 2 },
          { ...row(acme, 'acme', null, 'github'), state: 'reapproval_needed', count: 1 },
          { ...row(acme, 'acme', 'org-1', 'github'), state: 'connected', count: 1 },
          { ...row(acme, 'acme', 'org-1', 'slack'), state: 'connected', count: 1 },
          { ...row(beta, 'beta', null, 'github'), state: 'connected', count: 1 },
        ]);
      });

      it("does not let a caller's change to a returned record reach the store or the next read", async () => {
        const scope = await scopeOf('acme', null, 'u1');
        await store.connections.put(
          scope,
          connection('github', { fields: { site: 'a' }, credentials: 'sealed-1' }),
        );
        const first = await store.connections.get(scope, 'github');
        // Reflect.set: a frozen record refuses quietly; a mutable copy takes the change.
        Reflect.set(first!, 'credentials', 'tampered');
        Reflect.set(first!.fields, 'site', 'tampered');
        const again = await store.connections.get(scope, 'github');
        expect(again?.credentials).toBe('sealed-1');
        expect(again?.fields).toEqual({ site: 'a' });
        expect((await store.connections.list(scope))[0]?.credentials).toBe('sealed-1');
      });
    });

    describe('links', () => {
      it('peeks a live link without using it up, then consumes it once', async () => {
        const scope = await scopeOf('acme', 'org-1', 'u1');
        const stored = link(scope, at(600));
        await store.links.create('hash-1', stored);
        expect(await store.links.peek('hash-1', at(0))).toEqual(stored);
        expect(await store.links.peek('hash-1', at(1))).toEqual(stored);
        expect(await store.links.consume('hash-1', at(2))).toEqual(stored);
        expect(await store.links.consume('hash-1', at(3))).toBeUndefined();
        expect(await store.links.peek('hash-1', at(3))).toBeUndefined();
        expect(await store.links.peek('hash-unknown', at(0))).toBeUndefined();
        expect(await store.links.consume('hash-unknown', at(0))).toBeUndefined();
      });

      it('hands a link to exactly one of two concurrent consumers, in one process or two', async () => {
        const scope = await scopeOf('acme', null, 'u1');
        const other = await otherProcess();
        await store.links.create('hash-1', link(scope, at(600)));
        await store.links.create('hash-2', link(scope, at(600)));
        const sameProcess = await Promise.all([
          store.links.consume('hash-1', at(0)),
          store.links.consume('hash-1', at(0)),
        ]);
        expect(sameProcess.filter((l) => l !== undefined)).toHaveLength(1);
        const twoProcesses = await Promise.all([
          store.links.consume('hash-2', at(0)),
          other.links.consume('hash-2', at(0)),
        ]);
        expect(twoProcesses.filter((l) => l !== undefined)).toHaveLength(1);
      });

      it('returns no expired link, from peek or consume', async () => {
        const scope = await scopeOf('acme');
        await store.links.create('hash-1', link(scope, at(60)));
        expect(await store.links.peek('hash-1', at(60))).toBeUndefined();
        expect(await store.links.consume('hash-1', at(61))).toBeUndefined();
        expect(await store.links.peek('hash-1', at(3600))).toBeUndefined();
        // Still live before its expiry: the expired answers above did not use it up.
        expect(await store.links.consume('hash-1', at(59))).toEqual(link(scope, at(60)));
      });

      it('purges expired links and says how many', async () => {
        const scope = await scopeOf('acme');
        await store.links.create('hash-1', link(scope, at(10)));
        await store.links.create('hash-2', link(scope, at(20)));
        await store.links.create('hash-3', link(scope, at(30)));
        expect(await store.links.purgeExpired(at(5))).toBe(0);
        expect(await store.links.purgeExpired(at(20))).toBe(2);
        expect(await store.links.purgeExpired(at(20))).toBe(0);
        // Gone for good: not even a time before their expiry finds them.
        expect(await store.links.peek('hash-1', at(0))).toBeUndefined();
        expect(await store.links.peek('hash-2', at(0))).toBeUndefined();
        expect(await store.links.peek('hash-3', at(0))).toEqual(link(scope, at(30)));
      });
    });

    describe('oauthApps', () => {
      it("supersedes the owner's current app on put, and keeps every app by id", async () => {
        const acme = await scopeOf('acme');
        const org = { clientId: acme.clientId, orgId: 'org-1' };
        await store.oauthApps.put(oauthApp('app_default_1', 'github', null));
        await store.oauthApps.put(oauthApp('app_org_1', 'github', org));
        await store.oauthApps.put(oauthApp('app_slack', 'slack', null));
        await store.oauthApps.put(oauthApp('app_default_2', 'github', null));

        const current = await store.oauthApps.current('github', null);
        expect(current).toEqual({
          ...oauthApp('app_default_2', 'github', null),
          createdAt: anyString,
          supersededAt: null,
        });
        expect((await store.oauthApps.current('github', org))?.id).toBe('app_org_1');
        expect((await store.oauthApps.current('slack', null))?.id).toBe('app_slack');
        expect(await store.oauthApps.current('slack', org)).toBeUndefined();
        expect(await store.oauthApps.current('github', { ...org, orgId: 'org-2' })).toBeUndefined();

        const old = await store.oauthApps.get('app_default_1');
        expect(old).toMatchObject({ id: 'app_default_1', oauthClientId: 'client-of-app_default_1' });
        expect(old?.supersededAt).toEqual(anyString);
        expect((await store.oauthApps.get('app_org_1'))?.supersededAt).toBeNull();
        expect(await store.oauthApps.get('app_missing')).toBeUndefined();
        expect((await store.oauthApps.get('app_org_1'))?.clientId).toBe(acme.clientId);
        expect((await store.oauthApps.get('app_org_1'))?.orgId).toBe('org-1');

        const listed = await store.oauthApps.list();
        expect(listed.map((a) => a.id).sort()).toEqual([
          'app_default_1',
          'app_default_2',
          'app_org_1',
          'app_slack',
        ]);
        expect(
          listed
            .filter((a) => a.supersededAt === null)
            .map((a) => a.id)
            .sort(),
        ).toEqual(['app_default_2', 'app_org_1', 'app_slack']);
      });

      it("keeps upstream authorization servers' clients apart from the apps operators set, per issuer", async () => {
        const server = (issuer: string, method: 'dcr' | 'cimd') => ({
          method,
          issuer,
          authorizationUrl: `${issuer}/authorize`,
          tokenUrl: `${issuer}/token`,
          revocationUrl: null,
          authMethod: 'client_secret_basic' as const,
          resource: 'https://mcp.example.test/mcp',
          scopes: ['read'],
          app: null,
        });
        await store.oauthApps.put(oauthApp('app_operator', 'linear', null));
        await store.oauthApps.put({
          ...oauthApp('app_dcr_a', 'linear', null),
          server: server('https://a.test', 'dcr'),
        });
        await store.oauthApps.put({
          ...oauthApp('app_dcr_b', 'linear', null),
          server: server('https://b.test', 'dcr'),
        });
        // Neither registration superseded the operator's app, nor the other issuer's client.
        expect((await store.oauthApps.current('linear', null))?.id).toBe('app_operator');
        expect((await store.oauthApps.current('linear', null, 'https://a.test'))?.server).toEqual(
          server('https://a.test', 'dcr'),
        );
        expect((await store.oauthApps.current('linear', null, 'https://b.test'))?.id).toBe('app_dcr_b');
        expect((await store.oauthApps.list()).map((a) => a.id)).toEqual(['app_operator']);

        // The authorization server forgot its client: superseded once, still readable by id.
        expect(await store.oauthApps.supersede('app_dcr_a')).toBe(true);
        expect(await store.oauthApps.supersede('app_dcr_a')).toBe(false);
        expect(await store.oauthApps.current('linear', null, 'https://a.test')).toBeUndefined();
        expect((await store.oauthApps.get('app_dcr_a'))?.supersededAt).toEqual(anyString);
        await store.oauthApps.put({
          ...oauthApp('app_cimd_a', 'linear', null),
          server: server('https://a.test', 'cimd'),
        });
        expect((await store.oauthApps.current('linear', null, 'https://a.test'))?.id).toBe('app_cimd_a');
      });

      it('updates the branding of an app in place', async () => {
        const acme = await scopeOf('acme');
        const org = { clientId: acme.clientId, orgId: 'org-1' };
        await store.oauthApps.put({ ...oauthApp('app_1', 'github', org), branding: { displayName: 'Acme' } });
        expect((await store.oauthApps.get('app_1'))?.branding).toEqual({ displayName: 'Acme' });
        const branding = {
          displayName: 'Acme Inc',
          logoUrl: 'https://acme.test/logo.png',
          accentColor: '#ff0000',
        };
        expect(await store.oauthApps.setBranding('app_1', branding)).toBe(true);
        const current = await store.oauthApps.current('github', org);
        expect(current?.id).toBe('app_1');
        expect(current?.branding).toEqual(branding);
        expect(current?.supersededAt).toBeNull();
        expect(await store.oauthApps.setBranding('app_1', null)).toBe(true);
        expect((await store.oauthApps.get('app_1'))?.branding).toBeNull();
        expect(await store.oauthApps.setBranding('app_missing', branding)).toBe(false);
        expect(await store.oauthApps.list()).toHaveLength(1);
      });
    });

    describe('policies', () => {
      it("keeps one policy per client and organization, replaced whole, and sees another process's writes", async () => {
        const acme = await scopeOf('acme');
        const globex = await scopeOf('globex');
        expect(await store.policies.get(acme.clientId, null)).toBeUndefined();
        const client = {
          clientId: acme.clientId,
          orgId: null,
          surface: 'full' as const,
          allow: null,
          deny: ['stripe'],
        };
        const org = {
          clientId: acme.clientId,
          orgId: 'org-1',
          surface: 'auto' as const,
          allow: ['github_*'],
          deny: [],
        };
        await store.policies.set(client);
        await store.policies.set(org);
        await store.policies.set({ ...client, clientId: globex.clientId, surface: 'compact' });
        expect(await store.policies.get(acme.clientId, null)).toMatchObject(client);
        expect(await store.policies.get(acme.clientId, 'org-1')).toMatchObject(org);
        expect(await store.policies.get(acme.clientId, 'org-2')).toBeUndefined();
        expect((await store.policies.get(globex.clientId, null))?.surface).toBe('compact');

        // The CLI (another handle) replaces the client's policy: this process reads the new one.
        const other = await otherProcess();
        await other.policies.set({ ...client, allow: ['slack'], deny: [] });
        const replaced = await store.policies.get(acme.clientId, null);
        expect(replaced).toMatchObject({ allow: ['slack'], deny: [], surface: 'full' });
        expect(Number.isNaN(Date.parse(replaced!.updatedAt))).toBe(false);

        // By client id, then organization (the client's own first): ids have one length, so a sort of
        // "client/org" strings orders them the same way.
        const listed = await store.policies.list();
        expect(listed.map((p) => `${p.clientId}/${p.orgId ?? ''}`)).toEqual(
          [`${acme.clientId}/`, `${acme.clientId}/org-1`, `${globex.clientId}/`].sort(),
        );

        expect(await other.policies.delete(acme.clientId, 'org-1')).toBe(true);
        expect(await other.policies.delete(acme.clientId, 'org-1')).toBe(false);
        expect(await store.policies.get(acme.clientId, 'org-1')).toBeUndefined();
        expect(await store.policies.get(acme.clientId, null)).toBeDefined();
      });

      it('refuses a policy of a client that does not exist', async () => {
        await expect(
          store.policies.set({
            clientId: 'cli_missing',
            orgId: null,
            surface: 'auto',
            allow: null,
            deny: [],
          }),
        ).rejects.toThrow();
      });
    });

    describe('frontDoor', () => {
      const record = (grantId: string | null, expiresAt = at(3_600)) => ({
        model: 'RefreshToken',
        payload: '{"accountId":"a"}',
        grantId,
        uidHash: null,
        expiresAt,
      });

      it('gives a record back by its hash until it expires, and finds a session by its uid hash', async () => {
        vi.useFakeTimers({ now: T0, toFake: ['Date'] });
        await store.frontDoor.put('h-token', record('g1'));
        await store.frontDoor.put('h-session', { ...record(null), model: 'Session', uidHash: 'h-uid' });
        await expect(store.frontDoor.get('h-token', at(10))).resolves.toEqual({
          ...record('g1'),
          consumedAt: null,
        });
        await expect(store.frontDoor.get('h-token', at(3_600))).resolves.toBeUndefined();
        await expect(store.frontDoor.getByUid('Session', 'h-uid', at(10))).resolves.toMatchObject({
          model: 'Session',
        });
        await expect(store.frontDoor.getByUid('Grant', 'h-uid', at(10))).resolves.toBeUndefined();
        await store.frontDoor.put('h-token', { ...record('g1'), payload: '{"accountId":"b"}' });
        await expect(store.frontDoor.get('h-token', at(10))).resolves.toMatchObject({
          payload: '{"accountId":"b"}',
        });
        await expect(store.frontDoor.purgeExpired(at(3_600))).resolves.toBe(2);
      });

      it('lets exactly one of two processes consume a record, and deletes a grant whole', async () => {
        const other = await otherProcess();
        await store.frontDoor.put('h-a', record('g1'));
        await store.frontDoor.put('h-b', record('g1'));
        await store.frontDoor.put('h-c', record('g2'));
        const won = await Promise.all([
          store.frontDoor.consume('h-a', at(1)),
          other.frontDoor.consume('h-a', at(1)),
        ]);
        expect(won.filter(Boolean)).toHaveLength(1);
        await expect(other.frontDoor.get('h-a', at(2))).resolves.toMatchObject({ consumedAt: at(1) });
        await expect(store.frontDoor.destroyGrant('g1')).resolves.toBe(2);
        await expect(other.frontDoor.get('h-b', at(2))).resolves.toBeUndefined();
        await expect(other.frontDoor.get('h-c', at(2))).resolves.toBeDefined();
        await other.frontDoor.destroy('h-c');
        await expect(store.frontDoor.get('h-c', at(2))).resolves.toBeUndefined();
      });

      it('keeps the grants of a key with their scope, touched and revoked once', async () => {
        await seedKey(store, 'acme');
        const { clientId } = (await store.keys.get('key_1'))!;
        const grant = (grantId: string, createdAt: string, scope: Scope) => ({
          grantId,
          keyId: 'key_1',
          scope,
          appId: 'https://agent.example/client.json',
          appName: 'Agent',
          appUri: 'https://agent.example',
          via: 'key' as const,
          createdAt,
        });
        await store.frontDoor.addGrant(grant('g1', at(1), { clientId, orgId: null, userId: 'alice' }));
        await store.frontDoor.addGrant(grant('g2', at(2), { clientId, orgId: 'o1', userId: 'alice' }));
        await store.frontDoor.touchGrant('g1', at(5));
        await expect(store.frontDoor.revokeGrant('g1', at(6))).resolves.toBe(true);
        await expect(store.frontDoor.revokeGrant('g1', at(7))).resolves.toBe(false);
        await expect(store.frontDoor.revokeGrant('missing', at(7))).resolves.toBe(false);
        const grants = await store.frontDoor.grantsOfKey('key_1');
        expect(grants.map((g) => g.grantId)).toEqual(['g2', 'g1']);
        expect(grants[1]).toEqual({
          ...grant('g1', at(1), { clientId, orgId: null, userId: 'alice' }),
          lastUsedAt: at(5),
          revokedAt: at(6),
        });
        await expect(store.frontDoor.getGrant('g2')).resolves.toMatchObject({
          scope: { clientId, orgId: 'o1', userId: 'alice' },
          revokedAt: null,
        });
        await expect(store.frontDoor.grantsOfKey('key_2')).resolves.toEqual([]);
      });
    });

    describe('identityProviders', () => {
      const idp = (keyId: string, name: string, overrides: Partial<NewIdentityProvider> = {}) => ({
        keyId,
        name,
        displayName: `${name} Inc`,
        issuer: `https://${name}.example/`,
        oauthClientId: `client-${name}`,
        clientSecret: `sealed-${name}`,
        userClaim: 'sub',
        orgClaim: null,
        ...overrides,
      });

      it("keeps one per key, replaced whole, found by key or sign-in name, and sees another process's writes", async () => {
        const { clientId } = await seedKey(store, 'acme');
        await store.keys.insert({
          id: 'key_2',
          clientId,
          type: 'platform',
          hash: 'h2',
          hashVersion: 1,
          hint: 'y',
        });
        expect(await store.identityProviders.list()).toEqual([]);
        await store.identityProviders.put(idp('key_1', 'zeta'));
        await store.identityProviders.put(idp('key_2', 'acme', { orgClaim: 'org' }));
        expect(await store.identityProviders.getByName('acme')).toEqual({
          ...idp('key_2', 'acme', { orgClaim: 'org' }),
          clientId,
          createdAt: anyString,
          updatedAt: anyString,
        });
        expect((await store.identityProviders.list()).map((i) => i.name)).toEqual(['acme', 'zeta']);

        const before = (await store.identityProviders.getByKey('key_1'))!;
        await new Promise((resolve) => setTimeout(resolve, 5));
        await store.identityProviders.put(
          idp('key_1', 'zed', { userClaim: 'email', clientSecret: 'sealed-2' }),
        );
        const after = await (await otherProcess()).identityProviders.getByKey('key_1');
        expect(after).toMatchObject({ name: 'zed', userClaim: 'email', clientSecret: 'sealed-2' });
        expect(after?.createdAt).toBe(before.createdAt);
        expect(after?.updatedAt).not.toBe(before.updatedAt);
        expect(await store.identityProviders.getByName('zeta')).toBeUndefined();

        // A name is one key's: the store refuses a second, whatever the caller checked.
        await expect(store.identityProviders.put(idp('key_2', 'zed'))).rejects.toThrow();
        expect((await store.identityProviders.getByKey('key_2'))?.name).toBe('acme');

        expect(await store.identityProviders.delete('key_1')).toBe(true);
        expect(await store.identityProviders.delete('key_1')).toBe(false);
        expect(await store.identityProviders.getByName('zed')).toBeUndefined();
        expect((await store.identityProviders.list()).map((i) => i.name)).toEqual(['acme']);
      });
    });

    describe('audit', () => {
      const entry = (id: string, seconds: number, overrides: Partial<AuditEntry> = {}): AuditEntry => ({
        id,
        at: at(seconds),
        event: 'tool_call',
        clientId: null,
        keyId: 'key_1',
        orgId: null,
        userId: 'u1',
        provider: 'github',
        tool: 'github_get_user',
        outcome: 'ok',
        latencyUs: 1_234,
        upstreamStatus: 200,
        message: null,
        ...overrides,
      });

      it("appends batches in one call, reads them newest first with the client's name, and another process sees them", async () => {
        const { clientId } = await seedKey(store, 'acme');
        const entries = [
          entry('aud_1', 1, { clientId }),
          entry('aud_2', 2, {
            clientId,
            orgId: 'o1',
            // Quoted, escaped and non-ASCII characters: the entry's context is JSON text.
            userId: 'u "2" \\ \n é 😀 \u2028',
            outcome: 'error',
            upstreamStatus: 404,
            message: 'GitHub returned HTTP 404 Not Found.',
          }),
          entry('aud_3', 2, { event: 'connected', tool: null, latencyUs: null, upstreamStatus: null }),
        ];
        await store.audit.append(entries);
        await store.audit.append([]);
        const read = await (await otherProcess()).audit.list({ limit: 10 });
        expect(read).toEqual([
          { ...entries[2], clientName: null },
          { ...entries[1], clientName: 'acme' },
          { ...entries[0], clientName: 'acme' },
        ]);
      });

      it('keeps the fields of entries that follow one another and differ in a field or two, back and forth', async () => {
        const changes: Partial<AuditEntry>[] = [
          {},
          { event: 'connected' },
          { outcome: 'refused' },
          { clientId: 'cli_other' },
          { keyId: 'key_2' },
          { orgId: 'o9' },
          { userId: 'u9' },
          { provider: 'slack' },
          { tool: 'github_list_repos' },
          {},
          { userId: 'u1', tool: null },
          { orgId: null },
          { tool: 'github_list_repos', userId: 'u9' },
          { event: 'tool_call', outcome: 'ok' },
        ];
        // Each entry is the one before it with the next change made.
        let fields: Partial<AuditEntry> = {};
        const entries = changes.map((change, i) => entry(`aud_${i}`, i, (fields = { ...fields, ...change })));
        await store.audit.append(entries);
        const read = await store.audit.list({ limit: 20 });
        expect(read.map(({ clientName: _, ...fields }) => fields).reverse()).toEqual(entries);
      });

      it('keeps NUL and lone surrogates out of what it stores, where a caller can put them', async () => {
        const odd = 'a\u0000b\ud800c\udc00d😀';
        await store.audit.append([
          entry('aud_odd', 1, {
            tool: odd,
            userId: odd,
            outcome: 'refused',
            message: `Unknown tool: ${odd}`,
          }),
        ]);
        const [read] = await store.audit.list({
          limit: 5,
          provider: 'github',
          user: 'a\ufffdb\ufffdc\ufffdd😀',
        });
        expect(read).toMatchObject({
          tool: 'a\ufffdb\ufffdc\ufffdd😀',
          message: 'Unknown tool: a\ufffdb\ufffdc\ufffdd😀',
        });
      });

      it('writes a batch larger than one INSERT holds', async () => {
        const many = Array.from({ length: 1_201 }, (_, i) => entry(`aud_${String(i).padStart(5, '0')}`, i));
        await store.audit.append(many);
        const read = await store.audit.list({ limit: 2_000 });
        expect(read).toHaveLength(1_201);
        expect(read[0]?.id).toBe('aud_01200');
      });

      it('narrows by time, client, organization, user, provider, outcome and event, and limits', async () => {
        const { clientId } = await seedKey(store, 'acme');
        const other = await store.keys.createClient('globex');
        await store.audit.append([
          entry('aud_a', 10, { clientId, orgId: 'o1', userId: 'u1' }),
          entry('aud_b', 20, { clientId, orgId: 'o2', userId: 'u2', provider: 'slack', outcome: 'error' }),
          entry('aud_c', 30, { clientId: other.id, userId: 'u1', outcome: 'refused' }),
          entry('aud_d', 40, { clientId, event: 'key_revoked', provider: null, tool: null }),
        ]);
        const ids = async (filter: Parameters<Store['audit']['list']>[0]) =>
          (await store.audit.list(filter)).map((r) => r.id);
        expect(await ids({ limit: 10, since: at(20), until: at(40) })).toEqual(['aud_c', 'aud_b']);
        expect(await ids({ limit: 10, client: 'acme' })).toEqual(['aud_d', 'aud_b', 'aud_a']);
        expect(await ids({ limit: 10, client: 'nobody' })).toEqual([]);
        expect(await ids({ limit: 10, org: 'o2' })).toEqual(['aud_b']);
        expect(await ids({ limit: 10, user: 'u1', client: 'globex' })).toEqual(['aud_c']);
        expect(await ids({ limit: 10, provider: 'slack' })).toEqual(['aud_b']);
        expect(await ids({ limit: 10, outcome: 'refused' })).toEqual(['aud_c']);
        expect(await ids({ limit: 10, event: 'tool_call' })).toEqual(['aud_c', 'aud_b', 'aud_a']);
        expect(await ids({ limit: 2 })).toEqual(['aud_d', 'aud_c']);
      });

      it('purges entries recorded before a time and says how many', async () => {
        await store.audit.append([entry('aud_1', 1), entry('aud_2', 2), entry('aud_3', 3)]);
        expect(await store.audit.purge(at(3))).toBe(2);
        expect((await store.audit.list({ limit: 10 })).map((r) => r.id)).toEqual(['aud_3']);
        expect(await store.audit.purge(at(3))).toBe(0);
      });
    });

    describe('dashboard', () => {
      const session = (expiresAt: string) => ({
        csrfToken: `csrf-${expiresAt}`,
        createdAt: at(0),
        expiresAt,
      });

      it('stores the password hash with onlyIfUnset only when there is none', async () => {
        expect(await store.dashboard.getPasswordHash()).toBeUndefined();
        expect(await store.dashboard.setPasswordHash('hash-1', { onlyIfUnset: true })).toBe(true);
        expect(await store.dashboard.setPasswordHash('hash-2', { onlyIfUnset: true })).toBe(false);
        expect(await store.dashboard.getPasswordHash()).toBe('hash-1');
        expect(await store.dashboard.setPasswordHash('hash-3', { onlyIfUnset: false })).toBe(true);
        expect(await store.dashboard.getPasswordHash()).toBe('hash-3');
      });

      it('signs every session out and clears sign-in failures when the hash is replaced', async () => {
        await store.dashboard.setPasswordHash('hash-1', { onlyIfUnset: true });
        await store.dashboard.createSession('session-1', session(at(3600)));
        await store.dashboard.createSession('session-2', session(at(7200)));
        await store.dashboard.addSignInFailure('10.0.0.1', at(1));
        // A refused onlyIfUnset call changes nothing.
        expect(await store.dashboard.setPasswordHash('hash-2', { onlyIfUnset: true })).toBe(false);
        expect(await store.dashboard.getSession('session-1', at(2))).toEqual(session(at(3600)));
        expect(await store.dashboard.listSignInFailures(at(0))).toHaveLength(1);

        expect(await store.dashboard.setPasswordHash('hash-3', { onlyIfUnset: false })).toBe(true);
        expect(await store.dashboard.getSession('session-1', at(2))).toBeUndefined();
        expect(await store.dashboard.getSession('session-2', at(2))).toBeUndefined();
        expect(await store.dashboard.listSignInFailures(at(0))).toEqual([]);
      });

      it('gives a session back until it expires or is deleted', async () => {
        await store.dashboard.createSession('session-1', session(at(60)));
        await store.dashboard.createSession('session-2', session(at(60)));
        expect(await store.dashboard.getSession('session-1', at(59))).toEqual(session(at(60)));
        expect(await store.dashboard.getSession('session-1', at(60))).toBeUndefined();
        expect(await store.dashboard.getSession('session-1', at(61))).toBeUndefined();
        expect(await store.dashboard.getSession('session-unknown', at(0))).toBeUndefined();
        await store.dashboard.deleteSession('session-1');
        expect(await store.dashboard.getSession('session-1', at(0))).toBeUndefined();
        expect(await store.dashboard.getSession('session-2', at(0))).toEqual(session(at(60)));
        await store.dashboard.deleteSession('session-unknown');
      });

      it('lists sign-in failures at or after a time, oldest first, and clears them per source', async () => {
        await store.dashboard.addSignInFailure('10.0.0.2', at(20));
        await store.dashboard.addSignInFailure('10.0.0.1', at(10));
        await store.dashboard.addSignInFailure('10.0.0.1', at(30));
        await store.dashboard.addSignInFailure('10.0.0.3', at(5));
        expect(await store.dashboard.listSignInFailures(at(10))).toEqual([
          { source: '10.0.0.1', at: at(10) },
          { source: '10.0.0.2', at: at(20) },
          { source: '10.0.0.1', at: at(30) },
        ]);
        await store.dashboard.clearSignInFailures('10.0.0.1');
        expect(await store.dashboard.listSignInFailures(at(0))).toEqual([
          { source: '10.0.0.3', at: at(5) },
          { source: '10.0.0.2', at: at(20) },
        ]);
      });

      it('purges expired sessions and old sign-in failures, keeping the rest', async () => {
        await store.dashboard.createSession('expired', session(at(10)));
        await store.dashboard.createSession('live', session(at(100)));
        await store.dashboard.addSignInFailure('a', at(5));
        await store.dashboard.addSignInFailure('b', at(15));
        await store.dashboard.purge(at(50), at(15));
        // Gone for good: not even a time before its expiry finds the purged session.
        expect(await store.dashboard.getSession('expired', at(0))).toBeUndefined();
        expect(await store.dashboard.getSession('live', at(0))).toEqual(session(at(100)));
        expect(await store.dashboard.listSignInFailures(at(0))).toEqual([{ source: 'b', at: at(15) }]);
      });
    });

    describe('resealAll', () => {
      it('re-seals hash secrets, connection credentials and app secrets in one go, and counts them', async () => {
        expect(await store.resealAll((item) => `re(${item.sealed})`)).toBe(0);

        const a = await scopeOf('acme', 'org-1', 'u1');
        const b = await scopeOf('beta');
        await store.keys.insertHashSecret({ version: 1, sealed: 'k1' });
        await store.keys.insertHashSecret({ version: 2, sealed: 'k2' });
        await store.connections.put(a, connection('github', { id: 'con_a', credentials: 'ca' }));
        await store.connections.put(b, connection('slack', { id: 'con_b', credentials: 'cb' }));
        await store.oauthApps.put(oauthApp('app_1', 'github', null));
        await store.oauthApps.put(oauthApp('app_2', 'github', null));
        await seedKey(store, 'gamma');
        await store.identityProviders.put({
          keyId: 'key_1',
          name: 'gamma',
          displayName: 'Gamma',
          issuer: 'https://gamma.example',
          oauthClientId: 'gamma-client',
          clientSecret: 'si',
          userClaim: 'sub',
          orgClaim: null,
        });
        // Read once before, so that a cached answer would show.
        expect((await store.connections.get(a, 'github'))?.credentials).toBe('ca');

        const seen: SealedItem[] = [];
        const count = await store.resealAll((item) => {
          seen.push(item);
          return `re(${item.sealed})`;
        });
        expect(count).toBe(7);
        const order = (item: SealedItem) => `${item.kind}|${JSON.stringify(item)}`;
        expect(seen.sort((x, y) => order(x).localeCompare(order(y)))).toEqual(
          [
            { kind: 'hash_secret', version: 1, sealed: 'k1' },
            { kind: 'hash_secret', version: 2, sealed: 'k2' },
            {
              kind: 'connection',
              scopeId: await store.scopes.ensure(a),
              provider: 'github',
              connectionId: 'con_a',
              sealed: 'ca',
            },
            {
              kind: 'connection',
              scopeId: await store.scopes.ensure(b),
              provider: 'slack',
              connectionId: 'con_b',
              sealed: 'cb',
            },
            { kind: 'oauth_app', appId: 'app_1', provider: 'github', sealed: 'sealed-secret-of-app_1' },
            { kind: 'oauth_app', appId: 'app_2', provider: 'github', sealed: 'sealed-secret-of-app_2' },
            { kind: 'identity_provider', keyId: 'key_1', sealed: 'si' },
          ].sort((x, y) => order(x as SealedItem).localeCompare(order(y as SealedItem))),
        );

        const secrets = (await store.keys.listHashSecrets()).sort((x, y) => x.version - y.version);
        expect(secrets).toEqual([
          { version: 1, sealed: 're(k1)' },
          { version: 2, sealed: 're(k2)' },
        ]);
        expect((await store.connections.get(a, 'github'))?.credentials).toBe('re(ca)');
        expect((await store.connections.list(b))[0]?.credentials).toBe('re(cb)');
        expect((await store.oauthApps.get('app_1'))?.clientSecret).toBe('re(sealed-secret-of-app_1)');
        expect((await store.oauthApps.current('github', null))?.clientSecret).toBe(
          're(sealed-secret-of-app_2)',
        );
        expect((await store.identityProviders.getByKey('key_1'))?.clientSecret).toBe('re(si)');
        const other = await otherProcess();
        expect((await other.connections.get(b, 'slack'))?.credentials).toBe('re(cb)');
      });

      it('re-seals nothing when one item fails, and rejects', async () => {
        const scope = await scopeOf('acme');
        await store.keys.insertHashSecret({ version: 1, sealed: 'k1' });
        await store.connections.put(scope, connection('github', { credentials: 'ca' }));
        await store.oauthApps.put(oauthApp('app_1', 'github', null));
        await expect(
          store.resealAll((item) => {
            if (item.kind === 'connection') throw new Error('cannot open');
            return `re(${item.sealed})`;
          }),
        ).rejects.toThrow('cannot open');
        expect(await store.keys.listHashSecrets()).toEqual([{ version: 1, sealed: 'k1' }]);
        expect((await store.connections.get(scope, 'github'))?.credentials).toBe('ca');
        expect((await store.oauthApps.get('app_1'))?.clientSecret).toBe('sealed-secret-of-app_1');
      });
    });

    describe('another process', () => {
      it('sees the next write from this or another process on the per-call reads', async () => {
        const other = await otherProcess();
        const client = await seedKey(store, 'c');
        const scope: Scope = { clientId: client.clientId, orgId: 'o', userId: 'u' };
        const github = (id: string, credentials: string) =>
          connection('github', { id, fields: { site: 'a' }, credentials });
        await store.connections.put(scope, github('con_1', 'sealed-1'));

        const key = await store.keys.findByHash(1, 'h1');
        const record = await store.connections.get(scope, 'github');
        expect(await store.keys.findByHash(1, 'h1')).toEqual(key);
        expect(await store.connections.get(scope, 'github')).toEqual(record);

        // Another connection (the CLI) revokes the key and replaces the connection.
        expect(await other.keys.revoke('key_1', '2026-11-22T00:00:00.000Z')).toBe(true);
        await other.connections.put(scope, github('con_2', 'sealed-2'));
        expect((await store.keys.findByHash(1, 'h1'))?.revokedAt).toBe('2026-11-22T00:00:00.000Z');
        expect((await store.connections.get(scope, 'github'))?.credentials).toBe('sealed-2');

        // Another process refreshes the token, then disconnects.
        expect(
          await other.connections.swapCredentials(scope, 'github', 'sealed-2', {
            credentials: 'sealed-3',
            expiresAt: at(60),
          }),
        ).toBe(true);
        expect((await store.connections.get(scope, 'github'))?.credentials).toBe('sealed-3');
        expect(await other.connections.delete(scope, 'github')).toBe(true);
        expect(await store.connections.get(scope, 'github')).toBeUndefined();

        // This connection's own writes.
        await store.connections.put(scope, github('con_3', 'sealed-4'));
        expect((await other.connections.get(scope, 'github'))?.credentials).toBe('sealed-4');
        expect(await store.connections.delete(scope, 'github')).toBe(true);
        expect(await store.connections.get(scope, 'github')).toBeUndefined();
        expect(await other.connections.get(scope, 'github')).toBeUndefined();
      });

      it("sees another process's writes on every port", async () => {
        const other = await otherProcess();
        // Read first, so that an answer kept from before the writes would show.
        expect(await store.meta.get('k')).toBeUndefined();
        expect(await store.keys.findClient('cli')).toBeUndefined();
        expect(await store.dashboard.getPasswordHash()).toBeUndefined();
        expect(await store.oauthApps.current('github', null)).toBeUndefined();

        expect(await other.meta.setOnce('k', 'v')).toBe(true);
        const client = await other.keys.createClient('cli');
        const scope: Scope = { clientId: client.id, orgId: 'org-1', userId: 'u1' };
        const report = await other.reports.insert(scope, {
          summary: 's',
          details: null,
          provider: null,
          tool: null,
        });
        await other.links.create('hash-1', link(scope, at(600)));
        await other.oauthApps.put(oauthApp('app_1', 'github', null));
        await other.dashboard.setPasswordHash('hash-1', { onlyIfUnset: true });
        await other.connections.addEvent(scope, 'github', 'connected');

        expect(await store.meta.get('k')).toBe('v');
        expect(await store.keys.findClient('cli')).toEqual(client);
        expect(await store.scopes.ensure(scope)).toBe(await other.scopes.ensure(scope));
        expect(await store.reports.listForScope(scope)).toEqual([report]);
        expect(await store.links.consume('hash-1', at(0))).toEqual(link(scope, at(600)));
        expect(await other.links.peek('hash-1', at(0))).toBeUndefined();
        expect((await store.oauthApps.current('github', null))?.id).toBe('app_1');
        expect(await store.dashboard.getPasswordHash()).toBe('hash-1');
        expect((await store.connections.listEvents(1))[0]?.event).toBe('connected');
        expect(await store.scopes.listOrganizations()).toHaveLength(1);

        // The CLI resets the admin password: this process's sessions end.
        await store.dashboard.createSession('session-1', {
          csrfToken: 't',
          createdAt: at(0),
          expiresAt: at(600),
        });
        await other.dashboard.setPasswordHash('hash-2', { onlyIfUnset: false });
        expect(await store.dashboard.getSession('session-1', at(1))).toBeUndefined();
      });
    });
  });
}
