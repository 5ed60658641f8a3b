import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { BODY_LIMIT_BYTES, bodyTooLarge, countBodyBytes } from '#support/http/body_limit'

/**
 * Parses a multipart/form-data body into its text fields, on the routes
 * that accept multipart (the provider notification); file parts are
 * skipped. The raw bytes are counted as they arrive and parsing stops with
 * 413 past the limit: the parser's own limits count only fields and files,
 * so a body of junk with no part in it would otherwise be read to its end.
 */
export default class MultipartFieldsMiddleware {
  async handle(ctx: HttpContext, next: NextFn) {
    const { request } = ctx
    if (request.is(['multipart']) === null || request.multipart?.state !== 'idle') return next()

    // process() starts reading at once; the counter is attached in the same tick.
    const parsing = request.multipart.process()
    const stopCounting = countBodyBytes(request.request, BODY_LIMIT_BYTES, () =>
      request.multipart.abort(bodyTooLarge())
    )
    try {
      await parsing
    } finally {
      stopCounting()
    }
    return next()
  }
}
