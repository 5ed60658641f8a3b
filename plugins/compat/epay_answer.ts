import type { HttpContext } from '@adonisjs/core/http'
import { errors as vineErrors } from '@vinejs/vine'
import { errors as limiterErrors } from '@adonisjs/limiter'
import BusinessError from '#exceptions/business_error'
import {
  DATABASE_RETRY_AFTER_SECONDS,
  DATABASE_UNAVAILABLE_MESSAGE,
  isDatabaseUnavailable,
} from '#support/database/database_unavailable'

/**
 * The JSON answers of mapi.php and api.php, the EPay way: `code` 1 and the
 * fields on success, `code` -1 and `msg` on any refusal. Always HTTP 200:
 * EPay answers every outcome in the body, and clients (the PHP SDK's curl
 * call, file_get_contents without ignore_errors) read the body of a 200
 * only. Never the gateway's envelope, never a 404 or 500 page.
 */
export type EpayAnswer = { code: number; msg: string } & Record<string, unknown>

export function answerEpay(ctx: HttpContext, answer: EpayAnswer) {
  return ctx.response.status(200).json(answer)
}

/** The refusal of an error as `code` -1; faults of our own are logged, not shown. */
export function refuseEpay(ctx: HttpContext, error: unknown) {
  return answerEpay(ctx, { code: -1, msg: refusalMessage(ctx, error) })
}

function refusalMessage(ctx: HttpContext, error: unknown): string {
  if (error instanceof BusinessError) return error.message
  if (error instanceof vineErrors.E_VALIDATION_ERROR) {
    const [first] = error.messages as { message: string }[]
    return first?.message ?? 'Parameter error'
  }
  if (error instanceof limiterErrors.E_TOO_MANY_REQUESTS) {
    for (const [name, value] of Object.entries(error.getDefaultHeaders()))
      ctx.response.header(name, value)
    return `Too many requests: try again in ${error.response.availableIn} seconds`
  }
  if (isDatabaseUnavailable(error)) {
    ctx.logger.warn(
      { err: { message: (error as Error).message } },
      'database unavailable: compat answered code -1'
    )
    ctx.response.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
    return DATABASE_UNAVAILABLE_MESSAGE
  }
  ctx.logger.error({ err: error }, 'compat EPay endpoint failed')
  return 'System error'
}
