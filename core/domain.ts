/**
 * The shared vocabulary of the gateway (SPEC.md, Resources and Authentication): who calls, in which
 * scope, with which kind of key, and the states a connection can be in. Every layer may import it;
 * it imports nothing, so it can never take part in an import circle.
 */

/** Key types differ only in the tenants scoped to the key (SPEC.md, Authentication 3). */
export type KeyType = 'solo' | 'client' | 'platform';
export const KEY_TYPES: readonly KeyType[] = ['solo', 'client', 'platform'];

/** Who a request acts for (SPEC.md, Identifier resolution). `null` = not set. */
export interface Scope {
  clientId: string;
  orgId: string | null;
  userId: string | null;
}

/** How many levels a request scopes to (SPEC.md, Identifier resolution). */
export type ScopeMode = 'solo' | '2-level' | '3-level';

/** A string naming the scope uniquely, for maps, caches and bus topics (never shown to callers). */
export function scopeKey(scope: Scope): string {
  return `${scope.clientId}\u0000${scope.orgId ?? ''}\u0000${scope.userId ?? ''}`;
}

/** The stored states SPEC.md names; "no connection" is the absence of a connection. */
export type ConnectionState = 'connected' | 'reapproval_needed';

/**
 * Which tools/list a caller is served (issue 15): `full` lists every tool its scope sees;
 * `compact` lists the system tools with search_tools and call_tool, the same for every scope.
 */
export type ToolSurface = 'compact' | 'full';

/** The `tools` query parameter: a surface, or `auto` (absent) for compact above a number of tools. */
export type SurfaceChoice = ToolSurface | 'auto';
export const SURFACE_CHOICES: readonly SurfaceChoice[] = ['auto', 'compact', 'full'];

/** Who is calling: the verified key, its client, and the scope the request resolved to. */
export interface Caller {
  keyId: string;
  /** Set when the request came with a front-door access token (issue 14) instead of the key itself. */
  grantId?: string;
  keyType: KeyType;
  clientId: string;
  clientName: string;
  scope: Scope;
  /** `scopeKey(scope)`: the map key for per-scope state (sessions, notifications, caches). */
  scopeKey: string;
  mode: ScopeMode;
  /** The tool list asked for; a 2025 or 2024 session keeps the one it was opened with. */
  surface: SurfaceChoice;
}
