import { TransferLookupError } from '#chains/chain_family'
import { redactSecrets, urlCredentials } from '#support/redaction'

/** Every endpoint of a chain failed (the last error's text, redacted, is in the message; the error is the cause). */
export class RpcUnavailableError extends Error {}

/**
 * A non-success HTTP answer of an endpoint, thrown by the families'
 * clients so that the pool can tell a rate limit (429: wait, honour
 * Retry-After, do not fail over) from an outage (5xx after retries,
 * network errors: cool down and fail over).
 */
export class RpcHttpError extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** Retry-After in milliseconds when the endpoint sent one. */
    readonly retryAfterMs: number | null = null,
    options?: ErrorOptions
  ) {
    super(message, options)
  }
}

/** The endpoint's daily request budget is spent (the pool moves on; the scan stops where it is). */
export class RpcBudgetExhaustedError extends Error {}

/** Requests one endpoint may take: per second (paced) and per UTC day (null: no daily cap). */
export type RpcBudget = { perSecond: number; perDay: number | null }

/** Retry-After as milliseconds (delta-seconds or an HTTP date), null when absent or unreadable. */
export function parseRetryAfter(header: string | null | undefined, now = Date.now()): number | null {
  if (!header) return null
  const trimmed = header.trim()
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000)
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? null : Math.max(0, date - now)
}

type EndpointState = { failures: number; coolUntil: number; lastError: string }

function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : ''
  return `${error.message}${cause}`
}

/** Cool-down state per URL, shared by every pool of the process. */
const endpoints = new Map<string, EndpointState>()

export type RpcPoolOptions = {
  /** How long an endpoint that failed is skipped. */
  cooldownMs: number
  /** Timeout plugins give each request. */
  timeoutMs: number
  /** The chain's RPC API key, decrypted (families send it in a header). */
  apiKey?: string
  /** Budget of each endpoint (null: unlimited). */
  budgetFor?: (url: string) => RpcBudget | null
}

/** Options of one pooled call. */
export type RpcCallOptions = {
  /** Endpoints that can serve this call (capabilities: e.g. a backup without an index API). */
  eligible?: (url: string) => boolean
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

  get apiKey() {
    return this.options.apiKey ?? ''
  }

  /**
   * An error text without the secrets of this pool: URLs carry keys
   * (Infura, Alchemy ...), and the API key itself is masked wherever it
   * appears.
   */
  redact(text: string): string {
    return redactSecrets(text, this.secrets)
  }

  /** The API key and the credential-like parts of the URLs. */
  get secrets(): string[] {
    return [this.apiKey, ...this.urls.flatMap(urlCredentials)]
  }

  /**
   * Waits until `url` may take one more request under its budget and
   * counts it. Families call it before every HTTP request they send
   * (one pooled call may send several). Throws RpcBudgetExhaustedError
   * when the endpoint's daily budget is spent.
   */
  async permit(url: string): Promise<void> {
    void url
    throw new Error('RpcPool.permit: not implemented yet (issue 12, rpc branch)')
  }

  async call<T>(work: (url: string) => Promise<T>, options: RpcCallOptions = {}): Promise<T> {
    void options
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
          lastError: this.redact(messageOf(error)),
        })
      }
    }
    // The message (stored, printed) is redacted. The cause is kept for the
    // plugins' checks (e.g. "not found"); it may quote the URL, so it is
    // logged only through the redacting error serializer (config/logger.ts).
    throw new RpcUnavailableError(`every RPC endpoint failed; last: ${this.redact(messageOf(lastError))}`, {
      cause: lastError,
    })
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
