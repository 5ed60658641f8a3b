import Rate from '#models/rate'
import { OperatorError } from '#support/operator_error'
import { Decimal, fractionDigits, isDecimalLiteral, significantDigits, toDecimalString } from '#support/money'

/** Fixed exchange rates (1 token = rate fiat) as operators manage them. */
export class RateAdmin {
  list() {
    return Rate.query().orderBy('token').orderBy('fiat')
  }

  /** Sets (or replaces) the fixed rate of a token in a fiat currency. */
  async set(token: string, fiat: string, rate: string) {
    const symbol = token.toUpperCase()
    const currency = fiat.toUpperCase()
    if (!/^[A-Z0-9]{1,16}$/.test(symbol)) throw new OperatorError('The token must be a symbol such as USDT')
    if (!/^[A-Z]{3,10}$/.test(currency)) throw new OperatorError('The fiat must be a currency code such as CNY')
    const text = rate.trim()
    if (!isDecimalLiteral(text) || !new Decimal(text).gt(0)) {
      throw new OperatorError(`The rate must be a positive decimal number (1 ${symbol} = RATE ${currency})`)
    }
    if (fractionDigits(toDecimalString(text)) > 12 || significantDigits(text) > 15) {
      throw new OperatorError('The rate may have at most 12 decimals and 15 significant digits')
    }
    const value = toDecimalString(text)
    const existing = await Rate.query().where('token', symbol).where('fiat', currency).first()
    if (existing) {
      existing.rate = value
      existing.source = 'fixed'
      await existing.save()
      return existing
    }
    return Rate.create({ token: symbol, fiat: currency, rate: value, source: 'fixed' })
  }
}
