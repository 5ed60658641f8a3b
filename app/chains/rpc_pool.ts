import { TransferLookupError } from '#chains/chain_family'
import { redactSecrets, urlCredentials } from '#support/http/redaction'
import {
  dailyBudgetSpent,
  holdOff,
  pacerKey,
  reserve,
  resetPacers,
  usedToday,
} from '#chains/rpc_pacer'
import { metrics } from '#support/runtime/metrics'

/** Every endpoint of a chain failed (the last error's text, redacted, is in the message; the error is the cause). */
export class RpcUnavailableError extends Error {}

/**
 * The endpoint answered, and the answer is for the caller to act on (a
 * range it refuses, a block it does not have yet, a method it lacks): not
 * an outage. Passed through at once, with no retry, cool-down or failover.
 */
export class RpcAnswerError extends Error {
  /** The endpoint that answered (set by the pool). */
  endpoint?: string
}

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
    options?: ErrorOptions & {
      /** The answer's body (redacted, bounded), for a family to read the JSON-RPC error it carries. */
      body?: string
    }
  ) {
    super(message, options)
    this.body = options?.body ?? ''
  }

  readonly body: string
}

/** The endpoint's daily request budget is spent (the pool moves on; the scan stops where it is). */
export class RpcBudgetExhaustedError extends Error {}

/** Requests one endpoint may take: per second (paced) and per UTC day (null: no daily cap). */
export type RpcBudget = { perSecond: number; perDay: number | null }

/** Retry-After as milliseconds (delta-seconds or an HTTP date), null when absent or unreadable. */
export function parseRetryAfter(
  header: string | null | undefined,
  now = Date.now()
): number | null {
  if (!header) return null
  const trimmed = header.trim()
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000)
  const date = Date.parse(trimmed)
  return Number.isNaN(date) ? null : Math.max(0, date - now)
}

/**
 * Why an endpoint is left alone for a while: `outage` (it failed: tried
 * again when every other one fails too), `rate_limited` (it asked for a
 * wait longer than a request's timeout: Retry-After) and `credits` (its
 * daily credits are spent, HTTP 402: until 00:00 UTC). The last two are
 * never asked before their time: the answer would be the same refusal.
 */
export type HoldKind = 'outage' | 'rate_limited' | 'credits'

type EndpointState = {
  failures: number
  coolUntil: number
  lastError: string
  kind: HoldKind | null
}

/**
 * What one endpoint's runs learned that the next runs, and other
 * processes, should know (app/chains/endpoint_memory.ts keeps it in the
 * database): a long hold (rate limit or spent credits) and the widest log
 * range it accepts.
 */
export type RememberedEndpoint = {
  holdUntil: number
  holdKind: 'rate_limited' | 'credits' | null
  holdReason: string
  /** Widest block range of one log query it accepted after refusing a wider one; null: never refused. */
  logRange: number | null
}

export interface EndpointMemory {
  recall(url: string): RememberedEndpoint | null
  /** Keeps a change (may write asynchronously; never throws). */
  remember(url: string, state: RememberedEndpoint): void
  /** Resolves once the changes kept so far are written (never rejects). */
  settled?(): Promise<void>
}

/** The next 00:00 UTC after `now`: when a daily quota (budget, credits) starts again. */
export function nextUtcMidnight(now = Date.now()): number {
  const date = new Date(now)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1)
}

