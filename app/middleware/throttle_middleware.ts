import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import limiter from '@adonisjs/limiter/services/main'
import settings from '#settings/settings_service'

export type ThrottleBucket = 'create' | 'cashier'

/**
 * Per-IP request limits of the merchant create endpoints and the cashier
 * endpoints. The limits and the store (memory or database) are settings,
 * read on every request so that a change applies within seconds.
 * Over the limit: HTTP 429 in the envelope, with Retry-After. A limit of 0
 * turns limiting off (e.g. behind a proxy that limits already).
 */
export default class ThrottleMiddleware {
  async handle(ctx: HttpContext, next: NextFn, options: { bucket: ThrottleBucket }) {
    const requests =
      options.bucket === 'create'
        ? await settings.get('rate_limit.create_per_minute')
        : await settings.get('rate_limit.cashier_per_minute')
    if (requests === 0) return next()
    const store = await settings.get('rate_limit.store')

    const response = await limiter
      .use(store, { requests, duration: '1 minute' })
      .consume(`${options.bucket}_${ctx.request.ip()}`)
    ctx.response.header('X-RateLimit-Limit', response.limit)
    ctx.response.header('X-RateLimit-Remaining', response.remaining)
    return next()
  }
}
