import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import requestLimits from '#services/request_limits'

export type ThrottleBucket = 'cashier' | 'notify'

/**
 * Per-client-IP request limits of the cashier endpoints and the provider
 * notify endpoint (order creation is limited per merchant instead, see
 * RequestLimits.authenticateCreate). The client IP is the one TRUST_PROXY
 * lets X-Forwarded-For say.
 */
export default class ThrottleMiddleware {
  async handle(ctx: HttpContext, next: NextFn, options: { bucket: ThrottleBucket }) {
    await requestLimits.consume(ctx, options.bucket, `ip:${ctx.request.ip()}`)
    return next()
  }
}