function messageOf(error: unknown): string {
  if (!(error instanceof Error)) return String(error)
  const cause = error.cause instanceof Error ? ` (${error.cause.message})` : ''
  return `${error.message}${cause}`
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Waits until `until` (epoch ms) has really passed: timers may fire a millisecond early. */
async function sleepUntil(until: number) {
  for (let left = until - Date.now(); left > 0; left = until - Date.now()) await sleep(left)
}

/** Cool-down state per URL, shared by every pool of the process. */
const endpoints = new Map<string, EndpointState>()

/** Log ranges learned per URL in this process (the shared memory keeps them across processes). */
const learnedRanges = new Map<string, number>()

/** How much of an error body an RpcHttpError quotes. */
const BODY_EXCERPT = 300
/** How much of it is kept for the family to read (a JSON-RPC error object). */
const BODY_KEPT = 4000

export type RpcPoolOptions = {
  /** How long an endpoint that failed is skipped. */
  cooldownMs: number
  /** Timeout plugins give each request. */
  timeoutMs: number
  /** The chain's RPC API key, decrypted (families send it in a header). */
  apiKey?: string
  /** The network, for the metrics' labels. */
  network?: string
  /** Budget of each endpoint (null: unlimited). */
  budgetFor?: (url: string) => RpcBudget | null
  /** Retries of one endpoint after a 429 or a 5xx before moving on (default 2). */
  retries?: number
  /** First backoff step when an endpoint sent no Retry-After (default 500 ms; doubled per retry, jittered). */
  backoffBaseMs?: number
  /** Long holds and learned log ranges shared with other runs and processes (none: this process only). */
  memory?: EndpointMemory
  /**
   * The budget this pool's requests draw from, when not the endpoint's
   * common one (rpc_pacer.ts pacerKey): 'verify' for the payers' hash checks.
   */
  purpose?: string
}

/** Options of one pooled call. */
export type RpcCallOptions = {
  /** Endpoints that can serve this call (capabilities: e.g. a backup without an index API). */
  eligible?: (url: string) => boolean
}

/**
 * Several RPC endpoints of one chain, in order of preference, each with a
 * request budget.
 *
 * A call goes to the first eligible endpoint not cooling down. What
 * happens when the work throws depends on what it threw:
 * - RpcHttpError 429 (a rate limit, not an outage): wait Retry-After, or
 *   an exponential jittered backoff when there is none, and retry the same
 *   endpoint up to `retries` times, then move on to the next one without
 *   cooling this one down. A wait is never longer than the request timeout:
 *   an endpoint that asks for more is held until then (not asked by this
 *   pool, the next ones or, through `memory`, other processes) and the
 *   next one is tried at once.
 * - RpcHttpError 402 (daily credits spent): held until 00:00 UTC, likewise.
 * - RpcHttpError 5xx: retried the same way, then cooled down (an outage).
 * - RpcBudgetExhaustedError: the endpoint's daily budget is spent; the next
 *   one is tried, no cool-down (the endpoint is fine, only spent today).
 * - TransferLookupError, RpcAnswerError: an answer ("no such transaction",
 *   "this range is too wide", "I do not have that block"), passed on.
 * A held endpoint is never asked before its time; when every eligible
 * endpoint is held the call fails at once, saying until when.
 * - anything else (network error, timeout, other HTTP status, a bad
 *   answer): the endpoint is cooled down for `cooldownMs` and the next one
 *   is tried at once.
 * When all are cooling down the one that cools down first is tried anyway
 * (better than nothing). When every endpoint failed the call throws
 * RpcUnavailableError, the last error as its cause.
 *
 * Budgets: `call` does not take a permit itself, because one pooled call may
 * send several HTTP requests (a JSON-RPC batch of pages, a transaction and
 * its receipt) or none. Families take one per request they send: through
 * `fetch()` below, which permits, applies the timeout and turns a non-2xx
 * answer into RpcHttpError, or by calling `permit()` themselves before
 * each request when their client does its own HTTP (viem's transport).
 */
/** An endpoint's daily budget past 80 % (`low`) or spent (`exhausted`, or credits gone: HTTP 402). */
export type RpcBudgetAlert = {
  level: 'low' | 'exhausted'
  network: string
  /** Host (and port) only, redacted: never a path or key. */
  endpoint: string
  /** '' for the scanners' budget, 'verify' for the reference checks'. */
  purpose: string
  used: number | null
  perDay: number | null
  detail: string
}

let budgetListener: ((alert: RpcBudgetAlert) => void) | null = null

/** Who hears of budgets running low or out (app/notifications/notification_watch.ts); synchronous, must not throw. */
export function onRpcBudgetAlert(listener: ((alert: RpcBudgetAlert) => void) | null) {
  budgetListener = listener
}

export class RpcPool {
  /** Endpoints of this pool whose answers did not hold together (doubt()): asked after the others. */
  #doubted = new Set<string>()

  constructor(
    readonly urls: string[],
    private readonly options: RpcPoolOptions
  ) {}

  /**
   * The endpoint gave an answer the caller could not trust (a block it did
   * not have yet, a log of another fork): for the rest of this pool's life
   * the other endpoints are asked first. Not a failure: it is not cooled
   * down, and still asked when it is the only one.
   */
  doubt(url: string | undefined) {
    if (url && this.urls.length > 1) this.#doubted.add(url)
  }

  get timeoutMs() {
    return this.options.timeoutMs
  }

  get apiKey() {
    return this.options.apiKey ?? ''
  }

  #pacerKey(url: string) {
    return pacerKey(url, this.apiKey, this.options.purpose)
  }

  /** Tells the listener (the notifications) an endpoint's budget ran low or out: host only, never a key. */
  #alert(
    level: 'low' | 'exhausted',
    url: string,
    used: number | null,
    perDay: number | null,
    detail = ''
  ) {
    budgetListener?.({
      level,
      network: this.options.network ?? '',
      endpoint: this.endpointLabel(url),
      purpose: this.options.purpose ?? '',
      used,
      perDay,
      detail,
    })
  }

  /** The budget of an endpoint (null: unlimited). */
  budget(url: string): RpcBudget | null {
    return this.options.budgetFor?.(url) ?? null
  }

  /** True when the endpoint's daily budget is spent for the current UTC day. */
  budgetSpent(url: string): boolean {
    return dailyBudgetSpent(this.#pacerKey(url), this.budget(url))
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
   * when the endpoint's daily budget is spent. `requests` > 1 counts a
   * batch that the provider bills per call (JSON-RPC batches).
   */
  async permit(url: string, requests = 1): Promise<void> {
    const budget = this.budget(url)
    const key = this.#pacerKey(url)
    const slot = Date.now()
    const wait = reserve(key, budget, requests)
    if (budget?.perDay) {
      const used = usedToday(key)
      if (wait === null) this.#alert('exhausted', url, used, budget.perDay)
      else if (used >= 0.8 * budget.perDay && used - requests < 0.8 * budget.perDay)
        this.#alert('low', url, used, budget.perDay)
    }
    if (wait === null) {
      throw new RpcBudgetExhaustedError(
        `the daily request budget of ${this.redact(url)} (${budget?.perDay} requests) is spent until 00:00 UTC`
      )
    }
    if (wait > 0) await sleepUntil(slot + wait)
    // Woken late (a busy event loop): the next request keeps its distance from this one as sent,
    // not from its slot, or the two would reach the provider closer than its limit allows.
    const late = Date.now() - (slot + wait)
    if (late > 5 && budget && budget.perSecond > 0 && Number.isFinite(budget.perSecond)) {
      holdOff(key, (1000 * requests) / budget.perSecond)
    }
    metrics.rpcRequests.inc(
      { network: this.options.network ?? '', endpoint: this.endpointLabel(url) },
      requests
    )
  }

  /**
   * An endpoint as the metrics name it: its host (and port) only, never a
   * path or query (keys live there), redacted should a key be in the host.
   */
  endpointLabel(url: string): string {
    let host: string
    try {
      host = new URL(url).host
    } catch {
      return 'invalid'
    }
    return this.redact(host)
  }

  /**
   * One HTTP request to an endpoint under its budget: permit, then fetch
   * with the pool's timeout (unless `init.signal` is given). A non-2xx
   * answer throws RpcHttpError with the status, Retry-After and the start
   * of the body (redacted), so that the pool can tell a limit from an
   * outage. `target` is the full request URL when it is not the endpoint
   * itself (a REST path under it); the budget is the endpoint's.
   * `requests` is what the request counts for (a JSON-RPC batch: its calls).
   */
  async fetch(
    url: string,
    init: RequestInit = {},
    target: string | URL = url,
    requests = 1
  ): Promise<Response> {
    await this.permit(url, requests)
    const response = await fetch(target, {
      ...init,
      signal: init.signal ?? AbortSignal.timeout(this.timeoutMs),
    })
    if (response.ok) return response
    const body = await response.text().catch(() => '')
    const excerpt = body.length > BODY_EXCERPT ? `${body.slice(0, BODY_EXCERPT)}...` : body
    throw new RpcHttpError(
      this.redact(
        `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}${excerpt ? `: ${excerpt}` : ''}`
      ),
      response.status,
      parseRetryAfter(response.headers.get('retry-after')),
      { body: this.redact(body.slice(0, BODY_KEPT)) }
    )
  }

  async call<T>(work: (url: string) => Promise<T>, options: RpcCallOptions = {}): Promise<T> {
    if (this.urls.length === 0)
      throw new RpcUnavailableError('no RPC endpoint is configured (chain:set --rpc URL)')
    const eligible = options.eligible
      ? this.urls.filter((url) => options.eligible!(url))
      : this.urls
    if (eligible.length === 0) {
      throw new RpcUnavailableError(
        'no configured RPC endpoint can serve this request (chain:set --rpc URL)'
      )
    }
    const now = Date.now()
    // Held endpoints (a long rate limit, spent credits) are not asked before their time.
    const open = eligible.filter((url) => this.heldUntil(url, now) === null)
    if (open.length === 0) {
      throw new RpcUnavailableError(
        `every RPC endpoint is held: ${eligible.map((url) => this.holdReason(url)).join('; ')}`
      )
    }
    // Fresh first, then those whose last answer did not hold together, then those cooling down.
    const rank = (url: string) =>
      this.#state(url).coolUntil > now ? 2 : this.#doubted.has(url) ? 1 : 0
    const ordered = [...open].sort((a, b) => rank(a) - rank(b))
    let lastError: unknown
    for (const url of ordered) {
      if (this.budgetSpent(url)) {
        lastError = new RpcBudgetExhaustedError(
          `the daily request budget of ${this.redact(url)} is spent until 00:00 UTC`
        )
        continue
      }
      const outcome = await this.#attempt(url, work)
      if ('result' in outcome) return outcome.result
      lastError = outcome.error
    }
    // The message (stored, printed) is redacted. The cause is kept for the
    // plugins' checks (e.g. "not found"); it may quote the URL, so it is
    // logged only through the redacting error serializer (config/logger.ts).
    throw new RpcUnavailableError(
      `every RPC endpoint failed; last: ${this.redact(messageOf(lastError))}`,
      {
        cause: lastError,
      }
    )
  }

  /** The work on one endpoint, retried on limits and server errors; a failure that should move on is returned. */
  async #attempt<T>(
    url: string,
    work: (url: string) => Promise<T>
  ): Promise<{ result: T } | { error: unknown }> {
    const retries = this.options.retries ?? 2
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await work(url)
        const state = this.#state(url)
        if (!endpoints.has(url) || state.failures > 0 || state.kind === 'outage') {
          endpoints.set(url, { failures: 0, coolUntil: 0, lastError: '', kind: null })
        }
        return { result }
      } catch (error) {
        if (error instanceof RpcAnswerError) {
          error.endpoint ??= url
          throw error
        }
        if (error instanceof TransferLookupError) throw error
        if (error instanceof RpcHttpError && error.status === 402) {
          // Infura and others: the day's credits are spent. Until 00:00 UTC every request would be refused.
          metrics.rpcErrors.inc({
            network: this.options.network ?? '',
            endpoint: this.endpointLabel(url),
            kind: 'credits_spent',
          })
          this.#alert('exhausted', url, null, null, 'its daily credits are spent (HTTP 402)')
          this.#hold(
            url,
            'credits',
            nextUtcMidnight(),
            `its daily credits are spent (HTTP 402) until 00:00 UTC: ${messageOf(error)}`
          )
          return { error }
        }
        const limited = error instanceof RpcHttpError && error.status === 429
        const serverError = error instanceof RpcHttpError && error.status >= 500
        metrics.rpcErrors.inc({
          network: this.options.network ?? '',
          endpoint: this.endpointLabel(url),
          kind:
            error instanceof RpcBudgetExhaustedError
              ? 'budget_spent'
              : limited
                ? 'rate_limited'
                : error instanceof RpcHttpError
                  ? 'http'
                  : 'network',
        })
        if (error instanceof RpcBudgetExhaustedError) return { error }
        if ((limited || serverError) && attempt < retries) {
          const wait = this.#retryWait(error as RpcHttpError, attempt)
          if (wait !== null) {
            // Every caller of this endpoint waits, not only this one.
            holdOff(this.#pacerKey(url), wait)
            await sleep(wait)
            continue
          }
        }
        const asked = error instanceof RpcHttpError ? error.retryAfterMs : null
        if (limited && asked !== null && asked > this.options.timeoutMs) {
          // A wait longer than a request's timeout: not waited for here, but kept, so that
          // neither this run, nor the next, nor another process asks before it is over.
          this.#hold(
            url,
            'rate_limited',
            Date.now() + asked,
            `rate limited: it asked for ${Math.ceil(asked / 1000)} s (Retry-After)`
          )
        } else if (!limited) {
          this.#coolDown(url, error)
        }
        return { error }
      }
    }
  }

  /**
   * How long to wait before retrying after a 429/5xx: the endpoint's
   * Retry-After, else 2^attempt × base, jittered. Null when the
   * endpoint asks for longer than the request timeout: the next endpoint
   * is better than holding the scan that long.
   */
  #retryWait(error: RpcHttpError, attempt: number): number | null {
    const bound = this.options.timeoutMs
    if (error.retryAfterMs !== null) return error.retryAfterMs <= bound ? error.retryAfterMs : null
    const base = this.options.backoffBaseMs ?? 500
    const ceiling = Math.min(bound, base * 2 ** attempt)
    // Jittered between half and all of the step, so that callers limited together do not retry together.
    return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2)
  }

  #coolDown(url: string, error: unknown) {
    const state = this.#state(url)
    // A longer hold (rate limit, credits) is not shortened by an outage's cool-down.
    if (state.kind !== null && state.kind !== 'outage' && state.coolUntil > Date.now()) return
    endpoints.set(url, {
      failures: state.failures + 1,
      coolUntil: Date.now() + this.options.cooldownMs,
      lastError: this.redact(messageOf(error)),
      kind: 'outage',
    })
  }

  /** The endpoint's state in this process, seeded from the shared memory the first time. */
  #state(url: string): EndpointState {
    let state = endpoints.get(url)
    const remembered = this.options.memory?.recall(url)
    if (remembered?.holdKind && remembered.holdUntil > (state?.coolUntil ?? 0)) {
      // Another run or process was told to wait longer than this one knows.
      state = {
        failures: state?.failures ?? 0,
        coolUntil: remembered.holdUntil,
        lastError: remembered.holdReason,
        kind: remembered.holdKind,
      }
      endpoints.set(url, state)
    }
    return state ?? { failures: 0, coolUntil: 0, lastError: '', kind: null }
  }

  #hold(url: string, kind: 'rate_limited' | 'credits', until: number, reason: string) {
    const state = this.#state(url)
    const text = this.redact(reason)
    endpoints.set(url, {
      failures: state.failures,
      coolUntil: Math.max(until, state.coolUntil),
      lastError: text,
      kind,
    })
    const remembered = this.options.memory?.recall(url)
    this.options.memory?.remember(url, {
      holdUntil: Math.max(until, state.coolUntil),
      holdKind: kind,
      holdReason: text,
      logRange: remembered?.logRange ?? null,
    })
  }

  /**
   * Until when the endpoint is held (a long rate limit, spent credits):
   * not asked before then. Null when it is not held (an outage's
   * cool-down is not a hold: a cooling endpoint is still tried when every
   * other one fails).
   */
  heldUntil(url: string, now = Date.now()): number | null {
    const state = this.#state(url)
    if (state.kind === null || state.kind === 'outage' || state.coolUntil <= now) return null
    return state.coolUntil
  }

  /** Why the endpoint is left alone, for the operator ('' when it is not). */
  holdReason(url: string, now = Date.now()): string {
    const until = this.heldUntil(url, now)
    if (until === null) return ''
    return `${this.redact(url)} ${this.#state(url).lastError} (until ${new Date(until).toISOString()})`
  }

  /** The widest log range this endpoint accepted after refusing a wider one (null: none learned). */
  logRange(url: string): number | null {
    return learnedRanges.get(url) ?? this.options.memory?.recall(url)?.logRange ?? null
  }

  /** Resolves once what this pool learned about its endpoints is written (the end of a run). */
  async settled(): Promise<void> {
    await this.options.memory?.settled?.()
  }

  /** Keeps the widest log range the endpoint accepts, for this run, the next ones and other processes. */
  rememberLogRange(url: string, width: number) {
    if (this.logRange(url) === width) return
    learnedRanges.set(url, width)
    const remembered = this.options.memory?.recall(url)
    this.options.memory?.remember(url, {
      holdUntil: remembered?.holdUntil ?? 0,
      holdKind: remembered?.holdKind ?? null,
      holdReason: remembered?.holdReason ?? '',
      logRange: width,
    })
  }

  /** Failures and cool-down of an endpoint (diagnostics, tests). */
  static health(url: string) {
    return endpoints.get(url) ?? null
  }

  /** Requests counted today for an endpoint and key (diagnostics, tests). */
  static usedToday(url: string, apiKey = '', purpose = '') {
    return usedToday(pacerKey(url, apiKey, purpose))
  }

  /** Forget cool-downs, pacing and daily counts (tests). */
  static reset() {
    endpoints.clear()
    learnedRanges.clear()
    resetPacers()
  }
}
