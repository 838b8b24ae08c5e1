import { andThen } from '../awaitable.js';
import { scopeKey, type ConnectionState, type Scope } from '../domain.js';
import type {
  ApiKeyRecord,
  ConnectionEvent,
  ConnectionRecord,
  ConnectionStore,
  KeyStore,
  NewConnection,
  PolicyStore,
  SealedItem,
  Store,
  ToolPolicyRecord,
} from '../store/types.js';
import { PER_CALL_ENTRIES } from '../lru.js';
import type { Bus } from './bus.js';
import { Evictions, ReadCache } from './read-cache.js';

/** Bounds how long a write made outside the gateway (by hand in the database) goes unseen. */
const TTL_MS = 5_000;

const keyTag = (id: string): string => `key:${id}`;
const scopeTag = (scope: Scope): string => `scope:${scopeKey(scope)}`;
// Per client: a client's policy narrows every organization's, so one write evicts them all.
const policyTag = (clientId: string): string => `policy:${clientId}`;

/** Cached values are shared by every reader: frozen, so a reader cannot change another's. */
function frozen<T extends object>(record: T): T {
  for (const value of Object.values(record))
    if (typeof value === 'object' && value !== null) Object.freeze(value);
  return Object.freeze(record);
}

/**
 * The store of a deployment of several processes (PostgreSQL with Redis), with the reads of every
 * call answered from memory: the API key by its hash, a scope's connections. Each write through
 * this store drops what it changed from this process's cache before it returns, and publishes
 * `store.changed` so every other process drops it too; the CLI writes through it as well. What a
 * process misses while its bus is down is never served (see ReadCache), and `connections.get` with
 * `fresh` reads the database itself. Without it each call costs two database round trips.
 */
export class CachedStore implements Store {
  private readonly keyRecords: ReadCache<ApiKeyRecord>;
  private readonly connectionRecords: ReadCache<ConnectionRecord>;
  private readonly connectionLists: ReadCache<ConnectionRecord[]>;
  /** Absence cached too: most clients have no policy, and every request asks for one. */
  private readonly policyRecords: ReadCache<{ record: ToolPolicyRecord | undefined }>;
  private readonly evictions: Evictions;

  readonly keys: KeyStore;
  readonly connections: ConnectionStore;
  readonly policies: PolicyStore;

  constructor(
    private readonly inner: Store,
    bus: Bus,
  ) {
    this.keyRecords = new ReadCache(bus, PER_CALL_ENTRIES, TTL_MS);
    this.connectionRecords = new ReadCache(bus, PER_CALL_ENTRIES, TTL_MS);
    this.connectionLists = new ReadCache(bus, PER_CALL_ENTRIES, TTL_MS);
    this.policyRecords = new ReadCache(bus, PER_CALL_ENTRIES, TTL_MS);
    this.evictions = new Evictions(bus, (tag) => this.evict(tag));
    this.keys = this.cachedKeys(inner.keys);
    this.connections = this.cachedConnections(inner.connections);
    this.policies = this.cachedPolicies(inner.policies);
  }

  get meta(): Store['meta'] {
    return this.inner.meta;
  }
  get scopes(): Store['scopes'] {
    return this.inner.scopes;
  }
  get reports(): Store['reports'] {
    return this.inner.reports;
  }
  get links(): Store['links'] {
    return this.inner.links;
  }
  get oauthApps(): Store['oauthApps'] {
    return this.inner.oauthApps;
  }
  get dashboard(): Store['dashboard'] {
    return this.inner.dashboard;
  }
  get frontDoor(): Store['frontDoor'] {
    return this.inner.frontDoor;
  }
  get identityProviders(): Store['identityProviders'] {
    return this.inner.identityProviders;
  }
  get audit(): Store['audit'] {
    return this.inner.audit;
  }

  migrate(): Promise<number[]> {
    return this.inner.migrate();
  }

  ping(): Promise<boolean> {
    return this.inner.ping();
  }

  async close(): Promise<void> {
    this.evictions.close();
    await this.inner.close();
  }

