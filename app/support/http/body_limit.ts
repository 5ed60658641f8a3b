import type { IncomingMessage } from 'node:http'
import { Exception } from '@adonisjs/core/exceptions'

export { BODY_LIMIT_BYTES } from '#config/bodyparser'

/** Rendered by the exception handler as HTTP 413 in the envelope. */
export function bodyTooLarge() {
  return new Exception('Request body too large', {
    status: 413,
    code: 'E_REQUEST_ENTITY_TOO_LARGE',
  })
}

/**
 * Counts the bytes of a request body as they arrive and calls `onExceeded`
 * once they pass `limit`. Attach it in the same tick as the body's reader,
 * so that no chunk goes by uncounted. Returns a function that stops counting.
 */
export function countBodyBytes(
  request: IncomingMessage,
  limit: number,
  onExceeded: () => void
): () => void {
  let received = 0
  const count = (chunk: Buffer) => {
    received += chunk.length
    if (received > limit) {
      stop()
      onExceeded()
    }
  }
  const stop = () => request.off('data', count)
  request.on('data', count)
  return stop
}
