import type { HttpContext } from '@adonisjs/core/http'
import db from '@adonisjs/lucid/services/db'
import { AuditLog } from '#services/audit/audit_log'
import { RateAdmin } from '#services/operators/rate_admin'
import { RatesOverviewQuery } from '#services/console/rates_overview'
import configCache from '#services/config_cache'
import { isMarkup } from '#rates/rate_markup'
import { adminUrl } from '#console/console_paths'
import { flashInputWithoutSecrets } from '#console/console_session'
import { OperatorError } from '#support/operator_error'

/** The markup field of a pair's form: one name per pair, so that an error shows at that pair only. */
export function markupField(token: string, fiat: string): string {
  return `markup_${token}_${fiat}`
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
    return view.render('console/rates/index', { ...overview, markupField })
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
    const field = markupField(token, fiat)
    const value = String(request.input(field, '')).trim()
    try {
      if (request.input('clear')) {
        await this.#clear(token, fiat)
        session.flash(
          'success',
          `Markup of ${token}/${fiat} cleared: the live rate applies as it is.`
        )
      } else {
        if (!isMarkup(value))
          throw new OperatorError(
            value === ''
              ? 'Write a markup such as ~1.02, +0.3 or -0.2 (or use Clear to remove it).'
              : 'A markup starts with ~, + or - (~1.02, +0.3, -0.2); a fixed rate is set under Settings → Rates.'
          )
        const saved = await new RateAdmin(this.#audit).set(token, fiat, value)
        session.flash('success', `Markup of ${token}/${fiat} set to ${saved.rate}.`)
      }
    } catch (error) {
      if (!(error instanceof OperatorError)) throw error
      flashInputWithoutSecrets(ctx)
      session.flash('inputErrorsBag', { [field]: [error.message] })
      session.flash('error', `Nothing changed: the markup of ${token}/${fiat} was refused.`)
    }
    return response.redirect(back)
  }

  async #clear(token: string, fiat: string) {
    const row = await db.from('rate_markups').where('token', token).where('fiat', fiat).first()
    if (!row) throw new OperatorError('This pair has no markup (any more): nothing to clear.')
    await this.#audit.change(
      async (trx) => {
        const deleted = await trx.from('rate_markups').where('id', row.id).delete()
        if (Number(deleted) !== 1) throw new OperatorError('The markup was cleared meanwhile.')
      },
      () => ({
        action: 'rate.markup_clear',
        subjectType: 'rate',
        subjectId: `${token}/${fiat}`,
        before: { token, fiat, markup: row.markup },
        after: null,
      })
    )
    configCache.invalidate()
  }
}
