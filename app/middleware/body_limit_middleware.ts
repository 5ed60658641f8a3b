import type { Socket } from 'node:net'
import type { IncomingMessage } from 'node:http'
import type { HttpContext } from '@adonisjs/core/http'
import type { NextFn } from '@adonisjs/core/types/http'
import { BODY_LIMIT_BYTES, bodyTooLarge } from '#support/http/body_limit'

/** How long the rest of an unread body is read and dropped after the answer, at most. */
const LINGER_MS = 2000

/**
 * No request body is read past the limit, whatever its type or route:
 *
 * - a Content-Length over the limit is refused with 413 at once, before a
 *   byte of the body is read;
 * - a body left unread when the answer goes out (a type the route does not
 *   parse, a parser that stopped at its limit, an error before parsing) is
 *   not drained: Node would otherwise read it to its end to keep the
 *   connection alive, so the answer says `Connection: close` and the
 *   connection is closed after it.
 *
 * Bodies without Content-Length (chunked) are cut by their parser: JSON,
 * form and text by the body parser's limit, multipart by
 * multipart_fields_middleware.
 */
export default class BodyLimitMiddleware {
  async handle(ctx: HttpContext, next: NextFn) {
    // Read (and kept) while the connection is open: once it is closed the
    // socket forgets the peer's address, and the access-log line is
    // written after the answer.
    ctx.request.ip()
    const declared = Number(ctx.request.header('content-length') ?? 0)
    if (declared > BODY_LIMIT_BYTES) {
      closeAfterAnswer(ctx)
      throw bodyTooLarge()
    }
    await next()
    if (!ctx.request.request.complete) closeAfterAnswer(ctx)
  }
}

/**
 * `Connection: close`, closed gracefully. Node closes such a connection as
 * soon as the answer is written (socket.destroySoon); with request bytes
 * still unread that close is a TCP reset, and a client still sending may
 * lose the answer before reading it. So, like a web server's "lingering
 * close", the end of the answer is signalled first (FIN), what still
 * arrives is read and dropped, and the connection is closed once the
 * client has closed its side or after LINGER_MS.
 */
function closeAfterAnswer(ctx: HttpContext) {
  ctx.response.header('connection', 'close')
  const request: IncomingMessage = ctx.request.request
  const socket = request.socket as Socket & { destroySoon?: () => void }
  if (!socket || socket.destroyed) return
  socket.destroySoon = function lingeringClose(this: Socket) {
    this.end()
    request.resume()
    const timer = setTimeout(() => this.destroy(), LINGER_MS)
    this.once('close', () => clearTimeout(timer))
  }
}
