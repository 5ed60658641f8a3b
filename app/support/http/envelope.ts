import type { HttpContext } from '@adonisjs/core/http'

/** The response envelope of every JSON endpoint of the spec. */
export type Envelope<T = unknown> = {
  status_code: number
  message: string
  data: T | null
  request_id: string
}

export function envelope<T>(
  ctx: HttpContext,
  statusCode: number,
  message: string,
  data: T | null = null
): Envelope<T> {
  return {
    status_code: statusCode,
    message,
    data,
    request_id: ctx.request.id() ?? '',
  }
}

/** Sends a success envelope (HTTP 200, status_code 200). */
export function ok<T>(ctx: HttpContext, data: T, message = 'success') {
  return ctx.response.status(200).json(envelope(ctx, 200, message, data))
}
