import {
  RateSourceFailure,
  type LiveRateSource,
  type RatePair,
  type RateQuote,
} from '#rates/live_rate_source'
import type { Decimal } from '#support/text/money'
import {
  asObject,
  baseUrlOf,
  getJson,
  notJson,
  positivePrice,
  retryAfterMs,
  retryAfterText,
  type JsonAnswer,
} from '#rates/rate_http'

/**
 * Binance spot last prices (https://developers.binance.com/docs/binance-spot-api-docs/rest-api/market-data-endpoints#symbol-price-ticker):
 *   GET {base}/api/v3/ticker/price?symbols=["TRXUSDT","ETHUSDT"]   (a JSON array, URL-encoded)
 *   → [{ "symbol": "TRXUSDT", "price": "0.27120000" }, …]
 * Every token is priced in USDT (quote `USDT`; the core crosses it to the
 * fiat through USD), USDC too (USDCUSDT). USDT itself is not priced: Binance
 * has no USDT/fiat ticker the core could use without guessing a direction.
 *
 * Errors (https://developers.binance.com/docs/binance-spot-api-docs/rest-api/limits):
 * - HTTP 429 `{"code":-1003,"msg":"Too many requests; …"}` with Retry-After (seconds);
 * - HTTP 418: the IP is banned for ignoring 429s (Retry-After up to days);
 * - HTTP 400 `{"code":-1121,"msg":"Invalid symbol."}`: one unknown symbol
 *   fails the whole request without saying which. The source then asks for
 *   each symbol alone, leaves out those Binance does not list and remembers
 *   them (per base URL) so the next refresh asks for the others only.
 */

const LABEL = 'Binance'
const DEFAULT_URL = 'https://api.binance.com'
/** When a 429/418/-1003 has no Retry-After: Binance's request-weight window is one minute. */
const RATE_LIMIT_PAUSE_MS = 60_000

/** Tokens priced as <TOKEN>USDT. */
export const BINANCE_TOKENS: ReadonlySet<string> = new Set([
  'BTC',
  'ETH',
  'BNB',
  'TRX',
  'POL',
  'SOL',
  'TON',
  'USDC',
])

/** Symbols Binance answered -1121 for, per base URL: not asked again (a restart forgets). */
const unknownSymbols = new Map<string, Set<string>>()

/** Forgets the symbols learnt unknown (tests). */
export function forgetUnknownBinanceSymbols() {
  unknownSymbols.clear()
}

function supports(pair: RatePair) {
  return BINANCE_TOKENS.has(pair.token) && /^[A-Z]{3}$/.test(pair.fiat)
}

function binanceError(body: unknown): { code: number | null; msg: string } {
  const object = asObject(body)
  const code = object && object.code !== undefined ? Number(object.code) : null
  return {
    code: Number.isFinite(code) ? code : null,
    msg: typeof object?.msg === 'string' ? object.msg : '',
  }
}

/** The failure for a non-2xx answer other than -1121. */
function failure(answer: JsonAnswer): RateSourceFailure {
  const { code, msg } = binanceError(answer.body)
  const what = msg ? `${msg}${code !== null ? ` (code ${code})` : ''}` : ''
  if (answer.status === 418) {
    const wait = retryAfterMs(answer.headers, RATE_LIMIT_PAUSE_MS)
    return new RateSourceFailure(
      `${LABEL}: HTTP 418: this IP is banned for exceeding the rate limit${what ? `: ${what}` : ''}${retryAfterText(wait)}`,
      wait
    )
  }
  if (answer.status === 429 || code === -1003) {
    const wait = retryAfterMs(answer.headers, RATE_LIMIT_PAUSE_MS)
    return new RateSourceFailure(
      `${LABEL}: HTTP ${answer.status}: ${what || 'too many requests'}${retryAfterText(wait)}`,
      wait
    )
  }
  if (answer.body === undefined) return notJson(LABEL, answer)
  return new RateSourceFailure(`${LABEL}: HTTP ${answer.status}: ${what || 'error'}`)
}

const isUnknownSymbol = (answer: JsonAnswer) =>
  answer.status === 400 && binanceError(answer.body).code === -1121

/** symbol → price from a ticker answer (an array, or one object for `symbol=`). */
function prices(answer: JsonAnswer): Map<string, Decimal> {
  if (!Array.isArray(answer.body) && !asObject(answer.body))
    throw new RateSourceFailure(`${LABEL}: HTTP ${answer.status}: not a ticker list`)
  const rows = Array.isArray(answer.body) ? answer.body : [answer.body]
  const found = new Map<string, Decimal>()
  for (const row of rows) {
    const object = asObject(row)
    if (!object || typeof object.symbol !== 'string') continue
    const price = positivePrice(object.price)
    if (price) found.set(object.symbol, price)
  }
  return found
}

export const binanceSource: LiveRateSource = {
  name: 'binance',
  description: 'Binance spot last prices (in USDT)',
  defaultUrl: DEFAULT_URL,
  kind: 'market',
  supports,

  async quote(pairs, context) {
    const base = baseUrlOf(context.baseUrl, DEFAULT_URL)
    const unknown = unknownSymbols.get(base) ?? new Set<string>()
    const tokens = [...new Set(pairs.filter(supports).map((pair) => pair.token))]
    const symbols = tokens.map((token) => `${token}USDT`).filter((s) => !unknown.has(s))
    if (symbols.length === 0) return []

    const ask = (parameter: 'symbols' | 'symbol', value: string) => {
      const url = new URL(`${base}/api/v3/ticker/price`)
      url.searchParams.set(parameter, value)
      return getJson(LABEL, url, { signal: context.signal })
    }

    let found = new Map<string, Decimal>()
    const answer = await ask('symbols', JSON.stringify(symbols))
    if (answer.status >= 200 && answer.status <= 299) {
      if (answer.body === undefined) throw notJson(LABEL, answer)
      found = prices(answer)
    } else if (isUnknownSymbol(answer)) {
      // Which one Binance does not say: each alone (the others' prices are kept).
      for (const symbol of symbols) {
        const single = await ask('symbol', symbol)
        if (isUnknownSymbol(single)) {
          unknown.add(symbol)
          unknownSymbols.set(base, unknown)
          continue
        }
        if (single.status < 200 || single.status > 299) throw failure(single)
        if (single.body === undefined) throw notJson(LABEL, single)
        for (const [name, price] of prices(single)) found.set(name, price)
      }
    } else {
      throw failure(answer)
    }

    const quotes: RateQuote[] = []
    for (const token of tokens) {
      const price = found.get(`${token}USDT`)
      if (price) quotes.push({ token, quote: 'USDT', price })
    }
    return quotes
  },
}
