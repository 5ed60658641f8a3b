import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import settings from '#settings/settings_service'
import rateSources from '#rates/rate_source_registry'
import { Decimal } from '#support/text/money'
import {
  RateSourceFailure,
  type LiveRateSource,
  type RatePair,
  type RateQuote,
} from '#rates/live_rate_source'
import { aggregate, type SourceAnswer } from '#rates/rate_aggregation'
import { SecretPurpose, revealSecret } from '#support/crypto/secret_box'
import { raiseNotification } from '#notifications/notifier'

/** Orders' currencies of this many days are kept priced. */
const RECENT_DAYS = 30
/** The chart's history keeps one rate per pair this often at most. */
const HISTORY_EVERY_MS = 10 * 60_000
/** Currencies a source may quote in that the core crosses to the fiat through USD. */
const USD_LIKE = new Set(['USD', 'USDT'])

const key = (pair: RatePair) => `${pair.token}|${pair.fiat}`

/**
 * The workers' background refresh of live rates (the `rates:refresh` job,
 * every `rate.refresh_seconds`): asks each enabled source for the pairs
 * payers use, keeps every answer (rate_answers), crosses USD prices to
 * other fiats through the fiat cross sources, and writes each pair's rate
 * (rate_current: the median of the fresh agreeing answers, or why it is
 * refused) and a sampled history (rate_history). Order creation only ever
 * reads rate_current (through the configuration cache): no HTTP on its path.
 */
export class RateRefresh {
  /** A source that asked to wait (429, 418) is not asked before then. */
  #holdUntil = new Map<string, number>()
  #lastRun = 0

