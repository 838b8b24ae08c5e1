import type { Keyring } from '../keyring.js';

const PURPOSE = 'toolgate/credentials';

/**
 * The credential vault: a connection's secrets are sealed with AES-256-GCM under a key derived
 * (HKDF) from the master key and the scope, and the additional data binds the ciphertext to its
 * scope, provider and connection id. A row copied into another scope, or onto another provider's
 * or another connection's row, fails to open (SPEC.md, Authentication 8).
 */
export class Vault {
  constructor(private readonly keyring: Keyring) {}

  seal(
    scopeId: string,
    provider: string,
    connectionId: string,
    secrets: Readonly<Record<string, string>>,
  ): string {
    return this.keyring.seal(
      Buffer.from(JSON.stringify(secrets)),
      PURPOSE,
      scopeId,
      aad(scopeId, provider, connectionId),
    );
  }

  open(scopeId: string, provider: string, connectionId: string, envelope: string): Record<string, string> {
    const plain = this.keyring.open(envelope, ...credentialBinding(scopeId, provider, connectionId));
    return JSON.parse(plain.toString('utf8')) as Record<string, string>;
  }
}

/** Where a connection's envelope is bound: its purpose, context and additional data. */
export function credentialBinding(
  scopeId: string,
  provider: string,
  connectionId: string,
): [purpose: string, context: string, aad: string] {
  return [PURPOSE, scopeId, aad(scopeId, provider, connectionId)];
}

function aad(scopeId: string, provider: string, connectionId: string): string {
  return JSON.stringify(['connection', scopeId, provider, connectionId]);
}
