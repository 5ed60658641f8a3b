import type { HttpContext } from '@adonisjs/core/http'
import auditLog from '#services/audit/audit_log'
import { RateAdmin } from '#services/operators/rate_admin'
import { RatesOverviewQuery } from '#services/admin/rates_overview'
import { isMarkup } from '#rates/rate_markup'
import { adminUrl } from '#admin/admin_paths'
import { refusalText } from '#admin/refusal_text'
import { flashInputWithoutSecrets } from '#admin/admin_session'
import { OperatorError } from '#support/cli/operator_error'

/** The markup field of a pair's form: one name per pair, so that an error shows at that pair only. */
export function markupField(token: string, fiat: string): string {
  return `markup_${token}_${fiat}`
}

/** The markup field of a pair's per-key form. */
export function keyMarkupField(token: string, fiat: string): string {
  return `key_markup_${token}_${fiat}`
}

/**
 * The console's Rates page: each live pair (rate, state, markup, sources,
 * their last answers, 30 days of rate and paid volume) and the fixed rates.
 * Admins set a pair's markup here (through RateAdmin, audited) or clear it.
 */
export default class RatesController {
  #audit = auditLog

  async index({ view, i18n }: HttpContext) {
    const overview = await new RatesOverviewQuery().load(Date.now(), i18n)
    return view.render('admin/rates/index', { ...overview, markupField, keyMarkupField })
  }

  async markup(ctx: HttpContext) {
    const { request, session, response, i18n } = ctx
    const token = String(request.input('token', '')).toUpperCase()
    const fiat = String(request.input('fiat', '')).toUpperCase()
    const back = `${adminUrl('/rates')}#pair-${token}_${fiat}`.replace(/[^\w/#-]/g, '')
    if (!/^[A-Z0-9]{1,16}$/.test(token) || !/^[A-Z]{3,10}$/.test(fiat)) {
      session.flash('error', i18n.t('admin.rates.flash.not_a_pair'))
      return response.redirect(adminUrl('/rates'))
    }
    const pid = String(request.input('api_key', '')).trim() || null
    const field = pid ? keyMarkupField(token, fiat) : markupField(token, fiat)
    const value = String(request.input(field, '')).trim()
    const pair = `${token}/${fiat}`
    try {
      const admin = new RateAdmin(this.#audit)
      if (request.input('clear')) {
        await admin.clearMarkup(token, fiat, pid)
        session.flash(
          'success',
          pid
            ? i18n.t('admin.rates.flash.key_cleared', { pair, pid })
            : i18n.t('admin.rates.flash.cleared', { pair })
        )
      } else {
        if (!isMarkup(value))
          throw new OperatorError(
            i18n.t(
              value === '' ? 'admin.rates.flash.markup_missing' : 'admin.rates.flash.markup_invalid'
            )
          )
        const saved = await admin.set(token, fiat, value, { apiKeyPid: pid })
        const message = pid
          ? i18n.t('admin.rates.flash.key_set', { pair, pid, rate: saved.rate })
          : i18n.t('admin.rates.flash.set', { pair, rate: saved.rate })
        session.flash(
          'success',
          'shadowedByFixed' in saved && saved.shadowedByFixed
            ? i18n.t('admin.rates.flash.shadowed', { message, fixed: saved.shadowedByFixed })
            : message
        )
      }
    } catch (error) {
      if (!(error instanceof OperatorError)) throw error
      flashInputWithoutSecrets(ctx)
      session.flash('inputErrorsBag', { [field]: [refusalText(i18n, error)] })
      session.flash(
        'error',
        pid
          ? i18n.t('admin.rates.flash.key_refused', { pair, pid })
          : i18n.t('admin.rates.flash.refused', { pair })
      )
    }
    return response.redirect(back)
  }
}
