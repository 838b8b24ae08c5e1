import type { Scope } from '../store/types.js';
import type { KeyType } from './keys.js';
import type { ScopeMode } from './scope.js';

/** Who is calling: the verified key, its client, and the scope the request resolved to. */
export interface Caller {
  keyId: string;
  keyType: KeyType;
  clientId: string;
  clientName: string;
  scope: Scope;
  /** `scopeKey(scope)`: the map key for per-scope state (sessions, notifications, caches). */
  scopeKey: string;
  mode: ScopeMode;
}
