/**
 * Tool policies (issue 15), as the operator sets them through the dashboard, the admin API and the
 * CLI: checked against the catalog, so an entry that names nothing is refused rather than stored to
 * hide nothing (or everything, in an allow-list) unnoticed. The gateway applies them: tools/policy.ts.
 */
import type { CatalogSnapshot } from '../catalog/index.js';
import type { Bus } from '../coordination/bus.js';
import { SURFACE_CHOICES, type SurfaceChoice } from '../domain.js';
import type { Store, ToolPolicyRecord } from '../store/types.js';
import { entryMatches } from '../tools/policy.js';
import { InputError, line } from './input.js';

/** What an operator submits; an absent field keeps the stored value (or the default: every tool, auto). */
export interface PolicyInput {
  surface?: unknown;
  /** Entries separated by commas or white space; empty: no allow-list (every tool not denied). */
  allow?: unknown;
  deny?: unknown;
}

/** Whose policy: a client (orgId null) or one organization of it. */
export interface PolicyOwner {
  clientId: string;
  clientName: string;
  orgId: string | null;
}

/** A policy as shown: the stored one, or the default when none is stored (`updatedAt` null). */
export type PolicyView = Omit<ToolPolicyRecord, 'updatedAt'> & { updatedAt: string | null };

const MAX_ENTRIES = 200;
const ENTRY = /^[a-z0-9][a-z0-9_-]{0,63}\*?$|^\*$/;

export interface PolicyDeps {
  store: Store;
  catalog: { readonly current: CatalogSnapshot };
  /** Tells every process that the owner's scopes' tool lists may have changed. */
  bus: Bus;
}

export class PolicyOperations {
  constructor(private readonly deps: PolicyDeps) {}

  /** The owner named by a client name and, optionally, an org_id. */
  async owner(client: unknown, orgId: unknown): Promise<PolicyOwner> {
    const name = line(client, 'client', 'the client name', 100);
    const org = line(orgId, 'org_id', 'the org_id', 256, true);
    const record = await this.deps.store.keys.findClient(name);
    if (!record) throw new InputError('client', `No client is named "${name}".`);
    return { clientId: record.id, clientName: record.name, orgId: org === '' ? null : org };
  }

  async get(owner: PolicyOwner): Promise<PolicyView> {
    const stored = await this.deps.store.policies.get(owner.clientId, owner.orgId);
    return (
      stored ?? {
        clientId: owner.clientId,
        orgId: owner.orgId,
        surface: 'auto',
        allow: null,
        deny: [],
        updatedAt: null,
      }
    );
  }

  /** Sets the owner's policy: the fields given replace the stored ones, each checked first. */
  async set(owner: PolicyOwner, input: PolicyInput): Promise<PolicyView> {
    const current = await this.get(owner);
    const surface = input.surface === undefined ? current.surface : surfaceOf(input.surface);
    const allow = input.allow === undefined ? current.allow : this.entries(input.allow, 'allow');
    const deny = input.deny === undefined ? current.deny : (this.entries(input.deny, 'deny') ?? []);
    await this.deps.store.policies.set({
      clientId: owner.clientId,
      orgId: owner.orgId,
      surface,
      allow,
      deny,
    });
    await this.changed(owner);
    return this.get(owner);
  }

  /** Removes the owner's policy (back to every tool, surface auto); false when it had none. */
  async clear(owner: PolicyOwner): Promise<boolean> {
    const cleared = await this.deps.store.policies.delete(owner.clientId, owner.orgId);
    if (cleared) await this.changed(owner);
    return cleared;
  }

  /** Open sessions and listen streams of the owner's scopes are told their tools changed. */
  private changed(owner: PolicyOwner): Promise<void> {
    return this.deps.bus.publish({ type: 'policy.changed', clientId: owner.clientId, orgId: owner.orgId });
  }

  /** The entries of a list, each naming a provider, a tool, or (with `*`) at least one tool; null when empty. */
  private entries(value: unknown, field: 'allow' | 'deny'): string[] | null {
    const text = typeof value === 'string' ? value : Array.isArray(value) ? value.join(',') : undefined;
    if (text === undefined)
      throw new InputError(field, `The ${field} list is a list of provider ids and tool names.`);
    const entries = [...new Set(text.split(/[\s,]+/).filter((entry) => entry !== ''))];
    if (entries.length === 0) return null;
    if (entries.length > MAX_ENTRIES)
      throw new InputError(field, `The ${field} list holds at most ${MAX_ENTRIES} entries.`);
    const { providers, tools } = this.deps.catalog.current;
    for (const entry of entries) {
      if (!ENTRY.test(entry)) {
        throw new InputError(
          field,
          `"${entry}" is not a provider id or tool name: lowercase letters, digits, - and _, with * only at the end (github_*).`,
        );
      }
      const known = entry.endsWith('*')
        ? [...tools.values()].some((tool) => entryMatches(entry, tool))
        : providers.has(entry) || tools.has(entry);
      if (!known) {
        throw new InputError(
          field,
          entry.endsWith('*')
            ? `"${entry}" matches no tool or provider of the catalog.`
            : `"${entry}" is no provider id or tool name of the catalog (see list_providers or the Catalog page).`,
        );
      }
    }
    return entries;
  }
}

function surfaceOf(value: unknown): SurfaceChoice {
  if (typeof value === 'string' && (SURFACE_CHOICES as readonly string[]).includes(value))
    return value as SurfaceChoice;
  throw new InputError('surface', 'Choose the tool surface: auto, compact or full.');
}
