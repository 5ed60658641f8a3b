import type { HttpContext } from '@adonisjs/core/http'
import { Exception } from '@adonisjs/core/exceptions'
import { errors as vineErrors } from '@vinejs/vine'
import { errors as limiterErrors } from '@adonisjs/limiter'
import { OperatorError } from '#support/cli/operator_error'
import { adminUrl, safeAdminReturn } from '#admin/admin_paths'
import { flashInputWithoutSecrets } from '#admin/admin_session'
import { applyAdminHeaders } from '#middleware/admin_headers_middleware'
import { applyAdminLocale } from '#admin/admin_locale'
import { keyedText, refusalText } from '#admin/refusal_text'
import type { Refusal } from '#support/cli/operator_error'
import type { I18n } from '@adonisjs/i18n'
import {
  DATABASE_RETRY_AFTER_SECONDS,
  isDatabaseUnavailable,
} from '#support/database/database_unavailable'

/** A console action the signed-in user may not take (a viewer's write): HTTP 403. */
export class AdminForbidden extends Exception {
  static status = 403
  static code = 'E_CONSOLE_FORBIDDEN'
}

/** A console page or record that does not exist: HTTP 404 with the console's page. */
export class AdminNotFound extends Exception {
  static status = 404
  static code = 'E_CONSOLE_NOT_FOUND'
}

type ErrorPage = { status: number; title: string; message: string; retryAfter?: number }

/** A field's message of a refused form; a service's refusal (api_key_validators.ts) keeps its key. */
type FieldMessage = { field: string; message: string; meta?: { refusal?: Refusal } }

/** A field's message in the admin's language when it is a keyed refusal, else as Vine wrote it. */
function fieldText(i18n: I18n, { message, meta }: FieldMessage): string {
  return keyedText(i18n, meta?.refusal, message)
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** Where a refused form goes back to: the form's `_back`, else the console's home. */
export function formReturnUrl(ctx: HttpContext): string {
  return safeAdminReturn(ctx.request.input('_back')) ?? adminUrl('/')
}

/**
 * Console errors as the console shows them. A refusal of a form (a rule of
 * a service: OperatorError, or invalid fields) goes back to the form with
 * the message and the fields kept (secrets never); anything else is a page
 * of the console's layout with the status, in plain words. Returns false
 * when the error is not the console's to render.
 */
export async function renderAdminError(error: unknown, ctx: HttpContext): Promise<void> {
  const hasSession = Boolean((ctx as { session?: unknown }).session)
  const isWrite = WRITES.has(ctx.request.method())
  // Console requests have it (applyAdminHeaders); an error raised before them gets the browser's.
  const i18n = (ctx as { i18n?: HttpContext['i18n'] }).i18n ?? applyAdminLocale(ctx)

  if (hasSession && isWrite && error instanceof OperatorError) {
    flashInputWithoutSecrets(ctx)
    ctx.session.flash('error', refusalText(i18n, error))
    return ctx.response.redirect(formReturnUrl(ctx))
  }
  if (hasSession && isWrite && error instanceof vineErrors.E_VALIDATION_ERROR) {
    flashInputWithoutSecrets(ctx)
    const messages = error.messages as FieldMessage[]
    const bag: Record<string, string[]> = {}
    for (const message of messages) (bag[message.field] ??= []).push(fieldText(i18n, message))
    ctx.session.flash('inputErrorsBag', bag)
    ctx.session.flash('error', i18n.t('admin.errors.fields'))
    return ctx.response.redirect(formReturnUrl(ctx))
  }

  applyAdminHeaders(ctx)
  // The signed-in admin's language (applyAdminHeaders sets the browser's when it runs first).
  const user = hasSession ? ctx.auth?.user : undefined
  const page = errorPage(error, user?.locale ? applyAdminLocale(ctx, user.locale) : ctx.i18n)
  if (page.retryAfter !== undefined) ctx.response.header('retry-after', String(page.retryAfter))
  ctx.response.status(page.status)
  try {
    return ctx.response.send(
      await ctx.view.render('admin/errors/status', {
        ...page,
        back: formReturnUrl(ctx),
        requestId: ctx.request.id() ?? null,
        signedIn: hasSession && Boolean(ctx.auth?.user),
      })
    )
  } catch {
    // The page itself failed (e.g. the database is down): plain words still.
    return ctx.response
      .header('content-type', 'text/plain; charset=utf-8')
      .send(`${page.title}\n\n${page.message}\n`)
  }
}

function errorPage(error: unknown, i18n: HttpContext['i18n']): ErrorPage {
  if (error instanceof AdminForbidden) {
    return { status: 403, title: i18n.t('admin.errors.forbidden'), message: error.message }
  }
  if (error instanceof AdminNotFound)
    return { status: 404, title: i18n.t('admin.errors.not_found'), message: error.message }
  if (error instanceof OperatorError)
    return { status: 400, title: i18n.t('admin.errors.refused'), message: refusalText(i18n, error) }
  if (error instanceof vineErrors.E_VALIDATION_ERROR) {
    const [message] = error.messages as FieldMessage[]
    const first = message ? fieldText(i18n, message) : i18n.t('admin.errors.invalid_message')
    return { status: 400, title: i18n.t('admin.errors.invalid'), message: first }
  }
  if (error instanceof limiterErrors.E_TOO_MANY_REQUESTS) {
    const seconds = Math.max(1, Math.ceil(error.response.availableIn))
    return {
      status: 429,
      title: i18n.t('admin.errors.throttled'),
      message: i18n.t('admin.errors.throttled_message', { seconds: String(seconds) }),
      retryAfter: seconds,
    }
  }
  if (isDatabaseUnavailable(error)) {
    return {
      status: 503,
      title: i18n.t('admin.errors.database'),
      message: i18n.t('admin.errors.database_message'),
      retryAfter: DATABASE_RETRY_AFTER_SECONDS,
    }
  }
  const code = (error as { code?: string }).code
  const status = Number((error as { status?: number }).status)
  if (code === 'E_BAD_CSRF_TOKEN') {
    return {
      status: 403,
      title: i18n.t('admin.errors.csrf'),
      message: i18n.t('admin.errors.csrf_message'),
    }
  }
  if (code === 'E_ROUTE_NOT_FOUND' || status === 404) {
    return {
      status: 404,
      title: i18n.t('admin.errors.no_page'),
      message: i18n.t('admin.errors.no_page_message'),
    }
  }
  if (code === 'E_REQUEST_ENTITY_TOO_LARGE' || status === 413) {
    return {
      status: 413,
      title: i18n.t('admin.errors.too_large'),
      message: i18n.t('admin.errors.too_large_message'),
    }
  }
  if (status >= 400 && status < 500) {
    return {
      status,
      title: i18n.t('admin.errors.refused'),
      message: (error as Error).message || i18n.t('admin.errors.refused_message'),
    }
  }
  return {
    status: 500,
    title: i18n.t('admin.errors.fault'),
    message: i18n.t('admin.errors.fault_message'),
  }
}
