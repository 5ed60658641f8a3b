import type { ChainFamily } from '#chains/chain_family'

/**
 * The chain families of the enabled plugins, filled by
 * app/plugin_host/plugin_registry.ts. Adding a family = adding a plugin folder
 * and one line in config/plugins.ts.
 */
export class ChainRegistry {
  #families = new Map<string, ChainFamily>()

  register(family: ChainFamily) {
    this.#families.set(family.name, family)
  }

  has(name: string) {
    return this.#families.has(name)
  }

  /** The family, or null when no plugin of that name is registered. */
  find(name: string): ChainFamily | null {
    return this.#families.get(name) ?? null
  }

  family(name: string): ChainFamily {
    const family = this.#families.get(name)
    if (!family) throw new Error(`No chain plugin is registered for the family "${name}"`)
    return family
  }

  names() {
    return [...this.#families.keys()]
  }
}

const chainRegistry = new ChainRegistry()
export default chainRegistry
