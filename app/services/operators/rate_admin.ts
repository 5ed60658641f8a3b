import { inject } from '@adonisjs/core'
import Rate from '#models/rate'
import { AuditLog } from '#services/audit/audit_log'
import { snapshot } from '#services/audit/audit_snapshots'
import { OperatorError } from '#support/operator_error'
import configCache from '#services/config_cache'
import { MarkupError, isMarkup, parseMarkup } from '#rates/rate_markup'
import {
  Decimal,
  fractionDigits,
  isDecimalLiteral,
  significantDigits,
  toDecimalString,
} from '#support/money'

/** Fixed exchange rates (1 token = rate fiat) as operators manage them. */
@inject()
export class RateAdmin {
  constructor(protected audit: AuditLog) {}

  list() {
    return Rate.query().orderBy('token').orderBy('fiat')
  }

  /**
   * Sets (or replaces) the fixed rate of a token in a fiat currency, or,
   * written as a markup (`~1.02`, `+0.3`, `-0.2`) and unless `fixedOnly`,
   * the markup on its live rate.
   */
  async set(token: string, fiat: string, rate: string, options: { fixedOnly?: boolean } = {}) {
    const symbol = token.toUpperCase()
    const currency = fiat.toUpperCase()
    if (!/^[A-Z0-9]{1,16}$/.test(symbol))
      throw new OperatorError('The token must be a symbol such as USDT')
    if (!/^[A-Z]{3,10}$/.test(currency))
      throw new OperatorError('The fiat must be a currency code such as CNY')
    const text = rate.trim()
    if (isMarkup(text) && !options.fixedOnly) return this.#setMarkup(symbol, currency, text)
    if (!isDecimalLiteral(text) || !new Decimal(text).gt(0)) {
      throw new OperatorError(
        `The rate must be a positive decimal number (1 ${symbol} = RATE ${currency})`
      )
    }
    if (fractionDigits(toDecimalString(text)) > 12 || significantDigits(text) > 15) {
      throw new OperatorError('The rate may have at most 12 decimals and 15 significant digits')
    }
    const value = toDecimalString(text)
    const existing = await Rate.query().where('token', symbol).where('fiat', currency).first()
    const before = existing ? snapshot.rate(existing) : null
    return this.audit.change(
      async (trx) => {
        if (!existing)
          return Rate.create(
            { token: symbol, fiat: currency, rate: value, source: 'fixed' },
            { client: trx }
          )
        existing.useTransaction(trx)
        existing.rate = value
        existing.source = 'fixed'
        await existing.save()
        return existing
      },
      (saved) => ({
        action: 'rate.set',
        subjectType: 'rate',
        subjectId: `${symbol}/${currency}`,
        before,
        after: snapshot.rate(saved),
      })
    )
  }

  /**
   * A markup on the live rate (`~1.02`, `+0.3`, `-0.2`): the pair follows the
   * live sources again (a fixed rate of the pair is removed) with the
   * markup applied.
   */
  async #setMarkup(symbol: string, currency: string, text: string) {
    let markup
    try {
      markup = parseMarkup(text)
    } catch (error) {
      if (error instanceof MarkupError) throw new OperatorError(error.message)
      throw error
    }
    const existing = await Rate.query().where('token', symbol).where('fiat', currency).first()
    const before = existing ? snapshot.rate(existing) : null
    const now = Date.now()
    const saved = await this.audit.change(
      async (trx) => {
        if (existing) {
          existing.useTransaction(trx)
          await existing.delete()
        }
        await trx
          .knexQuery()
          .table('rate_markups')
          .insert({
            token: symbol,
            fiat: currency,
            markup: markup.text,
            created_at: now,
            updated_at: now,
          })
          .onConflict(['token', 'fiat'])
          .merge(['markup', 'updated_at'])
        return { token: symbol, fiat: currency, rate: markup.text }
      },
      (result) => ({
        action: 'rate.set',
        subjectType: 'rate',
        subjectId: `${symbol}/${currency}`,
        before,
        after: { token: result.token, fiat: result.fiat, markup: result.rate },
      })
    )
    configCache.invalidate()
    return { ...saved, live: true as const }
  }
}
