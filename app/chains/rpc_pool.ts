import { TransferLookupError } from '#chains/chain_family'

/** Every endpoint of a chain failed (the last error is kept as cause). */
export class RpcUnavailableError extends Error {}

type EndpointState = { failures: number; coolUntil: number; lastError: string }

/** Cool-down state per URL, shared by every pool of the process. */
const endpoints = new Map<string, EndpointState>()

export type RpcPoolOptions = {
  /** How long an endpoint that failed is skipped. */
  cooldownMs: number
  /** Timeout plugins give each request. */
  timeoutMs: number
}

/**
 * Several RPC endpoints of one chain, in order of preference. A call goes
 * to the first endpoint not cooling down; an endpoint that fails is skipped
 * for `cooldownMs` and the call moves on to the next. When all are cooling
 * down the one that cools down first is tried anyway (better than nothing).
 * Plugins decide what counts as a failure by throwing; a TransferLookupError
 * is an answer (e.g. "no such transaction"), passed on without cool-down.
 */
export class RpcPool {
  constructor(
    readonly urls: string[],
    private readonly options: RpcPoolOptions
  ) {}

  get timeoutMs() {
    return this.options.timeoutMs
  }

  async call<T>(work: (url: string) => Promise<T>): Promise<T> {
    if (this.urls.length === 0) throw new RpcUnavailableError('no RPC endpoint is configured (chain:set --rpc URL)')
    const now = Date.now()
    const ordered = [...this.urls].sort((a, b) => {
      const aCool = (endpoints.get(a)?.coolUntil ?? 0) > now ? 1 : 0
      const bCool = (endpoints.get(b)?.coolUntil ?? 0) > now ? 1 : 0
      return aCool - bCool
    })
    let lastError: unknown
    for (const url of ordered) {
      try {
        const result = await work(url)
        endpoints.set(url, { failures: 0, coolUntil: 0, lastError: '' })
        return result
      } catch (error) {
        if (error instanceof TransferLookupError) throw error
        lastError = error
        const state = endpoints.get(url) ?? { failures: 0, coolUntil: 0, lastError: '' }
        endpoints.set(url, {
          failures: state.failures + 1,
          coolUntil: Date.now() + this.options.cooldownMs,
          lastError: (error as Error).message,
        })
      }
    }
    throw new RpcUnavailableError(
      `every RPC endpoint failed; last: ${(lastError as Error)?.message ?? String(lastError)}`,
      { cause: lastError }
    )
  }

  /** Failures and cool-down of an endpoint (diagnostics, tests). */
  static health(url: string) {
    return endpoints.get(url) ?? null
  }

  /** Forget cool-downs (tests). */
  static reset() {
    endpoints.clear()
  }
}
