import type { HttpContext } from '@adonisjs/core/http'
import callbackOutboxQuery, { CALLBACK_LIST_STATUSES } from '#services/admin/callback_outbox_query'
import callbackAdmin, { REDELIVER_BATCH_CAP } from '#services/operators/callback_admin'
import orderAdmin from '#services/operators/order_admin'
import { callbackListQuery, type CallbackListQuery } from '#validators/admin_lists'
import { AdminNotFound } from '#admin/admin_errors'
import { adminUrl } from '#admin/admin_paths'
import { utcMinute, utcSecond } from '#services/admin/admin_format'
import { OperatorError } from '#support/cli/operator_error'
import type { I18n } from '@adonisjs/i18n'

/** The list's URL with these filters (empty ones left out) and page cursor. */
function listUrl(form: CallbackListQuery['form'], after: string | null = null): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(form)) if (value !== '') query.set(name, value)
  if (after) query.set('after', after)
  const text = query.toString()
  return adminUrl('/callbacks') + (text ? `?${text}` : '')
}

/**
 * The merchant callbacks outbox: a filtered list (keyset pages), each
 * callback with its attempts, and redelivery of one (OrderAdmin, as
 * `callbacks:redeliver`) or of a filtered batch (CallbackAdmin), audited.
 */
export default class CallbacksController {
  constructor(
    protected callbacks = callbackAdmin,
    protected orders = orderAdmin
  ) {}

  async index({ request, view }: HttpContext) {
    const query = await callbackListQuery(request.qs())
    const [page, counts] = await Promise.all([
      callbackOutboxQuery.list(query.filters, { after: query.after }),
      callbackOutboxQuery.counts(),
    ])
    const filtered = Object.values(query.form).some((value) => value !== '')
    return view.render('admin/callbacks/index', {
      utcMinute,
      utcSecond,
      page,
      counts,
      form: query.form,
      filtered,
      invalidDays: query.invalidDays,
      statuses: CALLBACK_LIST_STATUSES,
      cap: REDELIVER_BATCH_CAP,
      tabUrl: (status: string) => listUrl({ ...query.form, status }),
      firstUrl: query.after ? listUrl(query.form) : null,
      nextUrl: page.next ? listUrl(query.form, page.next) : null,
    })
  }

  async show({ params, view, i18n }: HttpContext) {
    const callback = await this.#find(params.id, i18n)
    const attempts = await callbackOutboxQuery.attempts(callback.id)
    return view.render('admin/callbacks/show', {
      utcMinute,
      utcSecond,
      callback,
      attempts,
    })
  }

  /** One callback: OrderAdmin.resendCallback (`callbacks:redeliver`), which waits for the merchant's answer. */
  async redeliver({ params, session, response, i18n }: HttpContext) {
    const callback = await this.#find(params.id, i18n)
    const { report, attempt, order } = await this.orders.resendCallback(callback.tradeId)
    if (attempt?.acknowledged) {
      session.flash(
        'success',
        i18n.t('admin.callbacks.flash.acknowledged', {
          status: attempt.httpStatus,
          ms: attempt.durationMs,
        })
      )
    } else if (attempt) {
      session.flash(
        'warning',
        i18n.t('admin.callbacks.flash.not_acknowledged', {
          error: attempt.error,
          status: i18n.t(
            'admin.callbacks.status.' + order.callbackStatus,
            {},
            order.callbackStatus
          ),
        })
      )
    } else if (report.held > 0) {
      session.flash('warning', i18n.t('admin.callbacks.flash.held'))
    } else {
      session.flash('info', i18n.t('admin.callbacks.flash.busy'))
    }
    return response.redirect(adminUrl(`/callbacks/${callback.id}`))
  }

  async redeliverBatch({ request, session, response, i18n }: HttpContext) {
    const query = await callbackListQuery(
      request.only(['status', 'pid', 'network', 'from', 'to', 'q'])
    )
    // A filter that could not be read would widen the batch: refused instead.
    if (query.invalidDays.length > 0) {
      throw new OperatorError(
        i18n.t('admin.callbacks.flash.batch_invalid_days', {
          days: query.invalidDays.join(', '),
        })
      )
    }
    const result = await this.callbacks.redeliverMatching(query.filters)
    // batchMessage (CallbackAdmin) says the same in English: the admin's words here.
    session.flash(
      result.queued > 0 ? 'success' : 'info',
      i18n.t('admin.callbacks.flash.batch', {
        queued: result.queued,
        capped: result.capped ? 'yes' : 'no',
        cap: result.cap,
        held: result.held,
      })
    )
    return response.redirect(listUrl(query.form))
  }

  async #find(id: string, i18n: I18n) {
    const callback = /^\d{1,18}$/.test(id) ? await callbackOutboxQuery.find(Number(id)) : null
    if (!callback) throw new AdminNotFound(i18n.t('admin.callbacks.flash.not_found'))
    return callback
  }
}
