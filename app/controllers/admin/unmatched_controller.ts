import type { HttpContext } from '@adonisjs/core/http'
import vine from '@vinejs/vine'
import unmatchedPaymentAdmin, {
  UNMATCHED_KINDS,
  UNMATCHED_STATES,
  assignableKind,
} from '#services/operators/unmatched_payment_admin'
import {
  assignForm,
  dismissForm,
  unmatchedListQuery,
  type UnmatchedListQuery,
} from '#validators/admin_lists'
import { AdminNotFound } from '#admin/admin_errors'
import { adminUrl } from '#admin/admin_paths'
import { utcMinute, utcSecond } from '#services/admin/admin_format'
import { kindChoices, presentUnmatched } from '#services/admin/unmatched_presenter'
import type { I18n } from '@adonisjs/i18n'

/** The list's kind filter (blank: any kind); an unknown kind is refused like an unknown state. */
const kindQuery = vine.compile(vine.object({ kind: vine.enum(UNMATCHED_KINDS).optional() }))

type ListForm = UnmatchedListQuery['form'] & { kind: string }

function listUrl(form: ListForm, after: string | null = null): string {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(form))
    if (value !== '' && !(name === 'state' && value === 'open')) query.set(name, value)
  if (after) query.set('after', after)
  const text = query.toString()
  return adminUrl('/unmatched') + (text ? `?${text}` : '')
}

/** The trade_id a reason names ("… order AbC… ended …"), to suggest it in the assign form. */
function suggestedTradeId(reason: string): string {
  return /\border ([0-9A-Za-z]{22})\b/.exec(reason)?.[1] ?? ''
}

/**
 * Incoming transfers that paid no order, with the reason; an admin assigns
 * one to the order it pays (the checks of mark-paid, the one payment path)
 * or dismisses it with a note. Both through UnmatchedPaymentAdmin, audited.
 */
export default class UnmatchedController {
  constructor(protected unmatched = unmatchedPaymentAdmin) {}

  async index({ request, view, i18n }: HttpContext) {
    const query = await unmatchedListQuery(request.qs())
    const given = request.qs().kind
    const { kind } = await kindQuery.validate({
      kind: typeof given === 'string' && given.trim() !== '' ? given.trim() : undefined,
    })
    const form: ListForm = { ...query.form, kind: kind ?? '' }
    const [page, openCount] = await Promise.all([
      this.unmatched.list({ ...query.filters, kind }, { after: query.after }),
      this.unmatched.openCount(),
    ])
    return view.render('admin/unmatched/index', {
      utcMinute,
      utcSecond,
      rows: page.rows.map((row) => presentUnmatched(row, i18n)),
      openCount,
      form,
      filtered:
        form.state !== 'open' || form.network !== '' || form.token !== '' || form.kind !== '',
      states: [...UNMATCHED_STATES, 'all'],
      kinds: kindChoices(i18n),
      firstUrl: query.after ? listUrl(form) : null,
      nextUrl: page.next ? listUrl(form, page.next) : null,
    })
  }

  async show({ params, view, i18n }: HttpContext) {
    const payment = presentUnmatched(await this.#find(params.id, i18n), i18n)
    return view.render('admin/unmatched/show', {
      utcMinute,
      utcSecond,
      payment,
      suggestion: payment.assignable ? suggestedTradeId(payment.reason) : '',
    })
  }

  async assign({ params, request, session, response, i18n }: HttpContext) {
    const payment = await this.#find(params.id, i18n)
    const { trade_id: tradeId } = await request.validateUsing(assignForm)
    const result = await this.unmatched.assign(payment.id, tradeId)
    const values = { tradeId: result.order.tradeId, reference: result.reference }
    session.flash(
      'success',
      result.notified
        ? i18n.t('admin.unmatched.flash.paid_queued', {
            ...values,
            notified: result.notified.tradeId,
          })
        : i18n.t('admin.unmatched.flash.paid', values)
    )
    return response.redirect(adminUrl(`/unmatched/${payment.id}`))
  }

  async dismiss({ params, request, session, response, i18n }: HttpContext) {
    const payment = await this.#find(params.id, i18n)
    const { note } = await request.validateUsing(dismissForm)
    await this.unmatched.dismiss(payment.id, note)
    session.flash(
      'success',
      assignableKind(payment.kind)
        ? i18n.t('admin.unmatched.flash.dismissed', { id: payment.id })
        : i18n.t('admin.unmatched.flash.handled', { id: payment.id })
    )
    return response.redirect(adminUrl(`/unmatched/${payment.id}`))
  }

  async #find(id: string, i18n: I18n) {
    const payment = /^\d{1,18}$/.test(id) ? await this.unmatched.find(Number(id)) : null
    if (!payment) throw new AdminNotFound(i18n.t('admin.unmatched.flash.not_found'))
    return payment
  }
}
