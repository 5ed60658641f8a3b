import type { Decimal } from '#support/text/money'

/**
 * The contract of a live exchange-rate source (a price aggregator, an
 * exchange's ticker or P2P market, a fiat cross source …): what a plugin brings under
 * `rateSources` (app/plugin_host/gateway_plugin.ts).
 *
 * The core asks each enabled source, in the workers' background refresh
 * (never on the create path), for the pairs payers use; it keeps every
 * answer, takes the median of the fresh ones per pair, drops outliers,
 * crosses through USD where a source quotes another currency, applies the
 * operator's markup and caches the result for order creation.
 */

/** A token against a fiat currency, upper-case: { token: 'USDT', fiat: 'CNY' }. */
export type RatePair = { token: string; fiat: string }

/**
 * One price a source gave: `price` units of `quote` for one `token`.
 * `quote` is the pair's fiat when the source has it; else the currency it
 * does price in (`USD`), and the core crosses it to the fiat with a fiat
 * cross source's rate. USDT prices (an exchange's TRXUSDT) are given with
 * quote `USDT`: the core treats USDT as USD for the cross, and says so.
 */
export type RateQuote = {
  token: string
  quote: string
  price: Decimal
  /** The source's own time for the price (epoch ms), when its answer carries one. */
  observedAt?: number
}

/** What the core hands a source for one refresh. */
export type RateSourceContext = {
  /** Base URL from the source's `rate.<name>.url` setting (mirrors, tests). */
  baseUrl: string
  /** API key from `rate.<name>.api_key` when the source has one ('' when none). */
  apiKey: string
  /** Ends the refresh's requests (the `rate.timeout_seconds` deadline). */
  signal: AbortSignal
}

/**
 * A source's failure, in words an operator can act on ("HTTP 429: Too many
 * requests, retry after 60 s", "code 50011: rate limit reached"). With
 * `retryAfterMs`, the source is not asked again before that long.
 */
export class RateSourceFailure extends Error {
  constructor(
    message: string,
    readonly retryAfterMs?: number
  ) {
    super(message)
  }
}

export type LiveRateSource = {
  /** Lower-case; its settings are `rate.<name>.*`, `rate:sources` names it. */
  name: string
  description: string
  /** The base URL it uses unless `rate.<name>.url` says otherwise. */
  defaultUrl: string
  /** Fiat cross sources price fiat against fiat (EUR per USD …): the core uses them only for crosses. */
  kind: 'market' | 'fiat_cross'
  /**
   * Whether it can price `pair`, directly or in a currency the core can
   * cross from (USD, USDT). A fiat cross source is asked for `{ token:
   * 'USD', fiat }` pairs.
   */
  supports(pair: RatePair): boolean
  /**
   * Prices for `pairs` (those it supports), in as few requests as its API
   * allows. Throws RateSourceFailure when it cannot answer at all (an error
   * body, HTTP 429/418, a timeout); leaves out a pair it has no price for.
   */
  quote(pairs: RatePair[], context: RateSourceContext): Promise<RateQuote[]>
}
