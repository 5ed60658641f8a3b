import Rate from '#models/rate'
import ApiKey from '#models/api_key'
import db from '@adonisjs/lucid/services/db'
import auditLog from '#services/audit/audit_log'
import { snapshot } from '#services/audit/audit_snapshots'
import { OperatorError } from '#support/cli/operator_error'
import configCache from '#services/config_cache'
import { MarkupError, isMarkup, parseMarkup } from '#rates/rate_markup'
import {
  Decimal,
  fractionDigits,
  isDecimalLiteral,
  significantDigits,
  toDecimalString,
} from '#support/text/money'

/** Fixed exchange rates (1 token = rate fiat) as operators manage them. */
export class RateAdmin {
  constructor(protected audit = auditLog) {}

  list() {
    return Rate.query().orderBy('token').orderBy('fiat')
  }

  /**
   * Sets (or replaces) the fixed rate of a token in a fiat currency, or,
   * written as a markup (`~1.02`, `+0.3`, `-0.2`) and unless `fixedOnly`,
   * the markup on its live rate: the pair's, or with `apiKeyPid` that
   * merchant key's own (which wins over the pair's for its orders).
   */
  async set(
    token: string,
    fiat: string,
    rate: string,
    options: { fixedOnly?: boolean; apiKeyPid?: string | null } = {}
  ) {
    const { symbol, currency } = pairOf(token, fiat)
    const text = rate.trim()
    const key = await this.#apiKey(options.apiKeyPid)
    if (key && !isMarkup(text))
      throw new OperatorError(
        `A fixed rate applies to every API key; per key, write a markup on the live rate (~1.02, +0.3, -0.2)`,
        { key: 'fixed_rate_per_key' }
      )
    if (isMarkup(text) && !options.fixedOnly) return this.#setMarkup(symbol, currency, text, key)
    if (!isDecimalLiteral(text) || !new Decimal(text).gt(0)) {
      throw new OperatorError(
        `The rate must be a positive decimal number (1 ${symbol} = RATE ${currency})`,
        { key: 'rate_not_positive', args: { symbol, currency } }
      )
    }
    if (fractionDigits(toDecimalString(text)) > 12 || significantDigits(text) > 15) {
      throw new OperatorError('The rate may have at most 12 decimals and 15 significant digits', {
        key: 'rate_too_precise',
      })
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
  async #setMarkup(symbol: string, currency: string, text: string, key: ApiKey | null) {
    let markup
    try {
      markup = parseMarkup(text)
    } catch (error) {
      if (error instanceof MarkupError)
        throw new OperatorError(error.message, {
          key: 'invalid_markup',
          args: { reason: error.message },
        })
      throw error
    }
    // The pair's markup replaces its fixed rate; a key's markup leaves the pair as it is.
    const existing = key
      ? null
      : await Rate.query().where('token', symbol).where('fiat', currency).first()
    const previous = await this.#markupRow(symbol, currency, key)
    const before = existing
      ? snapshot.rate(existing)
      : previous
        ? markupSnapshot(symbol, currency, previous.markup, key)
        : null
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
            api_key_id: key?.id ?? 0,
            markup: markup.text,
            created_at: now,
            updated_at: now,
          })
          .onConflict(['token', 'fiat', 'api_key_id'])
          .merge(['markup', 'updated_at'])
        return { token: symbol, fiat: currency, rate: markup.text }
      },
      (result) => ({
        action: 'rate.set',
        subjectType: 'rate',
        subjectId: markupSubject(symbol, currency, key),
        before,
        after: markupSnapshot(result.token, result.fiat, result.rate, key),
      })
    )
    configCache.invalidate()
    const fixedStays = key
      ? await Rate.query().where('token', symbol).where('fiat', currency).first()
      : null
    return {
      ...saved,
      live: true as const,
      apiKeyPid: key?.pid ?? null,
      /** A key's markup on a pair with a fixed rate waits for that rate to be removed. */
      shadowedByFixed: fixedStays ? fixedStays.rate : null,
    }
  }

  /**
   * Removes a live pair's markup (the pair's, or with `apiKeyPid` that key's
   * own: its orders follow the pair's markup again). Audited.
   */
  async clearMarkup(token: string, fiat: string, apiKeyPid: string | null = null) {
    const { symbol, currency } = pairOf(token, fiat)
    const key = await this.#apiKey(apiKeyPid)
    const row = await this.#markupRow(symbol, currency, key)
    if (!row) {
      throw key
        ? new OperatorError(
            `${symbol}/${currency} has no markup for API key ${key.pid} (any more): nothing to clear`,
            { key: 'no_key_markup_to_clear', args: { symbol, currency, pid: key.pid } }
          )
        : new OperatorError(`${symbol}/${currency} has no markup (any more): nothing to clear`, {
            key: 'no_markup_to_clear',
            args: { symbol, currency },
          })
    }
    await this.audit.change(
      async (trx) => {
        const deleted = await trx.from('rate_markups').where('id', row.id).delete()
        if (Number(deleted) !== 1)
          throw new OperatorError('The markup was cleared meanwhile', {
            key: 'markup_cleared_meanwhile',
          })
      },
      () => ({
        action: 'rate.markup_clear',
        subjectType: 'rate',
        subjectId: markupSubject(symbol, currency, key),
        before: markupSnapshot(symbol, currency, row.markup, key),
        after: null,
      })
    )
    configCache.invalidate()
    return {
      token: symbol,
      fiat: currency,
      markup: row.markup as string,
      apiKeyPid: key?.pid ?? null,
    }
  }

  async #apiKey(pid: string | null | undefined): Promise<ApiKey | null> {
    if (pid === null || pid === undefined || pid.trim() === '') return null
    const key = await ApiKey.findBy('pid', pid.trim())
    if (!key)
      throw new OperatorError(`No API key with pid ${pid.trim()} (see apikey:list)`, {
        key: 'rate_unknown_pid',
        args: { pid: pid.trim() },
      })
    return key
  }

  #markupRow(symbol: string, currency: string, key: ApiKey | null) {
    return db
      .from('rate_markups')
      .where('token', symbol)
      .where('fiat', currency)
      .where('api_key_id', key?.id ?? 0)
      .first()
  }
}

function pairOf(token: string, fiat: string) {
  const symbol = token.toUpperCase()
  const currency = fiat.toUpperCase()
  if (!/^[A-Z0-9]{1,16}$/.test(symbol))
    throw new OperatorError('The token must be a symbol such as USDT', { key: 'rate_token_format' })
  if (!/^[A-Z]{3,10}$/.test(currency))
    throw new OperatorError('The fiat must be a currency code such as CNY', {
      key: 'rate_fiat_format',
    })
  return { symbol, currency }
}

/** The audit subject of a markup: `USDT/CNY`, or `USDT/CNY key 1001` for one key's. */
function markupSubject(symbol: string, currency: string, key: ApiKey | null) {
  return key ? `${symbol}/${currency} key ${key.pid}` : `${symbol}/${currency}`
}

function markupSnapshot(symbol: string, currency: string, markup: string, key: ApiKey | null) {
  return key
    ? { token: symbol, fiat: currency, markup, api_key: key.pid }
    : { token: symbol, fiat: currency, markup }
}

const rateAdmin = new RateAdmin()
export default rateAdmin
