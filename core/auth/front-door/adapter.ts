import { errors, type Adapter, type AdapterPayload } from 'oidc-provider';
import type { FrontDoorStore } from '../../store/types.js';
import { recordKey } from './record-key.js';

/** How long a record oidc-provider gives no lifetime lives (registered clients): renewed on use. */
export const UNUSED_CLIENT_TTL_S = 30 * 24 * 3600;
// A registered client's lifetime is renewed on use once less than this much of it is left.
const CLIENT_RENEW_BELOW_S = UNUSED_CLIENT_TTL_S - 24 * 3600;

export interface AdapterHooks {
  /** A client id this adapter does not store (a Client ID Metadata Document URL): its metadata. */
  externalClient(id: string): Promise<AdapterPayload | undefined>;
  /** A grant whose records were all deleted: revoked, or a refresh token reused. */
  grantRevoked(grantId: string): Promise<void>;
}

/**
 * oidc-provider's storage on the store's front-door port, one instance per model. Ids (tokens,
 * codes, session ids) are stored only as hashes and `jti` is left out of the stored payload, so the
 * database never holds a usable token. Consuming is one conditional write: of two concurrent uses of
 * a refresh token or code exactly one wins, and the loser is treated as reuse (the grant revoked).
 */
export class StoreAdapter implements Adapter {
  constructor(
    private readonly model: string,
    private readonly store: FrontDoorStore,
    private readonly hooks: AdapterHooks,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    const rest = { ...payload };
    delete rest.jti;
    const ttl = expiresIn ?? UNUSED_CLIENT_TTL_S;
    await this.store.put(recordKey(this.model, id), {
      model: this.model,
      payload: JSON.stringify(rest),
      // A grant's own record is deleted with its tokens and codes.
      grantId: this.model === 'Grant' ? id : typeof payload.grantId === 'string' ? payload.grantId : null,
      uidHash: typeof payload.uid === 'string' ? recordKey(this.model, payload.uid) : null,
      expiresAt: new Date(Date.now() + ttl * 1_000).toISOString(),
    });
  }

  async find(id: string): Promise<AdapterPayload | undefined> {
    if (this.model === 'Client' && /^https?:\/\//.test(id)) return this.hooks.externalClient(id);
    const found = await this.store.get(recordKey(this.model, id), new Date().toISOString());
    if (!found) return undefined;
    const payload = JSON.parse(found.payload) as AdapterPayload;
    if (this.model === 'Client') {
      // A registered client lives while it is used (RFC 7591 registrations expire when unused).
      const left = (Date.parse(found.expiresAt) - Date.now()) / 1_000;
      if (left < CLIENT_RENEW_BELOW_S) await this.upsert(id, payload);
      return payload;
    }
    return {
      ...payload,
      jti: id,
      ...(found.consumedAt ? { consumed: Math.floor(Date.parse(found.consumedAt) / 1_000) } : {}),
    };
  }

  async findByUid(uid: string): Promise<AdapterPayload | undefined> {
    const found = await this.store.getByUid(this.model, recordKey(this.model, uid), new Date().toISOString());
    return found ? { ...(JSON.parse(found.payload) as AdapterPayload), uid } : undefined;
  }

  findByUserCode(): Promise<AdapterPayload | undefined> {
    // The device flow is not enabled: nothing is ever stored by user code.
    return Promise.resolve(undefined);
  }

  async consume(id: string): Promise<void> {
    const key = recordKey(this.model, id);
    if (await this.store.consume(key, new Date().toISOString())) return;
    // Consumed a moment ago by a concurrent request: the same reuse oidc-provider detects when it
    // reads the mark, answered the same way.
    const found = await this.store.get(key, new Date().toISOString());
    if (found?.grantId) await this.revokeByGrantId(found.grantId);
    throw new errors.InvalidGrant(`${this.model === 'RefreshToken' ? 'refresh token' : 'code'} already used`);
  }

  async destroy(id: string): Promise<void> {
    await this.store.destroy(recordKey(this.model, id));
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    // Every model shares one table: the first call deletes all of the grant's records.
    if ((await this.store.destroyGrant(grantId)) > 0) await this.hooks.grantRevoked(grantId);
  }
}
