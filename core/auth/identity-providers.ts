import { createHmac, randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import type { Keyring } from '../keyring.js';
import type { IdentityProviderRecord, Store } from '../store/types.js';
import type { OutboundClient } from '../upstream/outbound.js';
import { recordKey } from './front-door/record-key.js';

const SECRET_PURPOSE = 'toolgate/idp-client-secret';

/** Where an identity provider's client secret is sealed: bound to its key. */
export function idpSecretBinding(keyId: string): [purpose: string, context: string, aad: string] {
  return [SECRET_PURPOSE, keyId, JSON.stringify(['identity-provider', keyId])];
}

/** How long a person has between leaving for the identity provider and coming back. */
export const IDP_SIGN_IN_TTL_S = 600;
/** The front-door record model of a sign-in under way at an identity provider. */
const SIGN_IN_MODEL = 'IdpSignIn';
/** A discovered issuer is used again for this long (its keys, its endpoints). */
const DISCOVERY_TTL_MS = 10 * 60_000;

/** A sign-in that cannot go on, in words for the person in front of the page. */
export class IdpSignInError extends Error {
  override readonly name = 'IdpSignInError';
}

/** A sign-in under way: which front-door interaction it finishes, through which key's identity provider. */
export interface PendingIdpSignIn {
  state: string;
  uid: string;
  keyId: string;
  /** The identity provider's settings it started with: changed since, the sign-in starts again. */
  idpUpdatedAt: string;
}

export interface IdentityProvidersDeps {
  store: Store;
  keyring: Keyring;
  outbound: OutboundClient;
  /** `{base}/signin/idp/callback`: the one redirect URI every identity provider is registered with. */
  callbackUrl: string;
  /** http:// issuers are accepted only where private networks are (tests). */
  allowInsecureIssuers: boolean;
}

/**
 * Sign-in through a client's own OpenID Connect identity provider (issue 14, who signs in, 2):
 * openid-client (a certified relying party) does discovery, the authorization URL, the code
 * exchange and the ID token checks (signature, issuer, audience, nonce); every request it makes goes
 * through the SSRF-safe outbound client. A sign-in under way is a front-door record keyed by the
 * hash of its `state`, single-use and expiring in ten minutes; the PKCE verifier and the nonce are
 * derived from the state with a key of the master key, so the database holds nothing that completes
 * a sign-in.
 */
export class IdentityProviders {
  private readonly discovered = new Map<string, { at: number; config: Promise<oidc.Configuration> }>();

  constructor(private readonly deps: IdentityProvidersDeps) {}

  get callbackUrl(): string {
    return this.deps.callbackUrl;
  }

  /**
   * Starts a sign-in for the front-door interaction `uid`: discovers the issuer, records the
   * sign-in and returns the identity provider's authorization URL (PKCE S256, state, nonce).
   * Nothing is recorded when the issuer cannot be discovered.
   */
  async start(idp: IdentityProviderRecord, uid: string): Promise<URL> {
    const config = await this.configuration(idp);
    const state = randomBytes(32).toString('base64url');
    const { verifier, nonce } = this.secretsOf(state);
    const payload = { uid, keyId: idp.keyId, idpUpdatedAt: idp.updatedAt };
    await this.deps.store.frontDoor.put(recordKey(SIGN_IN_MODEL, state), {
      model: SIGN_IN_MODEL,
      payload: JSON.stringify(payload),
      grantId: null,
      uidHash: null,
      expiresAt: new Date(Date.now() + IDP_SIGN_IN_TTL_S * 1_000).toISOString(),
    });
    return oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.deps.callbackUrl,
      response_type: 'code',
      scope: 'openid',
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
  }

  /** The sign-in a callback's `state` names, unless unknown, expired or used already. */
  async pending(state: string): Promise<PendingIdpSignIn | undefined> {
    if (state === '') return undefined;
    const found = await this.deps.store.frontDoor.get(
      recordKey(SIGN_IN_MODEL, state),
      new Date().toISOString(),
    );
    if (!found || found.model !== SIGN_IN_MODEL || found.consumedAt !== null) return undefined;
    return { state, ...(JSON.parse(found.payload) as Omit<PendingIdpSignIn, 'state'>) };
  }

  /** Uses the sign-in up: true for exactly one caller, however many callbacks race. */
  async consume(pending: PendingIdpSignIn): Promise<boolean> {
    const key = recordKey(SIGN_IN_MODEL, pending.state);
    const won = await this.deps.store.frontDoor.consume(key, new Date().toISOString());
    if (won) await this.deps.store.frontDoor.destroy(key);
    return won;
  }

  /**
   * Exchanges the code of the identity provider's answer (`query`, as it reached the callback) and
   * checks its ID token; returns the claims. Throws {@link IdpSignInError} with what went wrong.
   */
  async finish(
    idp: IdentityProviderRecord,
    pending: PendingIdpSignIn,
    query: URLSearchParams,
  ): Promise<Record<string, unknown>> {
    const config = await this.configuration(idp);
    const { verifier, nonce } = this.secretsOf(pending.state);
    const answer = new URL(this.deps.callbackUrl);
    answer.search = query.toString();
    try {
      const tokens = await oidc.authorizationCodeGrant(config, answer, {
        pkceCodeVerifier: verifier,
        expectedState: pending.state,
        expectedNonce: nonce,
        idTokenExpected: true,
      });
      return { ...tokens.claims() };
    } catch (error) {
      throw signInError(idp, error);
    }
  }

  /** The identity provider's claim mapped to `what`, as a string; throws when it gave none. */
  static claim(
    idp: IdentityProviderRecord,
    claims: Record<string, unknown>,
    name: string,
    what: string,
  ): string {
    const value = claims[name];
    if ((typeof value === 'string' && value !== '') || typeof value === 'number') return String(value);
    throw new IdpSignInError(
      `${idp.displayName} signed you in but gave no “${name}” claim, which this gateway takes as your ${what}. Ask the administrator of ${idp.displayName} to release it to this application, or the operator of this gateway to map another claim.`,
    );
  }

  private secretsOf(state: string): { verifier: string; nonce: string } {
    const key = this.deps.keyring.derive('toolgate/front-door/idp-sign-in');
    const derive = (what: string) =>
      createHmac('sha256', key).update(`${what}\u0000${state}`).digest('base64url');
    return { verifier: derive('pkce-verifier'), nonce: derive('nonce') };
  }

  /** The discovered issuer with the client's credentials, cached per key and settings for a while. */
  private configuration(idp: IdentityProviderRecord): Promise<oidc.Configuration> {
    const id = `${idp.keyId}\u0000${idp.updatedAt}`;
    const cached = this.discovered.get(id);
    if (cached && Date.now() - cached.at < DISCOVERY_TTL_MS) return cached.config;
    const secret = this.deps.keyring.open(idp.clientSecret, ...idpSecretBinding(idp.keyId)).toString('utf8');
    const insecure = this.deps.allowInsecureIssuers && idp.issuer.startsWith('http://');
    const config = oidc
      .discovery(new URL(idp.issuer), idp.oauthClientId, secret, oidc.ClientSecretBasic(secret), {
        [oidc.customFetch]: outboundFetch(this.deps.outbound),
        ...(insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
      })
      .catch((error: unknown) => {
        this.discovered.delete(id);
        throw new IdpSignInError(
          `${idp.displayName} (${idp.issuer}) could not be reached to sign you in: ${reason(error)}. Try again in a moment, or sign in with an API key.`,
        );
      });
    if (this.discovered.size > 1_000) this.discovered.clear();
    this.discovered.set(id, { at: Date.now(), config });
    return config;
  }
}

/** openid-client's fetch, on the outbound client: the private-network guard, the deadline, the size cap. */
function outboundFetch(outbound: OutboundClient): oidc.CustomFetch {
  return async (url, options) => {
    const body = options.body;
    const response = await outbound.send({
      method: options.method,
      url,
      headers: options.headers,
      ...(body === undefined || body === null ? {} : { body: String(body as string | URLSearchParams) }),
      ...(options.signal ? { signal: options.signal } : {}),
      timeoutMs: 10_000,
    });
    if (response.truncated) throw new Error(`the answer of ${new URL(url).host} is too large`);
    const headers = new Headers();
    for (const [name, value] of Object.entries(response.headers))
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
    return new Response(response.status === 204 ? null : response.body, {
      status: response.status,
      headers,
    });
  };
}

function reason(error: unknown): string {
  return error instanceof Error ? error.message.replace(/\.$/, '') : 'unknown error';
}

function signInError(idp: IdentityProviderRecord, error: unknown): IdpSignInError {
  if (error instanceof oidc.AuthorizationResponseError) {
    return new IdpSignInError(
      `${idp.displayName} did not sign you in: ${error.error_description ?? error.error}.`,
    );
  }
  return new IdpSignInError(
    `${idp.displayName}'s answer could not be verified (${reason(error)}): nothing was signed in. Start again from your MCP client.`,
  );
}
