import configCache from '#services/config_cache'
import settings from '#settings/settings_service'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import { Decimal, toDecimalString } from '#support/text/money'
import { HttpJsonRateSource } from '#rates/http_json_rate_source'
import { RateSourceError, type RateSource } from '#rates/rate_source'
import { MarkupError, applyMarkup, parseMarkup } from '#rates/rate_markup'

type CachedRates = { rates: Map<string, Decimal>; fetchedAt: number }

/** A conversion and what priced it (stored on the order). */
export type Pricing = { amount: Decimal; rate: string; source: string; markup: string }

/**
 * Converts fiat amounts to token amounts.
 *
 * A fixed rate (`node ace rate:set USDT CNY 7.25`: 1 USDT = 7.25 CNY) wins.
 * Otherwise the live source configured in `rate.api_url` is asked, and its
 * answer is used for `rate.cache_ttl_seconds`. When no rate is known, or the
 * cached one is too old and cannot be refreshed, the conversion is refused
 * (10006) rather than guessed.
 */
export class RateService {
  #cache = new Map<string, CachedRates>()
  #inflight = new Map<string, Promise<CachedRates>>()
  /** Overridable for tests. */
  sourceFactory: (url: string, timeoutMs: number) => RateSource = (url, timeoutMs) =>
    new HttpJsonRateSource(url, timeoutMs)

  /** Unrounded token amount worth `fiatAmount` of `fiat`. */
  async convert(
    fiatAmount: string,
    fiat: string,
    token: string,
    apiKeyId: number | null = null
  ): Promise<Decimal> {
    const { amount } = await this.quote(fiatAmount, fiat, token, apiKeyId)
    return amount
  }

  /**
   * The unrounded token amount worth `fiatAmount` of `fiat`, with what
   * priced it (stored on the order): the rate charged (fiat per token, the
   * markup included; for the old single source, 1 ÷ its tokens per fiat),
   * its source (`fixed`, `live: <sources used>`, `api_url`) and the markup.
   * `apiKeyId` is the merchant's key: its own markup wins over the pair's.
   */
  async quote(
    fiatAmount: string,
    fiat: string,
    token: string,
    apiKeyId: number | null = null
  ): Promise<Pricing> {
    // Fixed rates come from the configuration cache (a change is seen within 2 s, at once here).
    const fixed = await configCache.fixedRate(token, fiat)
    if (fixed) {
      const price = new Decimal(fixed.rate)
      if (!price.gt(0))
        throw new BusinessError(ErrorCode.RATE_ERROR, `The ${token}/${fiat} rate is not positive`)
      return {
        amount: new Decimal(fiatAmount).dividedBy(price),
        rate: toDecimalString(price),
        source: 'fixed',
        markup: '',
      }
    }

    // Live sources (rate.sources): the rate the workers computed, with the operator's markup.
    const liveSources = await settings.get('rate.sources')
    if (liveSources.length > 0) {
      const live = await this.liveQuote(token, fiat, { apiKeyId })
      return {
        amount: new Decimal(fiatAmount).dividedBy(live.rate),
        rate: toDecimalString(live.rate),
        source: live.source,
        markup: live.markup,
      }
    }

    const url = await settings.get('rate.api_url')
    if (url === '') {
      throw new BusinessError(
        ErrorCode.RATE_ERROR,
        `No exchange rate for ${token}/${fiat}: set one (node ace rate:set ${token} ${fiat} <rate>) or configure rate.api_url`
      )
    }
    const liveRates = await this.#liveRates(url, fiat)
    const perFiat = liveRates.get(token)
    if (!perFiat) {
      throw new BusinessError(ErrorCode.RATE_ERROR, `The rate source has no ${token}/${fiat} rate`)
    }
    return {
      amount: new Decimal(fiatAmount).multipliedBy(perFiat),
      // The source gives tokens per fiat: its rate, to 12 decimals (the order records it, the amount is exact).
      rate: toDecimalString(new Decimal(1).dividedBy(perFiat).decimalPlaces(12)),
      source: 'api_url',
      markup: '',
    }
  }

  /**
   * The live rate of a pair (fiat per token) with its markup, from the
   * workers' last refresh (read through the configuration cache: no HTTP
   * here). Refused (10006) with the reason when the pair has no usable
   * rate, or when its last computation is older than the answers it may use
   * (the workers are not refreshing).
   */
  async liveRate(token: string, fiat: string, now = Date.now()): Promise<Decimal> {
    const { rate } = await this.liveQuote(token, fiat, { now })
    return rate
  }

  async liveQuote(
    token: string,
    fiat: string,
    { now = Date.now(), apiKeyId = null }: { now?: number; apiKeyId?: number | null } = {}
  ): Promise<{ rate: Decimal; source: string; markup: string }> {
    const { live, markup } = await configCache.liveRate(token, fiat, apiKeyId)
    const pair = `${token}/${fiat}`
    if (!live)
      throw new BusinessError(
        ErrorCode.RATE_ERROR,
        `No ${pair} rate yet: the live rate sources have not priced it (the workers refresh every rate.refresh_seconds)`
      )
    if (!live.ok || live.rate === null)
      throw new BusinessError(ErrorCode.RATE_ERROR, `No usable ${pair} rate: ${live.reason}`)
    const refreshMs = (await settings.get('rate.refresh_seconds')) * 1000
    const maxAgeMs = (await settings.get('rate.max_age_seconds')) * 1000
    if (now - live.computedAt > maxAgeMs + 2 * refreshMs)
      throw new BusinessError(
        ErrorCode.RATE_ERROR,
        `The ${pair} rate is stale: last computed ${Math.round((now - live.computedAt) / 1000)} s ago (are the workers running?)`
      )
    const used: string[] = (() => {
      try {
        return JSON.parse(live.sources).used ?? []
      } catch {
        return []
      }
    })()
    try {
      return {
        rate: applyMarkup(new Decimal(live.rate), markup ? parseMarkup(markup) : null),
        source: `live: ${used.join(', ')}`,
        markup: markup ?? '',
      }
    } catch (error) {
      if (error instanceof MarkupError)
        throw new BusinessError(ErrorCode.RATE_ERROR, `The ${pair} rate: ${error.message}`)
      throw error
    }
  }

  clearCache() {
    this.#cache.clear()
  }

  async #liveRates(url: string, fiat: string): Promise<Map<string, Decimal>> {
    const ttlMs = (await settings.get('rate.cache_ttl_seconds')) * 1000
    const key = `${url}|${fiat}`
    const cached = this.#cache.get(key)
    if (cached && Date.now() - cached.fetchedAt < ttlMs) return cached.rates

    let pending = this.#inflight.get(key)
    if (!pending) {
      const timeoutMs = (await settings.get('rate.timeout_seconds')) * 1000
      pending = this.sourceFactory(url, timeoutMs)
        .fetch(fiat)
        .then((rates) => {
          const entry = { rates, fetchedAt: Date.now() }
          this.#cache.set(key, entry)
          return entry
        })
        .finally(() => this.#inflight.delete(key))
      this.#inflight.set(key, pending)
    }
    try {
      const { rates } = await pending
      return rates
    } catch (error) {
      // An expired cache entry is stale: refuse instead of using it.
      const reason = error instanceof RateSourceError ? error.message : 'rate source failed'
      throw new BusinessError(
        ErrorCode.RATE_ERROR,
        `No fresh ${fiat.toUpperCase()} rate: ${reason}`
      )
    }
  }
}

const rateService = new RateService()
export default rateService
