import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { BODY_LIMIT_BYTES, bodyTooLarge } from '#support/body_limit'

/**
 * No request body is read past the limit, whatever its type or route:
 *
 * - a Content-Length over the limit is refused with 413 at once, before a
 *   byte of the body is read;
 * - a body left unread when the answer goes out (a type the route does not
 *   parse, a parser that stopped at its limit, an error before parsing) is
 *   not drained: Node would otherwise read it to its end to keep the
 *   connection alive, so the answer says `Connection: close` and the
 *   connection is dropped after it.
 *
 * Bodies without Content-Length (chunked) are cut by their parser: JSON,
 * form and text by the body parser's limit, multipart by
 * multipart_fields_middleware.
 */
export default class BodyLimitMiddleware {
  async handle(ctx: HttpContext, next: NextFn) {
    const declared = Number(ctx.request.header('content-length') ?? 0)
    if (declared > BODY_LIMIT_BYTES) {
      ctx.response.header('connection', 'close')
      throw bodyTooLarge()
    }
    await next()
    if (!ctx.request.request.complete) ctx.response.header('connection', 'close')
  }
}
