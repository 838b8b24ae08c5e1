/**
 * Plugins by id. The composition root registers the real plugins; nothing in core imports
 * plugins/ (DESIGN.md, Layout). Tests and `toolgate catalog validate` may `declare` a plugin's id
 * and tools without code, which is all manifest validation needs.
 */
import type { PluginDeclaration, ProviderPlugin } from './types.js';

export class PluginRegistry {
  private readonly declarations = new Map<string, PluginDeclaration>();
  private readonly plugins = new Map<string, ProviderPlugin>();

  /** A registry holding these plugins with their code (see `register`). */
  constructor(plugins: readonly ProviderPlugin[] = []) {
    for (const plugin of plugins) this.register(plugin);
  }

  /** Registers a plugin with its code. Throws when the id is taken or a tool name repeats. */
  register(plugin: ProviderPlugin): this {
    this.declare(plugin);
    this.plugins.set(plugin.id, plugin);
    return this;
  }

  /** Registers a plugin's id and tool descriptors only (for validation and tests). */
  declare(declaration: PluginDeclaration): this {
    if (this.declarations.has(declaration.id))
      throw new Error(`plugin "${declaration.id}" is registered twice`);
    const names = (declaration.tools ?? []).map((t) => t.name);
    const repeated = names.find((name, i) => names.indexOf(name) !== i);
    if (repeated) throw new Error(`plugin "${declaration.id}" declares tool "${repeated}" twice`);
    this.declarations.set(declaration.id, declaration);
    return this;
  }

  /** The declaration of a plugin, whether or not its code is registered. */
  declaration(id: string): PluginDeclaration | undefined {
    return this.declarations.get(id);
  }

  /**
   * Every declaration as plain data, for a build worker (build-pool.ts): the JSON of each, which
   * is what a manifest's content hash covers (load.ts), so a worker hashes as the main thread does.
   */
  plainDeclarations(): PluginDeclaration[] {
    return [...this.declarations.values()].map((d) => JSON.parse(JSON.stringify(d)) as PluginDeclaration);
  }

  /** The plugin with its code, when registered with `register`. */
  get(id: string): ProviderPlugin | undefined {
    return this.plugins.get(id);
  }

  ids(): string[] {
    return [...this.declarations.keys()].sort();
  }
}
