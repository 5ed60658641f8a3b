import { randomBytes } from 'node:crypto'
import logger from '@adonisjs/core/services/logger'
import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'

const ACCEPTABLE_ID = /^[A-Za-z0-9._:-]{8,64}$/

/**
 * Gives every request an id: kept from X-Request-Id when a proxy supplied a
 * sane one, generated otherwise. The id is echoed in the X-Request-Id
 * response header, in the envelope, and on every log line of the request.
 */
export default class RequestIdMiddleware {
  async handle(ctx: HttpContext, next: NextFn) {
    const incoming = ctx.request.header('x-request-id')
    if (!incoming || !ACCEPTABLE_ID.test(incoming)) {
      ctx.request.request.headers['x-request-id'] = randomBytes(12).toString('base64url')
    }
    const requestId = ctx.request.id()!
    ctx.logger = logger.child({ request_id: requestId })
    ctx.response.header('X-Request-Id', requestId)
    return next()
  }
}
