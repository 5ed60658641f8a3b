import settings from '#settings/settings_service'

/** Entries kept at most: a flood of distinct wrong hashes evicts the oldest, it cannot grow memory. */
const MAX_ENTRIES = 10_000

type Entry = { message: string; until: number }

/**
 * Transaction references that failed their check for an order (wrong
 * recipient, amount or token, not found, failed on chain ...), with the
 * refusal, for `chains.verify_failed_cache_minutes`: the same hash asked
 * again for the same order within that time is answered from here, with
 * no RPC request. Refusals that can change soon (not yet confirmed, node
 * unreachable, verification budget spent) are not kept. Per process and
 * in memory: another process asks the chain once itself.
 */
export class FailedReferences {
  #entries = new Map<string, Entry>()

  #key(tradeId: string, reference: string) {
    return `${tradeId}\n${reference.trim()}`
  }

  /** The refusal given for this order and reference, while it is kept. */
  recall(tradeId: string, reference: string, now = Date.now()): string | null {
    const key = this.#key(tradeId, reference)
    const entry = this.#entries.get(key)
    if (!entry) return null
    if (entry.until <= now) {
      this.#entries.delete(key)
      return null
    }
    return entry.message
  }

  async remember(tradeId: string, reference: string, message: string, now = Date.now()) {
    const minutes = await settings.get('chains.verify_failed_cache_minutes')
    if (minutes === 0) return
    const key = this.#key(tradeId, reference)
    this.#entries.delete(key)
    if (this.#entries.size >= MAX_ENTRIES) {
      // Maps iterate in insertion order: the first key is the oldest.
      const oldest = this.#entries.keys().next().value
      if (oldest !== undefined) this.#entries.delete(oldest)
    }
    this.#entries.set(key, { message, until: now + minutes * 60_000 })
  }

  /** Forget everything (tests). */
  clear() {
    this.#entries.clear()
  }
}

const failedReferences = new FailedReferences()
export default failedReferences
