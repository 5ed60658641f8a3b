import {
  RateSourceFailure,
  type LiveRateSource,
  type RatePair,
  type RateQuote,
} from '#rates/live_rate_source'
import type { Decimal } from '#support/text/money'
import { asObject, baseUrlOf, getJson, notJson, positivePrice } from '#rates/rate_http'
import { okxEnvelope, okxRateLimited } from '#plugins/rate_okx/okx_source'

/**
 * OKX P2P (C2C) offers for USDT against CNY: the price Chinese shops use.
 *
 * UNOFFICIAL: OKX documents no public API for its P2P market. This is the
 * endpoint its own P2P web page calls, as used by many open-source bots
 * (found by searching public code; not confirmed by OKX documentation):
 *   GET {base}/v3/c2c/tradingOrders/books?quoteCurrency=cny&baseCurrency=usdt&side=sell&paymentMethod=all&userType=all
 *   → {"code":0,"msg":"","data":{"sell":[{"price":"7.21","nickName":"…","availableAmount":"…",…},…],"buy":[…]}}
 * `code` is a number there (0 when fine); a string is accepted too. It may
 * change without notice, and OKX's bot protection may answer an HTML page
 * (a failure, "not JSON"). Keep another USDT/CNY source enabled.
 *
 * `side=sell` lists the advertisers who sell USDT for CNY: what a payer
 * pays to get the USDT they pay us with. The price is the MEDIAN OF THE
 * BEST 10 OFFERS (the lowest asks, sorted here whatever order the answer
 * has): one advertiser's bait price or a stale high ask does not move it,
 * and it follows the market a payer actually sees. Fewer than 3 offers: a
 * market too thin to price, the pair is left out.
 */

const LABEL = 'OKX P2P'
const DEFAULT_URL = 'https://www.okx.com'
export const P2P_BEST_OFFERS = 10
export const P2P_MIN_OFFERS = 3

/** Tokens × fiats it prices (CNY only: the market this source is for). */
const TOKENS = new Set(['USDT', 'USDC'])
const FIATS = new Set(['CNY'])

function supports(pair: RatePair) {
  return TOKENS.has(pair.token) && FIATS.has(pair.fiat)
}

/** The median of the best (lowest) `P2P_BEST_OFFERS` asks; null under `P2P_MIN_OFFERS`. */
export function p2pPrice(asks: Decimal[]): Decimal | null {
  const best = [...asks].sort((a, b) => a.comparedTo(b) ?? 0).slice(0, P2P_BEST_OFFERS)
  if (best.length < P2P_MIN_OFFERS) return null
  const middle = Math.floor(best.length / 2)
  return best.length % 2 === 1 ? best[middle] : best[middle - 1].plus(best[middle]).dividedBy(2)
}

async function book(base: string, pair: RatePair, signal: AbortSignal) {
  const url = new URL(`${base}/v3/c2c/tradingOrders/books`)
  url.searchParams.set('quoteCurrency', pair.fiat.toLowerCase())
  url.searchParams.set('baseCurrency', pair.token.toLowerCase())
  url.searchParams.set('side', 'sell')
  url.searchParams.set('paymentMethod', 'all')
  url.searchParams.set('userType', 'all')
  const answer = await getJson(LABEL, url, { signal })
  const limited = okxRateLimited(LABEL, answer)
  if (limited) throw limited
  const { code, msg } = okxEnvelope(answer.body)
  if (code === null) {
    if (answer.body === undefined) throw notJson(LABEL, answer)
    throw new RateSourceFailure(`${LABEL}: HTTP ${answer.status}: not an OKX answer`)
  }
  if (code !== '0' || answer.status < 200 || answer.status > 299)
    throw new RateSourceFailure(`${LABEL}: HTTP ${answer.status}, code ${code}: ${msg || 'error'}`)
  const sell = asObject(asObject(answer.body)!.data)?.sell
  if (!Array.isArray(sell)) return null
  const asks = sell.flatMap((offer) => {
    const price = positivePrice(asObject(offer)?.price)
    return price ? [price] : []
  })
  const price = p2pPrice(asks)
  return price ? ({ token: pair.token, quote: pair.fiat, price } satisfies RateQuote) : null
}

export const okxP2pSource: LiveRateSource = {
  name: 'okx_p2p',
  description: 'OKX P2P offers for USDT in CNY (median of the best 10 asks)',
  defaultUrl: DEFAULT_URL,
  kind: 'market',
  supports,

  async quote(pairs, context) {
    const base = baseUrlOf(context.baseUrl, DEFAULT_URL)
    const wanted = pairs.filter(supports)
    const quotes: RateQuote[] = []
    // One after the other: a public page's endpoint, asked gently.
    for (const pair of wanted) {
      const quote = await book(base, pair, context.signal)
      if (quote) quotes.push(quote)
    }
    return quotes
  },
}
