import type { HttpContext } from '@adonisjs/core/http'
import { AuditLog } from '#services/audit/audit_log'
import { RateAdmin } from '#services/operators/rate_admin'
import { RatesOverviewQuery } from '#services/console/rates_overview'
import { isMarkup } from '#rates/rate_markup'
import { adminUrl } from '#console/console_paths'
import { flashInputWithoutSecrets } from '#console/console_session'
import { OperatorError } from '#support/operator_error'

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
  #audit = new AuditLog()

  async index({ view }: HttpContext) {
    const overview = await new RatesOverviewQuery().load()
    return view.render('console/rates/index', { ...overview, markupField, keyMarkupField })
  }

  async markup(ctx: HttpContext) {
    const { request, session, response } = ctx
    const token = String(request.input('token', '')).toUpperCase()
    const fiat = String(request.input('fiat', '')).toUpperCase()
    const back = `${adminUrl('/rates')}#pair-${token}_${fiat}`.replace(/[^\w/#-]/g, '')
    if (!/^[A-Z0-9]{1,16}$/.test(token) || !/^[A-Z]{3,10}$/.test(fiat)) {
      session.flash('error', 'Nothing changed: that is not a pair this page shows.')
      return response.redirect(adminUrl('/rates'))
    }
    const pid = String(request.input('api_key', '')).trim() || null
    const field = pid ? keyMarkupField(token, fiat) : markupField(token, fiat)
    const value = String(request.input(field, '')).trim()
    const whose = pid ? ` for API key ${pid}` : ''
    try {
      const admin = new RateAdmin(this.#audit)
      if (request.input('clear')) {
        await admin.clearMarkup(token, fiat, pid)
        session.flash(
          'success',
          pid
            ? `Markup of ${token}/${fiat} for API key ${pid} cleared: its orders follow the pair's markup.`
            : `Markup of ${token}/${fiat} cleared: the live rate applies as it is.`
        )
      } else {
        if (!isMarkup(value))
          throw new OperatorError(
            value === ''
              ? 'Write a markup such as ~1.02, +0.3 or -0.2 (or use Clear to remove it).'
              : 'A markup starts with ~, + or - (~1.02, +0.3, -0.2); a fixed rate is set under Settings → Rates.'
          )
        const saved = await admin.set(token, fiat, value, { apiKeyPid: pid })
        const shadow =
          'shadowedByFixed' in saved && saved.shadowedByFixed
            ? ` The pair has a fixed rate (${saved.shadowedByFixed}), which prices every key's orders until it is removed.`
            : ''
        session.flash(
          'success',
          `Markup of ${token}/${fiat}${whose} set to ${saved.rate}.${shadow}`
        )
      }
    } catch (error) {
      if (!(error instanceof OperatorError)) throw error
      flashInputWithoutSecrets(ctx)
      session.flash('inputErrorsBag', { [field]: [error.message] })
      session.flash('error', `Nothing changed: the markup of ${token}/${fiat}${whose} was refused.`)
    }
    return response.redirect(back)
  }
}
