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
 * Kraken's public ticker (https://docs.kraken.com/api/docs/rest-api/get-ticker-information):
 *   GET {base}/0/public/Ticker?pair=TRXUSD,XBTEUR,USDTUSD
 *   → {"error":[],"result":{"TRXUSD":{"c":["0.2712","100"],…},"XXBTZEUR":{…},"USDTZUSD":{…}}}
 * `c[0]` is the last trade's price, a decimal string. All pairs in one request.
 *
 * Kraken's habits:
 * - result keys are Kraken's own pair names, not always the ones asked
 *   (XBTUSD → XXBTZUSD, ETHUSD → XETHZUSD, USDTUSD → USDTZUSD): mapped back
 *   by the known spellings, or positionally when one pair was asked;
 * - errors come in HTTP 200 with `error` non-empty. One unknown pair fails
 *   the whole request (`EQuery:Unknown asset pair`, without saying which):
 *   the request is split in halves until the unknown pairs are found; they
 *   are left out and not asked again for UNKNOWN_PAIR_MEMORY_MS;
 * - `EAPI:Rate limit exceeded` / `EGeneral:Too many requests`: a failure
 *   with a wait (Retry-After when sent, else 60 s). Entries starting with W
 *   are warnings, not errors.
 *
 * Kraken quotes USD, EUR, GBP, CAD, JPY, CHF and AUD directly: a pair in
 * one of them is priced in it; any other fiat (CNY …) is priced in USD and
 * the core crosses it. The USD pair is asked alongside the direct one, so a
 * direct pair Kraken turns out not to list still gets the USD price.
 * The ticker carries no time: no `observedAt`.
 */

const LABEL = 'Kraken'
const DEFAULT_URL = 'https://api.kraken.com'
const RATE_LIMIT_PAUSE_MS = 60_000
/** How long a pair Kraken called unknown is not asked again. */
export const UNKNOWN_PAIR_MEMORY_MS = 24 * 60 * 60 * 1000

/** Our tokens as Kraken names them in pair names (its "altname"). */
export const KRAKEN_ASSETS: Readonly<Record<string, string>> = {
  BTC: 'XBT',
  ETH: 'ETH',
  USDT: 'USDT',
  USDC: 'USDC',
  TRX: 'TRX',
  SOL: 'SOL',
  POL: 'POL',
  TON: 'TON',
}

/** The fiats Kraken trades against. */
export const KRAKEN_FIATS: ReadonlySet<string> = new Set([
  'USD',
  'EUR',
  'GBP',
  'CAD',
  'JPY',
  'CHF',
  'AUD',
])

/** Pair name → when it may be asked again. */
const unknownPairs = new Map<string, number>()

/** Forgets the pairs Kraken called unknown (tests; a listing Kraken added). */
export function forgetUnknownKrakenPairs() {
  unknownPairs.clear()
}

function isKnownUnknown(name: string) {
  const until = unknownPairs.get(name)
  if (until === undefined) return false
  if (until > Date.now()) return true
  unknownPairs.delete(name)
  return false
}

function supports(pair: RatePair) {
  return Object.hasOwn(KRAKEN_ASSETS, pair.token) && /^[A-Z]{3}$/.test(pair.fiat)
}

type KrakenPair = { name: string; asset: string; fiat: string }

/** The spellings Kraken may key a pair's result with. */
function spellings(pair: KrakenPair): string[] {
  const { asset, fiat } = pair
  return [
    pair.name,
    `X${asset}Z${fiat}`,
    `${asset}Z${fiat}`,
    `X${asset}${fiat}`,
    `${asset}/${fiat}`,
  ]
}

function krakenErrors(body: unknown): string[] {
  const list = asObject(body)?.error
  if (!Array.isArray(list)) return []
  return list.filter((entry): entry is string => typeof entry === 'string' && entry.startsWith('E'))
}

function isRateLimit(error: string) {
  return /^EAPI:Rate limit exceeded|^EGeneral:Too many requests/i.test(error)
}

/**
 * Tickers of `asked` (Kraken pair name → its ticker object), splitting the
 * request when Kraken calls a pair unknown.
 */
