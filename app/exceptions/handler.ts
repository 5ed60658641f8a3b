import app from '@adonisjs/core/services/app'
import { ExceptionHandler, type HttpContext } from '@adonisjs/core/http'
import { errors as vineErrors } from '@vinejs/vine'
import { errors as limiterErrors } from '@adonisjs/limiter'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import { envelope } from '#support/http/envelope'
import pluginRegistry from '#plugin_host/plugin_registry'
import { isAdminPath } from '#admin/admin_paths'
import { OperatorError } from '#support/cli/operator_error'
import { renderAdminError } from '#admin/admin_errors'
import {
  DATABASE_RETRY_AFTER_SECONDS,
  DATABASE_UNAVAILABLE_MESSAGE,
  isDatabaseUnavailable,
} from '#support/database/database_unavailable'

type Rendered = { httpStatus: number; statusCode: number; message: string; data: unknown }

/**
 * Turns every error into the spec's envelope. Bad input is always a 4xx
 * with a message saying what was wrong; only a fault of our own is a 500,
 * and its details go to the log (with the request id), not to the client.
 */
export default class HttpExceptionHandler extends ExceptionHandler {
  protected debug = !app.inProduction

  protected ignoreStatuses = [400, 401, 403, 404, 413, 422, 429]

  /** A refusal of an operator's action (the console shows it) is not a fault to log. */
  protected shouldReport(error: Parameters<ExceptionHandler['shouldReport']>[0]) {
    if (error instanceof OperatorError) return false
    // Logged once per request as a warning below, without the stack: an
    // outage must not flood the log with identical traces.
    if (isDatabaseUnavailable(error)) return false
    return super.shouldReport(error)
  }

  async handle(error: unknown, ctx: HttpContext) {
    if (isDatabaseUnavailable(error)) {
      ctx.logger.warn(
        { err: { message: (error as Error).message, code: (error as { code?: unknown }).code } },
        'database unavailable: answered 503'
      )
      ctx.response.header('retry-after', String(DATABASE_RETRY_AFTER_SECONDS))
    }
    // The admin console answers in HTML pages of its own layout.
    if (isAdminPath(ctx.request.url())) return renderAdminError(error, ctx)
    const rendered = this.#render(error)
    if (error instanceof limiterErrors.E_TOO_MANY_REQUESTS) {
      const headers = error.getDefaultHeaders()
      for (const [name, value] of Object.entries(headers)) ctx.response.header(name, value)
    }
    if (pluginRegistry.answersPlainText(ctx.request.url())) {
      // Endpoints called by machines (a plugin declares them), e.g. an
      // unparsable provider notification: the provider expects "fail". A body too large (413) or too many requests (429) keep
      // their status, so that the cause is visible.
      const status = [413, 429, 503].includes(rendered.httpStatus)
        ? rendered.httpStatus
        : rendered.httpStatus >= 500
          ? 500
          : 400
      return ctx.response
        .status(status)
        .header('content-type', 'text/plain; charset=utf-8')
        .send('fail')
    }
    return ctx.response
      .status(rendered.httpStatus)
      .json(envelope(ctx, rendered.statusCode, rendered.message, rendered.data))
  }

  #render(error: unknown): Rendered {
    // The database is down or its pool exhausted: try again later (the
    // envelope keeps the spec's system-error code, 400).
    if (isDatabaseUnavailable(error)) {
      return {
        httpStatus: 503,
        statusCode: ErrorCode.PARAMETER,
        message: DATABASE_UNAVAILABLE_MESSAGE,
        data: null,
      }
    }
    if (error instanceof BusinessError) {
      return {
        httpStatus: error.status,
        statusCode: error.businessCode,
        message: error.message,
        data: error.data,
      }
    }

    if (error instanceof vineErrors.E_VALIDATION_ERROR) {
      const messages = error.messages as { field: string; message: string; rule: string }[]
      return {
        httpStatus: 400,
        statusCode: ErrorCode.PARAMETER,
        message: messages[0]?.message ?? 'Parameter error',
        data: { errors: messages.map(({ field, message, rule }) => ({ field, message, rule })) },
      }
    }

    if (error instanceof limiterErrors.E_TOO_MANY_REQUESTS) {
      return { httpStatus: 429, statusCode: 429, message: 'Too many requests', data: null }
    }

    const httpError = this.toHttpError(error)
    const code = httpError.code

    if (code === 'E_ROUTE_NOT_FOUND') {
      return { httpStatus: 404, statusCode: 404, message: 'Not found', data: null }
    }
    if (code === 'E_REQUEST_ENTITY_TOO_LARGE') {
      return { httpStatus: 413, statusCode: 413, message: 'Request body too large', data: null }
    }
    // Malformed JSON (SyntaxError from the body parser) or a JSON body that
    // is not an object.
    if (
      error instanceof SyntaxError ||
      (httpError.status === 422 && /JSON/i.test(httpError.message))
    ) {
      return {
        httpStatus: 400,
        statusCode: ErrorCode.UNPARSABLE,
        message: 'Parameters cannot be parsed: the body is not a valid JSON object',
        data: null,
      }
    }
    if (httpError.status >= 400 && httpError.status < 500) {
      return {
        httpStatus: httpError.status,
        statusCode: httpError.status === 401 ? 401 : 400,
        message: httpError.message,
        data: null,
      }
    }

    // Reported (logged with the request id) by the parent's report().
    return { httpStatus: 500, statusCode: ErrorCode.PARAMETER, message: 'System error', data: null }
  }
}
