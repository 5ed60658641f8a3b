import type { LiveRateSource } from '#rates/live_rate_source'

/** The live rate sources of the enabled plugins, by name. */
class RateSourceRegistry {
  #sources = new Map<string, LiveRateSource>()

  register(source: LiveRateSource) {
    if (this.#sources.has(source.name))
      throw new Error(`two rate sources are named "${source.name}"`)
    this.#sources.set(source.name, source)
  }

  /** For tests: forgets a source registered by a test. */
  unregister(name: string) {
    this.#sources.delete(name)
  }

  get(name: string): LiveRateSource | undefined {
    return this.#sources.get(name)
  }

  all(): LiveRateSource[] {
    return [...this.#sources.values()]
  }
}

const rateSources = new RateSourceRegistry()
export default rateSources
