import { hkdfSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { Keyring } from '../../core/keyring.js';

describe('the keyring', () => {
  it('derives each purpose key as HKDF-SHA256 of the master key, so what one process sealed another opens', () => {
    const master = randomBytes(32);
    const keyring = new Keyring(master);
    const expected = Buffer.from(hkdfSync('sha256', master, Buffer.from('scp_a'), Buffer.from('vault'), 32));
    // Derived, then again from the keyring's cache: the same 32 bytes, every byte value kept.
    expect(keyring.derive('vault', 'scp_a').equals(expected)).toBe(true);
    expect(keyring.derive('vault', 'scp_a').equals(expected)).toBe(true);
    const sealed = keyring.seal(Buffer.from('sk_test_123'), 'vault', 'scp_a', 'aad');
    expect(new Keyring(Buffer.from(master)).open(sealed, 'vault', 'scp_a', 'aad').toString()).toBe(
      'sk_test_123',
    );
  });

  it('gives each caller a copy: a change to it changes neither later keys nor what opens', () => {
    const keyring = new Keyring(randomBytes(32));
    const sealed = keyring.seal(Buffer.from('secret'), 'vault', 'scp_a', 'aad');
    const first = keyring.derive('vault', 'scp_a');
    const kept = Buffer.from(first);
    first.fill(0);
    expect(keyring.derive('vault', 'scp_a').equals(kept)).toBe(true);
    expect(keyring.open(sealed, 'vault', 'scp_a', 'aad').toString()).toBe('secret');
  });
});
