import type { HttpContext } from '@adonisjs/core/http'
import logger from '@adonisjs/core/services/logger'
import limiter from '@adonisjs/limiter/services/main'
import { errors as limiterErrors, type Limiter } from '@adonisjs/limiter'
import BusinessError from '#exceptions/business_error'
import settings from '#settings/settings_service'
import { loadRedisLimiterStore } from '#services/redis_limiter_store'

export type LimitBucket = 'create' | 'query' | 'cashier' | 'notify'

const LIMIT_SETTINGS = {
  create: 'rate_limit.create_per_minute',
  query: 'rate_limit.query_per_minute',
  cashier: 'rate_limit.cashier_per_minute',
  notify: 'rate_limit.notify_per_minute',
} as const

type Store = 'memory' | 'database' | 'redis'

/** A failing shared store is reported at most this often. */
const STORE_ERROR_LOG_INTERVAL_MS = 60_000
/** How long the first request waits for Redis to be connected. */
const REDIS_FIRST_CONNECT_MS = 2000

/**
 * Request limits per minute. The numbers and the store (memory per process,
 * or database / redis shared by every process) are settings, read on every
 * request so that a change applies within seconds; a limit of 0 turns that
 * bucket off. Over the limit: E_TOO_MANY_REQUESTS, rendered as HTTP 429 in
 * the envelope with Retry-After.
 *
 * A shared store that fails (Redis down, database error) does not refuse
 * payments: the request is counted in this process's memory instead, and
 * the failure is logged.
 */
export class RequestLimits {
  #lastStoreErrorLog = 0
  #redisFirstConnect: Promise<void> | null = null

  /** Counts one request of `key` (a client IP, a pid) in `bucket`. */
  async consume(ctx: HttpContext, bucket: LimitBucket, key: string): Promise<void> {
    const requests = await settings.get(LIMIT_SETTINGS[bucket])
    if (requests === 0) return
    const response = await this.#run(requests, (use) => use.consume(`${bucket}:${key}`))
    ctx.response.header('X-RateLimit-Limit', response.limit)
    ctx.response.header('X-RateLimit-Remaining', response.remaining)
  }

  /**
   * POST /pay/submit-tx-hash is counted per order too (trade_id), over
   * `rate_limit.submit_window_minutes`: whoever holds a trade_id, from
   * however many IPs, gets `rate_limit.submit_per_order` chain checks of it
   * per window. Over it: the same 429 as every other limit.
   */
  async consumeSubmission(ctx: HttpContext, tradeId: string): Promise<void> {
    const requests = await settings.get('rate_limit.submit_per_order')
    if (requests === 0) return
    const duration = `${await settings.get('rate_limit.submit_window_minutes')} minutes`
    const response = await this.#run(
      requests,
      (use) => use.consume(`submit:trade:${tradeId}`),
      duration
    )
    ctx.response.header('X-RateLimit-Limit', response.limit)
    ctx.response.header('X-RateLimit-Remaining', response.remaining)
  }

  /**
   * Order creation is counted per merchant, not per IP: a busy shop backend
   * is one IP, and several shops may share one. So the request is first
   * authenticated, then counted against its pid. Requests that fail
   * authentication are counted per client IP (against the same number),
   * so guessing signatures or pids is limited too, and an outsider who
   * knows a pid cannot use up that merchant's budget.
   */
  async authenticateCreate<T extends { pid: string }>(
    ctx: HttpContext,
    authenticate: () => Promise<T>
  ): Promise<T> {
    return this.authenticateMerchant(ctx, 'create', authenticate)
  }

  /**
   * The same for another bucket counted per merchant (order queries have
   * their own, so that a shop polling its orders never uses up its
   * creates).
   */
  async authenticateMerchant<T extends { pid: string }>(
    ctx: HttpContext,
    bucket: 'create' | 'query',
    authenticate: () => Promise<T>
  ): Promise<T> {
    const requests = await settings.get(LIMIT_SETTINGS[bucket])
    if (requests === 0) return authenticate()

    const failuresKey = `${bucket}_failed:${ctx.request.ip()}`
    const failures = await this.#run(requests, (use) => use.get(failuresKey))
    if (failures && failures.remaining <= 0) throw new limiterErrors.E_TOO_MANY_REQUESTS(failures)

    let apiKey: T
    try {
      apiKey = await authenticate()
    } catch (error) {
      if (error instanceof BusinessError)
        await this.#run(requests, (use) => use.increment(failuresKey))
      throw error
    }
    await this.consume(ctx, bucket, `pid:${apiKey.pid}`)
    return apiKey
  }

  /** Runs `operation` on the configured store, on memory if that store fails. */
  async #run<R>(
    requests: number,
    operation: (use: Limiter) => Promise<R>,
    duration = '1 minute'
  ): Promise<R> {
    const store: Store = await settings.get('rate_limit.store')
    const options = { requests, duration }
    if (store === 'memory') return operation(limiter.use('memory', options))
    try {
      if (store === 'redis') await this.#waitForFirstRedisConnect()
      return await operation(limiter.use(store, options))
    } catch (error) {
      if (error instanceof limiterErrors.E_TOO_MANY_REQUESTS) throw error
      this.#reportStoreError(store, error)
      return operation(limiter.use('memory', options))
    }
  }

  /**
   * The Redis store refuses at once while Redis is not connected (so an
   * outage costs no waiting); only the very first use waits briefly for the
   * connection that it opens.
   */
  #waitForFirstRedisConnect(): Promise<void> {
    this.#redisFirstConnect ??= loadRedisLimiterStore().then(
      (connection) =>
        new Promise<void>((resolve) => {
          if (connection.status === 'ready') return resolve()
          const timer = setTimeout(done, REDIS_FIRST_CONNECT_MS)
          connection.ioConnection.once('ready', done)
          connection.ioConnection.once('error', done)
          function done() {
            clearTimeout(timer)
            connection.ioConnection.off('ready', done)
            connection.ioConnection.off('error', done)
            resolve()
          }
        })
    )
    return this.#redisFirstConnect
  }

  #reportStoreError(store: Store, error: unknown) {
    const now = Date.now()
    if (now - this.#lastStoreErrorLog < STORE_ERROR_LOG_INTERVAL_MS) return
    this.#lastStoreErrorLog = now
    logger.error(
      { err: error, store },
      `rate-limit store "${store}" failed; counting requests in memory meanwhile`
    )
  }
}

const requestLimits = new RequestLimits()
export default requestLimits