  resealAll(reseal: (item: SealedItem) => string): Promise<number> {
    return this.evictions.after(['*'], () => this.inner.resealAll(reseal));
  }

  private evict(tag: string): void {
    if (tag === '*' || tag.startsWith('key:')) this.keyRecords.evict(tag);
    if (tag === '*' || tag.startsWith('scope:')) {
      this.connectionRecords.evict(tag);
      this.connectionLists.evict(tag);
    }
    if (tag === '*' || tag.startsWith('policy:')) this.policyRecords.evict(tag);
  }

  private cachedKeys(keys: KeyStore): KeyStore {
    return {
      listHashSecrets: () => keys.listHashSecrets(),
      insertHashSecret: (secret) => keys.insertHashSecret(secret),
      createClient: (name) => keys.createClient(name),
      findClient: (name) => keys.findClient(name),
      listClients: () => keys.listClients(),
      insert: (key) => keys.insert(key),
      findByHash: (version, hash) =>
        this.keyRecords.get(
          `${version}:${hash}`,
          async () => {
            const record = await keys.findByHash(version, hash);
            return record && frozen(record);
          },
          (record) => keyTag(record.id),
        ),
      get: (id) => keys.get(id),
      list: () => keys.list(),
      revoke: (id, at) => this.evictions.after([keyTag(id)], () => keys.revoke(id, at)),
      revokedSince: (since) => keys.revokedSince(since),
      // At most once a minute per key and process (KeyService): the eviction costs nothing per call.
      touch: (id, at) => this.evictions.after([keyTag(id)], () => keys.touch(id, at)),
    };
  }

  private cachedConnections(connections: ConnectionStore): ConnectionStore {
    return {
      list: async (scope) =>
        // Never undefined: the loader always finds a list, empty or not.
        (await this.connectionLists.get(
          scopeKey(scope),
          async () => Object.freeze((await connections.list(scope)).map(frozen)) as ConnectionRecord[],
          () => scopeTag(scope),
        )) ?? [],
      get: (scope, provider, options) =>
        options?.fresh
          ? connections.get(scope, provider)
          : this.connectionRecords.get(
              `${scopeKey(scope)}\u0000${provider}`,
              async () => {
                const record = await connections.get(scope, provider);
                return record && frozen(record);
              },
              () => scopeTag(scope),
            ),
      put: (scope: Scope, connection: NewConnection) =>
        this.evictions.after([scopeTag(scope)], () => connections.put(scope, connection)),
      delete: (scope: Scope, provider: string) =>
        this.evictions.after([scopeTag(scope)], () => connections.delete(scope, provider)),
      setState: (scope: Scope, provider: string, state: ConnectionState) =>
        this.evictions.after([scopeTag(scope)], () => connections.setState(scope, provider, state)),
      listExpiring: (before) => connections.listExpiring(before),
      swapCredentials: (scope, provider, expected, next) =>
        this.evictions.after([scopeTag(scope)], () =>
          connections.swapCredentials(scope, provider, expected, next),
        ),
      addEvent: (scope: Scope, provider: string, event: ConnectionEvent, detail?: string) =>
        connections.addEvent(scope, provider, event, detail),
      count: () => connections.count(),
      listEvents: (limit) => connections.listEvents(limit),
    };
  }

  private cachedPolicies(policies: PolicyStore): PolicyStore {
    return {
      get: (clientId, orgId) =>
        andThen(
          this.policyRecords.get(
            `${clientId}\u0000${orgId ?? ''}`,
            async () => {
              const record = await policies.get(clientId, orgId);
              return Object.freeze({ record: record && frozen(record) });
            },
            () => policyTag(clientId),
          ),
          (kept) => kept?.record,
        ),
      set: (policy) => this.evictions.after([policyTag(policy.clientId)], () => policies.set(policy)),
      delete: (clientId, orgId) =>
        this.evictions.after([policyTag(clientId)], () => policies.delete(clientId, orgId)),
      list: () => policies.list(),
    };
  }
}
