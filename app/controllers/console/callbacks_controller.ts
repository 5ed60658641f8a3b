import { inject } from '@adonisjs/core'
import type { HttpContext } from '@adonisjs/core/http'
import callbackOutboxQuery, {
  CALLBACK_LIST_STATUSES,
} from '#services/console/callback_outbox_query'
import {
  CallbackAdmin,
  REDELIVER_BATCH_CAP,
  batchMessage,
} from '#services/operators/callback_admin'
import { OrderAdmin } from '#services/operators/order_admin'
import { callbackListQuery, type CallbackListQuery } from '#validators/console_lists'
import { ConsoleNotFound } from '#console/console_errors'
import { adminUrl } from '#console/console_paths'
import { utcMinute, utcSecond } from '#services/console/console_format'
import { OperatorError } from '#support/operator_error'

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
@inject()
export default class CallbacksController {
  constructor(
    protected callbacks: CallbackAdmin,
    protected orders: OrderAdmin
  ) {}

  async index({ request, view }: HttpContext) {
    const query = await callbackListQuery(request.qs())
    const [page, counts] = await Promise.all([
      callbackOutboxQuery.list(query.filters, { after: query.after }),
      callbackOutboxQuery.counts(),
    ])
    const filtered = Object.values(query.form).some((value) => value !== '')
    return view.render('console/callbacks/index', {
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

  async show({ params, view }: HttpContext) {
    const callback = await this.#find(params.id)
    const attempts = await callbackOutboxQuery.attempts(callback.id)
    return view.render('console/callbacks/show', {
      utcMinute,
      utcSecond,
      callback,
      attempts,
    })
  }

  /** One callback: OrderAdmin.resendCallback (`callbacks:redeliver`), which waits for the merchant's answer. */
  async redeliver({ params, session, response }: HttpContext) {
    const callback = await this.#find(params.id)
    const { report, attempt, order } = await this.orders.resendCallback(callback.tradeId)
    if (attempt?.acknowledged) {
      session.flash(
        'success',
        `Sent again: the merchant acknowledged it (HTTP ${attempt.httpStatus} in ${attempt.durationMs} ms).`
      )
    } else if (attempt) {
      session.flash(
        'warning',
        `Sent again but not acknowledged: ${attempt.error}. It will be retried (status: ${order.callbackStatus}).`
      )
    } else if (report.held > 0) {
      session.flash(
        'warning',
        "Queued again, but held: its callback format's plugin is turned off."
      )
    } else {
      session.flash('info', 'Queued again; another worker is sending it now.')
    }
    return response.redirect(adminUrl(`/callbacks/${callback.id}`))
  }

  async redeliverBatch({ request, session, response }: HttpContext) {
    const query = await callbackListQuery(
      request.only(['status', 'pid', 'network', 'from', 'to', 'q'])
    )
    // A filter that could not be read would widen the batch: refused instead.
    if (query.invalidDays.length > 0) {
      throw new OperatorError(
        `No such day: ${query.invalidDays.join(', ')}. Nothing was sent again.`
      )
    }
    const result = await this.callbacks.redeliverMatching(query.filters)
    session.flash(result.queued > 0 ? 'success' : 'info', `${batchMessage(result)}.`)
    return response.redirect(listUrl(query.form))
  }

  async #find(id: string) {
    const callback = /^\d{1,18}$/.test(id) ? await callbackOutboxQuery.find(Number(id)) : null
    if (!callback) throw new ConsoleNotFound('No callback has this id.')
    return callback
  }
}
