import BigNumber from 'bignumber.js'
import { Decimal } from '#support/text/money'
import {
  RateSourceFailure,
  type LiveRateSource,
  type RatePair,
  type RateQuote,
} from '#rates/live_rate_source'
import {
  asObject,
  getJson,
  isCurrencyCode,
  notJson,
  positivePrice,
  retryAfterMs,
  retryAfterText,
} from '#plugins/rate_json/rate_request'

/**
 * A generic JSON rate API, the shape of the free currency APIs published
 * on CDNs (and of the gateway's former `rate.http_json` source):
 *   GET {rate.json.url}/{fiat}.json → { "<fiat>": { "<token>": <tokens per 1 fiat> }, … }
 * codes lower-case, one request per fiat.
 *
 * The API gives tokens per fiat; the contract wants fiat per token, so the
 * price is the exact inverse, kept to INVERSE_DIGITS (18) significant digits,
 * rounded half-up: exact whenever the inverse has no more digits than that
 * (1 / 0.125 = 8, 1 / 0.5 = 2), else correct to its 18th significant digit
 * (1 / 3 = 0.333333333333333333). Prices the source sends as JSON numbers are
 * read from their digits, never through a double.
 *
 * No default URL: `rate.json.url` names the API. `supports()` cannot read
 * settings (it is synchronous), so it answers for the pair alone; the core
 * asks this source only when its URL is set (`quote` refuses without one).
 * The answer carries no time of its own: no `observedAt`.
 */

const LABEL = 'JSON rates'
/** Significant digits an inverted price keeps. */
export const INVERSE_DIGITS = 18
/** When a 429 has no Retry-After. */
const RATE_LIMIT_PAUSE_MS = 60_000

/** Wide enough that the quotient's 18th significant digit is computed, not rounded away. */
const Wide = BigNumber.clone({ DECIMAL_PLACES: 80, ROUNDING_MODE: BigNumber.ROUND_DOWN })

/** 1 / `tokensPerFiat`, to INVERSE_DIGITS significant digits (half-up), as a Decimal. */
export function invertRate(tokensPerFiat: Decimal): Decimal {
  const inverse = new Wide(1).div(new Wide(tokensPerFiat))
  return new Decimal(inverse.precision(INVERSE_DIGITS, BigNumber.ROUND_HALF_UP).toFixed())
}

function supports(pair: RatePair) {
  return /^[A-Z0-9]{2,12}$/.test(pair.token) && isCurrencyCode(pair.fiat)
}

export const jsonSource: LiveRateSource = {
  name: 'json',
  description: 'a JSON rate API ({url}/{fiat}.json, tokens per fiat)',
  defaultUrl: '',
  kind: 'market',

  supports,

  async quote(pairs, context) {
    const wanted = pairs.filter(supports)
    if (wanted.length === 0) return []
    const base = context.baseUrl.trim().replace(/\/+$/, '')
    if (!base) throw new RateSourceFailure(`${LABEL}: rate.json.url is not set`)

    const quotes: RateQuote[] = []
    for (const fiat of [...new Set(wanted.map((pair) => pair.fiat))]) {
      const code = fiat.toLowerCase()
      let url: URL
      try {
        url = new URL(`${base}/${encodeURIComponent(code)}.json`)
      } catch {
        throw new RateSourceFailure(`${LABEL}: rate.json.url is not a URL`)
      }
      const answer = await getJson(LABEL, url, { signal: context.signal })
      if (answer.status === 429) {
        const wait = retryAfterMs(answer.headers, RATE_LIMIT_PAUSE_MS)
        throw new RateSourceFailure(`${LABEL}: HTTP 429${retryAfterText(wait)}`, wait)
      }
      if (answer.status < 200 || answer.status > 299) {
        if (answer.body === undefined) throw notJson(LABEL, answer)
        throw new RateSourceFailure(`${LABEL}: HTTP ${answer.status} for ${url.pathname}`)
      }
      if (answer.body === undefined) throw notJson(LABEL, answer)
      const table = asObject(asObject(answer.body)?.[code])
      if (!table) throw new RateSourceFailure(`${LABEL}: ${url.pathname} has no "${code}" object`)

      for (const pair of wanted) {
        if (pair.fiat !== fiat) continue
        const tokensPerFiat = positivePrice(table[pair.token.toLowerCase()])
        if (!tokensPerFiat) continue
        quotes.push({ token: pair.token, quote: fiat, price: invertRate(tokensPerFiat) })
      }
    }
    return quotes
  },
}
