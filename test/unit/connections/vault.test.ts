import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Vault } from '../../../core/connections/vault.js';
import { Keyring } from '../../../core/keyring.js';
import type { Scope } from '../../../core/domain.js';
import { SqliteStore } from '../../../core/store/sqlite/index.js';

let dir: string;
let store: SqliteStore;
const vault = new Vault(new Keyring(randomBytes(32)));

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'toolgate-vault-'));
  store = new SqliteStore(join(dir, 'toolgate.db'));
  await store.migrate();
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the credential vault', () => {
  it('opens what it sealed for the same scope, provider and connection', () => {
    const sealed = vault.seal('scp_a', 'stripe', 'con_1', { api_key: 'sk_test_123' });
    expect(sealed).not.toContain('sk_test_123');
    expect(vault.open('scp_a', 'stripe', 'con_1', sealed)).toEqual({ api_key: 'sk_test_123' });
  });

  it('refuses a ciphertext moved to another scope, provider or connection, or tampered with', () => {
    const sealed = vault.seal('scp_a', 'stripe', 'con_1', { api_key: 'sk_test_123' });
    expect(() => vault.open('scp_b', 'stripe', 'con_1', sealed)).toThrow();
    expect(() => vault.open('scp_a', 'sendgrid', 'con_1', sealed)).toThrow();
    expect(() => vault.open('scp_a', 'stripe', 'con_2', sealed)).toThrow();
    const parts = sealed.split('.');
    parts[4] = Buffer.from(
      'x' + Buffer.from(parts[4]!, 'base64url').toString('latin1').slice(1),
      'latin1',
    ).toString('base64url');
    expect(() => vault.open('scp_a', 'stripe', 'con_1', parts.join('.'))).toThrow();
    expect(() => new Vault(new Keyring(randomBytes(32))).open('scp_a', 'stripe', 'con_1', sealed)).toThrow(
      /another master key/,
    );
  });

  it('refuses a stored row copied into another scope in the database', async () => {
    const client = await store.keys.createClient('acme');
    const alice: Scope = { clientId: client.id, orgId: null, userId: 'alice' };
    const mallory: Scope = { clientId: client.id, orgId: null, userId: 'mallory' };
    const aliceId = await store.scopes.ensure(alice);
    await store.connections.put(alice, {
      id: 'con_alice',
      provider: 'stripe',
      state: 'connected',
      fields: {},
      account: null,
      credentials: vault.seal(aliceId, 'stripe', 'con_alice', { api_key: 'sk_live_alice' }),
      oauthApp: null,
      expiresAt: null,
    });
    // An attacker with write access to the database copies Alice's row into Mallory's scope.
    const copied = (await store.connections.get(alice, 'stripe'))!;
    await store.connections.put(mallory, { ...copied, id: 'con_copy' });
    const stolen = (await store.connections.get(mallory, 'stripe'))!;
    const malloryId = await store.scopes.ensure(mallory);
    expect(() => vault.open(malloryId, 'stripe', stolen.id, stolen.credentials)).toThrow();
  });
});
