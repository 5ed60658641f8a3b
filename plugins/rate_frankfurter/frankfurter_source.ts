import {
  RateSourceFailure,
  type LiveRateSource,
  type RatePair,
  type RateQuote,
} from '#rates/live_rate_source'
import {
  asObject,
  baseUrlOf,
  getJson,
  notJson,
  positivePrice,
  retryAfterMs,
  retryAfterText,
} from '#plugins/rate_json/rate_request'

/**
 * The European Central Bank's reference rates through Frankfurter's v1 API
 * (https://frankfurter.dev/v1/), a fiat cross source:
 *   GET {base}/latest?base=USD&symbols=CNY,EUR   (base: https://api.frankfurter.dev/v1)
 *   → {"amount":1.0,"base":"USD","date":"2026-11-26","rates":{"CNY":7.21,"EUR":0.95}}
 * It is asked for `{ token: 'USD', fiat }` pairs and answers `USD → fiat`
 * quotes (units of the fiat for one USD).
 *
 * The ECB publishes once a working day (around 16:00 CET; none on weekends
 * and TARGET holidays), so a price is up to a few days old by design:
 * `observedAt` is the start (00:00 UTC) of the answer's `date`, the earliest
 * the rate can be from, and the core's max age for crosses must allow a
 * long weekend.
 *
 * Frankfurter's docs today: the public API is at api.frankfurter.dev; v2
 * (`/v2/rates?base=usd&quotes=cny,eur`) blends many central banks' rates
 * and answers another shape; v1 (ECB only) "is superseded by v2 but will
 * continue to work". This source uses v1. The old host
 * (`rate.frankfurter.url = https://api.frankfurter.app`, where `from`/`to`
 * were the names of `base`/`symbols`) and a self-hosted instance serve the
 * same `/latest`. An unknown currency: HTTP 404 `{"message":"not found"}`
 * (422 on v2).
 */

const LABEL = 'Frankfurter'
const DEFAULT_URL = 'https://api.frankfurter.dev/v1'
const RATE_LIMIT_PAUSE_MS = 60_000

/** The currencies of the ECB's reference rates (besides EUR, and USD the base). */
export const ECB_CURRENCIES: ReadonlySet<string> = new Set(
  (
    'AUD BGN BRL CAD CHF CNY CZK DKK EUR GBP HKD HUF IDR ILS INR ISK JPY KRW MXN MYR NOK NZD ' +
    'PHP PLN RON SEK SGD THB TRY ZAR'
  ).split(' ')
)

function supports(pair: RatePair) {
  return pair.token === 'USD' && ECB_CURRENCIES.has(pair.fiat)
}

/** "2026-11-26" → 00:00 UTC that day (ms), or undefined. */
function startOfDay(date: unknown): number | undefined {
  if (typeof date !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(date)) return undefined
  const time = Date.parse(`${date}T00:00:00Z`)
  return Number.isFinite(time) ? time : undefined
}

export const frankfurterSource: LiveRateSource = {
  name: 'frankfurter',
  description: 'Frankfurter (European Central Bank reference rates)',
  defaultUrl: DEFAULT_URL,
  kind: 'fiat_cross',

  supports,

  async quote(pairs, context) {
    const fiats = [...new Set(pairs.filter(supports).map((pair) => pair.fiat))]
    if (fiats.length === 0) return []
    const url = new URL(`${baseUrlOf(context.baseUrl, DEFAULT_URL)}/latest`)
    url.searchParams.set('base', 'USD')
    url.searchParams.set('symbols', fiats.join(','))
    const answer = await getJson(LABEL, url, { signal: context.signal })

    const message = asObject(answer.body)?.message
    if (answer.status === 429) {
      const wait = retryAfterMs(answer.headers, RATE_LIMIT_PAUSE_MS)
      throw new RateSourceFailure(
        `${LABEL}: HTTP 429: ${typeof message === 'string' ? message : 'too many requests'}${retryAfterText(wait)}`,
        wait
      )
    }
    if (answer.body === undefined) throw notJson(LABEL, answer)
    if (answer.status < 200 || answer.status > 299) {
      const words = typeof message === 'string' ? message : 'error'
      throw new RateSourceFailure(
        `${LABEL}: HTTP ${answer.status}: ${words}` +
          (answer.status === 404 ? ` (a currency among ${fiats.join(',')} unknown?)` : '')
      )
    }
    const body = asObject(answer.body)
    const rates = asObject(body?.rates)
    if (!body || !rates) throw new RateSourceFailure(`${LABEL}: the answer has no rates`)
    if (typeof body.base === 'string' && body.base.toUpperCase() !== 'USD')
      throw new RateSourceFailure(`${LABEL}: asked for base USD, answered base ${body.base}`)
    const amount = body.amount === undefined ? null : positivePrice(body.amount)
    if (amount && !amount.eq(1))
      throw new RateSourceFailure(`${LABEL}: answered for an amount of ${amount.toFixed()}, not 1`)
    const observedAt = startOfDay(body.date)

    const quotes: RateQuote[] = []
    for (const fiat of fiats) {
      const price = positivePrice(rates[fiat])
      if (!price) continue
      quotes.push({
        token: 'USD',
        quote: fiat,
        price,
        ...(observedAt === undefined ? {} : { observedAt }),
      })
    }
    return quotes
  },
}