  /** The job's entry: runs when `rate.refresh_seconds` have passed since the last run. */
  async runIfDue(now = Date.now()) {
    const every = (await settings.get('rate.refresh_seconds')) * 1000
    if (now - this.#lastRun < every) return
    this.#lastRun = now
    await this.refresh(now)
  }

  /** The pairs payers can use (enabled tokens of enabled chains with a wallet) that have no fixed rate. */
  async pairs(now = Date.now()): Promise<RatePair[]> {
    const [tokenRows, fixedRows, currencyRows] = await Promise.all([
      db
        .from('tokens')
        .join('chains', 'chains.network', 'tokens.network')
        .where('tokens.enabled', true)
        .where('chains.enabled', true)
        // Payers pay only where a wallet receives.
        .whereExists((wallets) =>
          wallets
            .from('wallets')
            .whereColumn('wallets.network', 'tokens.network')
            .where('wallets.enabled', true)
        )
        .distinct('tokens.symbol as symbol'),
      db.from('rates').select('token', 'fiat'),
      db
        .from('orders')
        .where('created_at', '>=', now - RECENT_DAYS * 86_400_000)
        .whereNull('parent_id')
        .distinct('currency'),
    ])
    const fixed = new Set(fixedRows.map((row) => `${row.token}|${row.fiat}`.toUpperCase()))
    const fiats = new Set<string>([
      ...(await settings.get('rate.currencies')),
      ...fixedRows.map((row) => String(row.fiat).toUpperCase()),
      ...currencyRows.map((row) => String(row.currency).toUpperCase()),
    ])
    const tokens = [...new Set(tokenRows.map((row) => String(row.symbol).toUpperCase()))].sort()
    const pairs: RatePair[] = []
    for (const token of tokens)
      for (const fiat of [...fiats].sort())
        if (!fixed.has(`${token}|${fiat}`)) pairs.push({ token, fiat })
    return pairs
  }

  /** The enabled sources, in the order of `rate.sources` (unknown names are skipped). */
  async sources(): Promise<LiveRateSource[]> {
    const names = await settings.get('rate.sources')
    return names.map((name) => rateSources.get(name)).filter((source) => source !== undefined)
  }

  async refresh(now = Date.now()) {
    const pairs = await this.pairs(now)
    const sources = await this.sources()
    if (pairs.length === 0 || sources.length === 0) return
    const timeoutMs = (await settings.get('rate.timeout_seconds')) * 1000

    // USD → fiat, for sources that price in USD or USDT.
    const fiats = [...new Set(pairs.map((pair) => pair.fiat))].filter((fiat) => fiat !== 'USD')
    const crossPairs = fiats.map((fiat) => ({ token: 'USD', fiat }))
    const crossQuotes = new Map<string, Decimal[]>()
    for (const source of sources.filter((candidate) => candidate.kind === 'fiat_cross')) {
      const asked = crossPairs.filter((pair) => source.supports(pair))
      const quotes = await this.#ask(source, asked, timeoutMs, now)
      if (!Array.isArray(quotes)) continue
      for (const quote of quotes)
        if (quote.token === 'USD')
          crossQuotes.set(quote.quote, [...(crossQuotes.get(quote.quote) ?? []), quote.price])
    }
    const cross = new Map(
      [...crossQuotes].map(([fiat, prices]) => {
        const sorted = prices.sort((a, b) => a.comparedTo(b) ?? 0)
        return [fiat, sorted[Math.floor(sorted.length / 2)]]
      })
    )

    const answers: {
      source: string
      token: string
      fiat: string
      price: string | null
      quote: string
      fetched_at: number
      error: string
    }[] = []
    for (const source of sources.filter((candidate) => candidate.kind === 'market')) {
      const asked = pairs.filter((pair) => source.supports(pair))
      if (asked.length === 0) continue
      const result = await this.#ask(source, asked, timeoutMs, now)
      for (const pair of asked) {
        const row = { source: source.name, token: pair.token, fiat: pair.fiat, fetched_at: now }
        if (!Array.isArray(result)) {
          answers.push({ ...row, price: null, quote: '', error: result })
          continue
        }
        const priced = this.#price(pair, result, cross)
        answers.push({ ...row, ...priced })
      }
    }
    await this.#store(answers)
    await this.recompute(now)
  }

  /** A source's quotes, or why it gave none (a held source is not asked). */
  async #ask(
    source: LiveRateSource,
    pairs: RatePair[],
    timeoutMs: number,
    now: number
  ): Promise<RateQuote[] | string> {
    if (pairs.length === 0) return []
    const held = this.#holdUntil.get(source.name) ?? 0
    if (held > now) return `waiting until ${new Date(held).toISOString()} (it asked to)`
    const baseUrl = String((await settings.read(`rate.${source.name}.url`).catch(() => '')) ?? '')
    const storedKey = await settings.read(`rate.${source.name}.api_key`).catch(() => '')
    const apiKey = storedKey
      ? revealSecret(String(storedKey), SecretPurpose.setting(`rate.${source.name}.api_key`))
      : ''
    try {
      return await source.quote(pairs, { baseUrl, apiKey, signal: AbortSignal.timeout(timeoutMs) })
    } catch (error) {
      if (error instanceof RateSourceFailure && error.retryAfterMs)
        this.#holdUntil.set(source.name, now + error.retryAfterMs)
      const message = error instanceof Error ? error.message : String(error)
      logger.warn({ source: source.name, error: message }, 'rate source failed')
      return message
    }
  }

