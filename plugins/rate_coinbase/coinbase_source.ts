import {
  RateSourceFailure,
  type LiveRateSource,
  type RatePair,
  type RateQuote,
} from '#rates/live_rate_source'
import {
  GATEWAY_TOKENS,
  asObject,
  baseUrlOf,
  getJson,
  isCurrencyCode,
  notJson,
  positivePrice,
  retryAfterMs,
  retryAfterText,
  type JsonAnswer,
} from '#plugins/rate_json/rate_request'

/**
 * Coinbase's exchange rates (https://docs.cdp.coinbase.com/coinbase-app/track-apis/exchange-rates),
 * public, no key:
 *   GET {base}/v2/exchange-rates?currency=TRX
 *   → {"data":{"currency":"TRX","rates":{"CNY":"1.97","USD":"0.27",…}}}
 * `rates` are units of each currency for one TRX, as decimal strings (about
 * 170 fiats and as many cryptocurrencies). One request per token, one after
 * the other (the public API allows 10 000 requests an hour per IP).
 *
 * A fiat Coinbase does not list is priced in USD (the core crosses it).
 * Errors: `{"errors":[{"id":"not_found","message":"Invalid currency"}]}` with a
 * 4xx; a currency Coinbase does not know leaves that token out, the others
 * are kept. HTTP 429 (`rate_limit_exceeded`) stops the refresh with the
 * wait (Retry-After, else 60 s); the deadline stops it too. Any other
 * failure for one token leaves that token out; with no price at all left: a failure.
 */

const LABEL = 'Coinbase'
const DEFAULT_URL = 'https://api.coinbase.com'
const RATE_LIMIT_PAUSE_MS = 60_000

function supports(pair: RatePair) {
  return GATEWAY_TOKENS.has(pair.token) && isCurrencyCode(pair.fiat)
}

/** `{"errors":[{"id","message"}]}` → "not_found: Invalid currency". */
function errorText(body: unknown): string {
  const errors = asObject(body)?.errors
  if (!Array.isArray(errors)) return ''
  return errors
    .map((error) => {
      const object = asObject(error)
      const id = typeof object?.id === 'string' ? object.id : ''
      const message = typeof object?.message === 'string' ? object.message : ''
      return [id, message].filter(Boolean).join(': ')
    })
    .filter(Boolean)
    .join('; ')
}

function errorIds(body: unknown): string[] {
  const errors = asObject(body)?.errors
  if (!Array.isArray(errors)) return []
  return errors.map((error) => asObject(error)?.id).filter((id) => typeof id === 'string')
}

/** The rates table for one token, or the reason there is none. */
function ratesOf(
  token: string,
  answer: JsonAnswer
): { rates: Record<string, unknown> } | { unknown: string } | { failure: RateSourceFailure } {
  if (answer.status === 429) {
    const wait = retryAfterMs(answer.headers, RATE_LIMIT_PAUSE_MS)
    return {
      failure: new RateSourceFailure(
        `${LABEL}: HTTP 429: ${errorText(answer.body) || 'too many requests'}${retryAfterText(wait)}`,
        wait
      ),
    }
  }
  if (answer.status < 200 || answer.status > 299) {
    if (answer.body === undefined) return { failure: notJson(LABEL, answer) }
    const words = errorText(answer.body) || 'error'
    if (answer.status >= 400 && answer.status < 500 && errorIds(answer.body).includes('not_found'))
      return { unknown: `${token}: HTTP ${answer.status}: ${words}` }
    return {
      failure: new RateSourceFailure(`${LABEL}: HTTP ${answer.status} for ${token}: ${words}`),
    }
  }
  const data = asObject(asObject(answer.body)?.data)
  const rates = asObject(data?.rates)
  if (answer.body === undefined) return { failure: notJson(LABEL, answer) }
  if (!data || !rates)
    return { failure: new RateSourceFailure(`${LABEL}: the answer for ${token} has no data.rates`) }
  if (typeof data.currency === 'string' && data.currency.toUpperCase() !== token)
    return {
      failure: new RateSourceFailure(
        `${LABEL}: asked for ${token}, answered rates of ${data.currency}`
      ),
    }
  return { rates }
}

export const coinbaseSource: LiveRateSource = {
  name: 'coinbase',
  description: 'Coinbase exchange rates',
  defaultUrl: DEFAULT_URL,
  kind: 'market',

  supports,

  async quote(pairs, context) {
    const wanted = pairs.filter(supports)
    if (wanted.length === 0) return []
    const base = baseUrlOf(context.baseUrl, DEFAULT_URL)
    const tokens = [...new Set(wanted.map((pair) => pair.token))]

    const quotes: RateQuote[] = []
    const failures: RateSourceFailure[] = []
    for (const token of tokens) {
      const url = new URL(`${base}/v2/exchange-rates`)
      url.searchParams.set('currency', token)
      // A deadline or a network failure ends the whole refresh: the next tokens would fail alike.
      const answer = await getJson(LABEL, url, { signal: context.signal })
      const result = ratesOf(token, answer)
      if ('failure' in result) {
        if (result.failure.retryAfterMs !== undefined) throw result.failure
        failures.push(result.failure)
        continue
      }
      if ('unknown' in result) continue
      for (const pair of wanted) {
        if (pair.token !== token) continue
        const direct = positivePrice(result.rates[pair.fiat])
        if (direct) {
          quotes.push({ token, quote: pair.fiat, price: direct })
          continue
        }
        const usd = positivePrice(result.rates.USD)
        if (usd && !quotes.some((quote) => quote.token === token && quote.quote === 'USD'))
          quotes.push({ token, quote: 'USD', price: usd })
      }
    }
    if (failures.length > 0 && quotes.length === 0) {
      const first = failures[0].message
      throw new RateSourceFailure(
        failures.length === 1 ? first : `${first} (and ${failures.length - 1} more tokens)`
      )
    }
    return quotes
  },
}