async function tickers(
  base: string,
  asked: KrakenPair[],
  signal: AbortSignal
): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>()
  if (asked.length === 0) return found
  const url = new URL(`${base}/0/public/Ticker`)
  url.searchParams.set('pair', asked.map((pair) => pair.name).join(','))
  const answer = await getJson(LABEL, url, { signal })

  if (answer.status === 429) {
    const wait = retryAfterMs(answer.headers, RATE_LIMIT_PAUSE_MS)
    throw new RateSourceFailure(
      `${LABEL}: HTTP 429: too many requests${retryAfterText(wait)}`,
      wait
    )
  }
  if (answer.body === undefined) throw notJson(LABEL, answer)
  const errors = krakenErrors(answer.body)
  const limit = errors.find(isRateLimit)
  if (limit) {
    const wait = retryAfterMs(answer.headers, RATE_LIMIT_PAUSE_MS)
    throw new RateSourceFailure(`${LABEL}: ${limit}${retryAfterText(wait)}`, wait)
  }
  if (errors.some((error) => error.startsWith('EQuery:Unknown asset pair'))) {
    if (asked.length === 1) {
      unknownPairs.set(asked[0].name, Date.now() + UNKNOWN_PAIR_MEMORY_MS)
      return found
    }
    const half = Math.ceil(asked.length / 2)
    for (const part of [asked.slice(0, half), asked.slice(half)])
      for (const [name, ticker] of await tickers(base, part, signal)) found.set(name, ticker)
    return found
  }
  if (errors.length > 0) throw new RateSourceFailure(`${LABEL}: ${errors.join('; ')}`)
  if (answer.status < 200 || answer.status > 299)
    throw new RateSourceFailure(`${LABEL}: HTTP ${answer.status}`)
  const result = asObject(asObject(answer.body)?.result)
  if (!result) throw new RateSourceFailure(`${LABEL}: the answer has no result`)

  const keys = Object.keys(result)
  for (const pair of asked) {
    let key = spellings(pair).find((spelling) => Object.hasOwn(result, spelling))
    if (key === undefined && asked.length === 1 && keys.length === 1) key = keys[0]
    const ticker = key === undefined ? null : asObject(result[key])
    if (ticker) found.set(pair.name, ticker)
  }
  return found
}

function lastPrice(ticker: Record<string, unknown> | undefined) {
  const close = ticker?.c
  return Array.isArray(close) ? positivePrice(close[0]) : null
}

export const krakenSource: LiveRateSource = {
  name: 'kraken',
  description: 'Kraken public ticker',
  defaultUrl: DEFAULT_URL,
  kind: 'market',

  supports,

  async quote(pairs, context) {
    const wanted = pairs.filter(supports)
    if (wanted.length === 0) return []
    const base = baseUrlOf(context.baseUrl, DEFAULT_URL)

    const krakenPair = (token: string, fiat: string): KrakenPair => {
      const asset = KRAKEN_ASSETS[token]
      return { name: `${asset}${fiat}`, asset, fiat }
    }
    const plan = wanted.map((pair) => ({
      pair,
      direct: KRAKEN_FIATS.has(pair.fiat) ? krakenPair(pair.token, pair.fiat) : null,
      usd: krakenPair(pair.token, 'USD'),
    }))
    const asked = new Map<string, KrakenPair>()
    for (const { direct, usd } of plan)
      for (const candidate of [direct, usd])
        if (candidate && !isKnownUnknown(candidate.name)) asked.set(candidate.name, candidate)

    const found = await tickers(base, [...asked.values()], context.signal)

    const quotes: RateQuote[] = []
    const seen = new Set<string>()
    for (const { pair, direct, usd } of plan) {
      const directPrice = direct ? lastPrice(found.get(direct.name)) : null
      const [quote, price] = directPrice
        ? [pair.fiat, directPrice]
        : ['USD', lastPrice(found.get(usd.name))]
      if (!price || seen.has(`${pair.token}/${quote}`)) continue
      seen.add(`${pair.token}/${quote}`)
      quotes.push({ token: pair.token, quote, price })
    }
    return quotes
  },
}
