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
} from '#rates/rate_http'

/**
 * CoinGecko's simple price (https://docs.coingecko.com/reference/simple-price):
 *   GET {base}/api/v3/simple/price?ids=tether,tron&vs_currencies=cny,usd&include_last_updated_at=true&precision=full
 *   → { "tether": { "cny": 7.21, "usd": 1.0, "last_updated_at": 1711356300 }, … }
 * An id CoinGecko does not know is left out of the answer (`{}` when none is).
 *
 * API key (`rate.coingecko.api_key`, optional): chosen by the base URL's
 * host. With the public base (https://api.coingecko.com, or a mirror) the
 * key goes in `x-cg-demo-api-key` (a Demo key); with
 * `rate.coingecko.url = https://pro-api.coingecko.com` it goes in
 * `x-cg-pro-api-key` (a paid key). CoinGecko refuses a pro key on the
 * public host and a demo key on the pro host (HTTP 401, error_code 10010/10011).
 *
 * Limits: the public API allows a few dozen calls a minute (more with a
 * Demo key); over it, HTTP 429 `{"status":{"error_code":429,"error_message":"You've exceeded the Rate Limit…"}}`,
 * sometimes with Retry-After. Without one, the source waits 60 s (the limit's window).
 */

const LABEL = 'CoinGecko'
const DEFAULT_URL = 'https://api.coingecko.com'
export const COINGECKO_PRO_HOST = 'pro-api.coingecko.com'
/** When a 429 has no Retry-After: the rate limit's window is one minute. */
const RATE_LIMIT_PAUSE_MS = 60_000

/** Our tokens' CoinGecko coin ids (api/v3/coins/list). */
export const COINGECKO_IDS: Readonly<Record<string, string>> = {
  USDT: 'tether',
  USDC: 'usd-coin',
  TRX: 'tron',
  ETH: 'ethereum',
  BNB: 'binancecoin',
  POL: 'polygon-ecosystem-token',
  SOL: 'solana',
  TON: 'the-open-network',
  BTC: 'bitcoin',
}

/** The fiat currencies CoinGecko prices in (api/v3/simple/supported_vs_currencies, fiat only). */
export const COINGECKO_FIATS: ReadonlySet<string> = new Set(
  (
    'USD AED ARS AUD BDT BHD BMD BRL CAD CHF CLP CNY CZK DKK EUR GBP GEL HKD HUF IDR ILS INR ' +
    'JPY KRW KWD LKR MMK MXN MYR NGN NOK NZD PHP PKR PLN RUB SAR SEK SGD THB TRY TWD UAH VEF VND ZAR'
  ).split(' ')
)

/** The header a key goes in: the pro one on CoinGecko's pro host, else the demo one. */
export function coingeckoKeyHeader(baseUrl: string): 'x-cg-pro-api-key' | 'x-cg-demo-api-key' {
  let host = ''
  try {
    host = new URL(baseUrl).hostname.toLowerCase()
  } catch {}
  return host === COINGECKO_PRO_HOST ? 'x-cg-pro-api-key' : 'x-cg-demo-api-key'
}

/** `{"status":{"error_code":…,"error_message":…}}` or `{"error":"…"}`: the words, with the code. */
function errorText(body: unknown): string {
  const object = asObject(body)
  const status = asObject(object?.status)
  if (status && typeof status.error_message === 'string')
    return status.error_code !== undefined
      ? `${status.error_message} (error_code ${String(status.error_code)})`
      : status.error_message
  if (typeof object?.error === 'string') return object.error
  return ''
}

function supports(pair: RatePair) {
  return Object.hasOwn(COINGECKO_IDS, pair.token) && COINGECKO_FIATS.has(pair.fiat)
}

export const coingeckoSource: LiveRateSource = {
  name: 'coingecko',
  description: 'CoinGecko simple price',
  defaultUrl: DEFAULT_URL,
  kind: 'market',

  supports,

  async quote(pairs, context) {
    const wanted = pairs.filter(supports)
    if (wanted.length === 0) return []
    const base = baseUrlOf(context.baseUrl, DEFAULT_URL)
    const url = new URL(`${base}/api/v3/simple/price`)
    const ids = [...new Set(wanted.map((pair) => COINGECKO_IDS[pair.token]))]
    const fiats = [...new Set(wanted.map((pair) => pair.fiat.toLowerCase()))]
    url.searchParams.set('ids', ids.join(','))
    url.searchParams.set('vs_currencies', fiats.join(','))
    url.searchParams.set('include_last_updated_at', 'true')
    url.searchParams.set('precision', 'full')
    const headers: Record<string, string> = {}
    if (context.apiKey) headers[coingeckoKeyHeader(base)] = context.apiKey

    const answer = await getJson(LABEL, url, { signal: context.signal, headers })
    if (answer.status === 429) {
      const wait = retryAfterMs(answer.headers, RATE_LIMIT_PAUSE_MS)
      throw new RateSourceFailure(
        `${LABEL}: HTTP 429: ${errorText(answer.body) || 'rate limit exceeded'}${retryAfterText(wait)}`,
        wait
      )
    }
    if (answer.status === 401 || answer.status === 403) {
      const words = errorText(answer.body) || 'access refused'
      throw new RateSourceFailure(
        `${LABEL}: HTTP ${answer.status}: ${words}; check rate.coingecko.api_key ` +
          `(a Demo key with ${DEFAULT_URL}, a Pro key with rate.coingecko.url = https://${COINGECKO_PRO_HOST})`
      )
    }
    if (answer.status < 200 || answer.status > 299) {
      if (answer.body === undefined) throw notJson(LABEL, answer)
      throw new RateSourceFailure(
        `${LABEL}: HTTP ${answer.status}: ${errorText(answer.body) || 'error'}`
      )
    }
    const table = asObject(answer.body)
    if (!table) throw notJson(LABEL, answer)

    const quotes: RateQuote[] = []
    for (const pair of wanted) {
      const coin = asObject(table[COINGECKO_IDS[pair.token]])
      if (!coin) continue
      const price = positivePrice(coin[pair.fiat.toLowerCase()])
      if (!price) continue
      const updated = positivePrice(coin.last_updated_at)
      quotes.push({
        token: pair.token,
        quote: pair.fiat,
        price,
        ...(updated ? { observedAt: updated.times(1000).toNumber() } : {}),
      })
    }
    return quotes
  },
}
