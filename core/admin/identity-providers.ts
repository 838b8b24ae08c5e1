/**
 * Identity providers of clients' keys (issue 14: sign-in through the client's own identity
 * provider), as the operator sets them through the dashboard, the admin API and the CLI. Everything
 * is checked before anything is stored; the client secret is sealed and never shown again.
 */
import { idpSecretBinding } from '../auth/identity-providers.js';
import type { Config } from '../config.js';
import { GatewayError } from '../errors.js';
import type { Keyring } from '../keyring.js';
import type { IdentityProviderRecord, Store } from '../store/types.js';
import { CONTROL, InputError, line } from './input.js';

/** What an operator submits; `client_secret` may be empty to keep the stored one (same issuer and client id). */
export interface IdentityProviderInput {
  key?: unknown;
  name?: unknown;
  display_name?: unknown;
  issuer?: unknown;
  client_id?: unknown;
  client_secret?: unknown;
  user_claim?: unknown;
  org_claim?: unknown;
}

/** An identity provider as shown: never its secret. */
export type IdentityProviderView = Omit<IdentityProviderRecord, 'clientSecret'> & { clientName: string };

/** What people type on the sign-in page: short, lowercase, the same in every browser. */
const SIGN_IN_NAME = /^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/;
const CLAIM = /^[^\s]{1,200}$/;

export interface IdentityProviderDeps {
  config: Config;
  store: Store;
  keyring: Keyring;
}

export class IdentityProviderOperations {
  constructor(private readonly deps: IdentityProviderDeps) {}

  async list(): Promise<IdentityProviderView[]> {
    const names = new Map((await this.deps.store.keys.listClients()).map((c) => [c.id, c.name]));
    return (await this.deps.store.identityProviders.list()).map((idp) => view(idp, names));
  }

  /** The identity provider of a key, if it has one. */
  async ofKey(keyId: string): Promise<IdentityProviderView | undefined> {
    const idp = await this.deps.store.identityProviders.getByKey(keyId);
    if (!idp) return undefined;
    const names = new Map((await this.deps.store.keys.listClients()).map((c) => [c.id, c.name]));
    return view(idp, names);
  }

  /** Sets a key's identity provider (replacing the one it had), every field checked first. */
  async set(input: IdentityProviderInput): Promise<IdentityProviderView> {
    const keyId = line(input.key, 'key', 'the key id', 100);
    const key = await this.deps.store.keys.get(keyId);
    if (!key) throw new InputError('key', `No key ${keyId}: see the list of keys.`);
    if (key.revokedAt !== null) throw new InputError('key', `Key ${keyId} is revoked.`);
    if (key.type === 'solo') {
      throw new InputError(
        'key',
        `Key ${keyId} is a solo key, which acts for one user: people signing in through an identity provider each need their own user_id, so give it a client or platform key.`,
      );
    }
    const name = line(input.name, 'name', 'the sign-in name', 40).toLowerCase();
    if (!SIGN_IN_NAME.test(name)) {
      throw new InputError(
        'name',
        'The sign-in name is what people type on the sign-in page: lowercase letters, digits and -, such as acme.',
      );
    }
    const taken = await this.deps.store.identityProviders.getByName(name);
    if (taken && taken.keyId !== keyId)
      throw new InputError(
        'name',
        `The sign-in name “${name}” is taken (key ${taken.keyId}): choose another.`,
      );
    const displayName = line(input.display_name, 'display_name', 'the display name', 100, true) || name;
    const issuer = this.issuer(input.issuer);
    const oauthClientId = line(input.client_id, 'client_id', 'the client id', 200);
    const userClaim = line(input.user_claim, 'user_claim', 'the user_id claim', 200, true) || 'sub';
    const orgClaim = line(input.org_claim, 'org_claim', 'the org_id claim', 200, true) || null;
    for (const [field, claim] of [
      ['user_claim', userClaim],
      ['org_claim', orgClaim],
    ] as const) {
      if (claim !== null && !CLAIM.test(claim))
        throw new InputError(field, 'A claim name has no spaces, such as sub, email or org_id.');
    }
    if (orgClaim !== null && key.type !== 'platform') {
      throw new InputError(
        'org_claim',
        `An org_id claim needs a platform key; key ${keyId} is a client key, whose users have no organization. Leave the org_id claim empty or use a platform key.`,
      );
    }
    const current = await this.deps.store.identityProviders.getByKey(keyId);
    const secret = typeof input.client_secret === 'string' ? input.client_secret.trim() : '';
    let sealed: string;
    if (secret === '') {
      if (!current || current.issuer !== issuer || current.oauthClientId !== oauthClientId) {
        throw new InputError(
          'client_secret',
          'Enter the client secret the identity provider issued with this client id.',
        );
      }
      sealed = current.clientSecret;
    } else {
      if (secret.length > 1_000 || CONTROL.test(secret))
        throw new InputError(
          'client_secret',
          'The client secret must be one line of at most 1000 characters.',
        );
      sealed = this.deps.keyring.seal(Buffer.from(secret), ...idpSecretBinding(keyId));
    }
    await this.deps.store.identityProviders.put({
      keyId,
      name,
      displayName,
      issuer,
      oauthClientId,
      clientSecret: sealed,
      userClaim,
      orgClaim,
    });
    return (await this.ofKey(keyId))!;
  }

  /** Removes the identity provider with this sign-in name; sign-ins under way through it end. */
  async remove(name: unknown): Promise<IdentityProviderView> {
    const text = line(name, 'name', 'the sign-in name', 40).toLowerCase();
    const idp = await this.deps.store.identityProviders.getByName(text);
    if (!idp)
      throw new GatewayError('TG_ERR_RECORD_NOT_FOUND', `No identity provider signs in as “${text}”.`);
    const shown = (await this.ofKey(idp.keyId))!;
    await this.deps.store.identityProviders.delete(idp.keyId);
    return shown;
  }

  /** The redirect URI to register at the identity provider. */
  get redirectUri(): string {
    return `${this.deps.config.baseUrl.replace(/\/+$/, '')}/signin/idp/callback`;
  }

  private issuer(value: unknown): string {
    const text = line(value, 'issuer', 'the issuer URL', 2_000);
    if (!URL.canParse(text))
      throw new InputError('issuer', 'The issuer is a URL, such as https://login.acme.com.');
    const url = new URL(text);
    const http = url.protocol === 'http:' && this.deps.config.allowPrivateNetwork;
    if (url.protocol !== 'https:' && !http)
      throw new InputError('issuer', 'The issuer URL must be https://, as OpenID Connect requires.');
    if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
      throw new InputError('issuer', 'The issuer URL has no query, fragment or credentials.');
    // Kept as given: discovery compares it with the issuer the identity provider names, exactly.
    return text;
  }
}

function view(idp: IdentityProviderRecord, names: ReadonlyMap<string, string>): IdentityProviderView {
  return {
    keyId: idp.keyId,
    clientId: idp.clientId,
    clientName: names.get(idp.clientId) ?? idp.clientId,
    name: idp.name,
    displayName: idp.displayName,
    issuer: idp.issuer,
    oauthClientId: idp.oauthClientId,
    userClaim: idp.userClaim,
    orgClaim: idp.orgClaim,
    createdAt: idp.createdAt,
    updatedAt: idp.updatedAt,
  };
}