  /** The pair's price from a source's quotes: direct, or crossed from USD/USDT. */
  #price(pair: RatePair, quotes: RateQuote[], cross: Map<string, Decimal>) {
    const mine = quotes.filter((quote) => quote.token === pair.token)
    const direct = mine.find((quote) => quote.quote === pair.fiat)
    if (direct) return { price: direct.price.toFixed(), quote: direct.quote, error: '' }
    const usd = mine.find((quote) => USD_LIKE.has(quote.quote))
    if (!usd) return { price: null, quote: '', error: `no ${pair.token} price` }
    if (pair.fiat === 'USD') return { price: usd.price.toFixed(), quote: usd.quote, error: '' }
    const rate = cross.get(pair.fiat)
    if (!rate)
      return {
        price: null,
        quote: usd.quote,
        error: `priced in ${usd.quote}: no USD→${pair.fiat} cross rate (enable a fiat cross source: rate:sources lists them)`,
      }
    return { price: usd.price.multipliedBy(rate).toFixed(), quote: usd.quote, error: '' }
  }

  async #store(
    answers: {
      source: string
      token: string
      fiat: string
      price: string | null
      quote: string
      fetched_at: number
      error: string
    }[]
  ) {
    for (let start = 0; start < answers.length; start += 100) {
      const chunk = answers.slice(start, start + 100)
      // A failed answer keeps the last price's row as it was, only saying why it has no new one.
      const priced = chunk.filter((answer) => answer.price !== null)
      if (priced.length > 0)
        await db
          .knexQuery()
          .table('rate_answers')
          .insert(priced)
          .onConflict(['source', 'token', 'fiat'])
          .merge(['price', 'quote', 'fetched_at', 'error'])
      for (const failed of chunk.filter((answer) => answer.price === null)) {
        await db
          .knexQuery()
          .table('rate_answers')
          .insert(failed)
          .onConflict(['source', 'token', 'fiat'])
          .merge(['error'])
      }
    }
  }

  /** Each pair's rate from the enabled sources' stored answers. */
  async recompute(now = Date.now()) {
    const enabledSources = await this.sources()
    const enabled = new Set(enabledSources.map((source) => source.name))
    const rules = {
      maxAgeMs: (await settings.get('rate.max_age_seconds')) * 1000,
      minSources: await settings.get('rate.min_sources'),
      maxDeviationPercent: await settings.get('rate.max_deviation_percent'),
    }
    const rows = await db.from('rate_answers')
    const byPair = new Map<string, SourceAnswer[]>()
    for (const row of rows) {
      if (!enabled.has(row.source)) continue
      const answer: SourceAnswer = {
        source: row.source,
        // A source whose last attempt failed still has its last price, aged as it is.
        price: row.price === null ? null : new Decimal(row.price),
        fetchedAt: Number(row.fetched_at),
        error: row.error,
      }
      const pairKey = key({ token: row.token, fiat: row.fiat })
      byPair.set(pairKey, [...(byPair.get(pairKey) ?? []), answer])
    }
    const previousRows = await db.from('rate_current').select('token', 'fiat', 'ok')
    const wasOk = new Map(previousRows.map((row) => [`${row.token}|${row.fiat}`, Boolean(row.ok)]))
    for (const pair of await this.pairs(now)) {
      const result = aggregate(byPair.get(key(pair)) ?? [], rules, now)
      // The operator is told when a pair becomes unusable (at most hourly per pair).
      if (!result.ok && wasOk.get(key(pair)) !== false)
        await raiseNotification(
          'rate.stale',
          {
            currency: pair.fiat,
            token: pair.token,
            finding: `${pair.token}/${pair.fiat}: ${result.reason}`,
            fix: `node ace rate:list shows each source's answers; enable more sources (rate:sources) or set a fixed rate: node ace rate:set ${pair.token} ${pair.fiat} <rate>`,
          },
          { dedupeKey: `rate.stale:${pair.token}/${pair.fiat}:${Math.floor(now / 3_600_000)}` }
        )
      const sources = JSON.stringify({
        used: result.used,
        dropped: result.dropped.map((entry) => ({
          source: entry.source,
          price: entry.price.toFixed(),
          deviation_percent: entry.deviationPercent.toFixed(2),
        })),
        stale: result.stale,
        failed: result.failed,
      })
      const row = {
        token: pair.token,
        fiat: pair.fiat,
        rate: result.ok ? result.rate.toFixed() : null,
        ok: result.ok,
        reason: result.ok ? '' : result.reason,
        sources,
        computed_at: now,
      }
      await db
        .knexQuery()
        .table('rate_current')
        .insert(row)
        .onConflict(['token', 'fiat'])
        .merge(['rate', 'ok', 'reason', 'sources', 'computed_at'])
      if (result.ok) {
        const last = await db
          .from('rate_history')
          .where({ token: pair.token, fiat: pair.fiat })
          .orderBy('at', 'desc')
          .first()
        if (!last || now - Number(last.at) >= HISTORY_EVERY_MS)
          await db
            .table('rate_history')
            .insert({ token: pair.token, fiat: pair.fiat, rate: row.rate, at: now })
      }
    }
  }
}

const rateRefresh = new RateRefresh()
export default rateRefresh
