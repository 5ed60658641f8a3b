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
  type JsonAnswer,
} from '#rates/rate_http'

/**
 * OKX spot tickers (https://www.okx.com/docs-v5/en/#public-data-rest-api-get-ticker):
 *   GET {base}/api/v5/market/ticker?instId=TRX-USDT
 *   → {"code":"0","msg":"","data":[{"instId":"TRX-USDT","last":"0.2712","ts":"1597026383085",…}]}
 * One instrument per request (the few tokens we price cost less than the
 * whole `tickers?instType=SPOT` list); the requests run together, well
 * under the endpoint's 20 requests per 2 s. Prices are in USDT (quote
 * `USDT`), USDC too (USDC-USDT); USDT itself is the OKX P2P source's.
 *
 * OKX answers errors in the body's `code` (a string, "0" when fine), often
 * with HTTP 200: "51001" (the instrument does not exist) leaves the token
 * out; "50011" (rate limit reached; also sent with HTTP 429) makes the
 * source wait 2 s (the limit's window) unless Retry-After says longer; any
 * other code is a failure naming it.
 */

const LABEL = 'OKX'
const DEFAULT_URL = 'https://www.okx.com'
/** OKX's rate-limit windows are 2 s. */
export const OKX_RATE_LIMIT_PAUSE_MS = 2000

export const OKX_SPOT_TOKENS: ReadonlySet<string> = new Set([
  'BTC',
  'ETH',
  'BNB',
  'TRX',
  'POL',
  'SOL',
  'TON',
  'USDC',
])

function supports(pair: RatePair) {
  return OKX_SPOT_TOKENS.has(pair.token) && /^[A-Z]{3}$/.test(pair.fiat)
}

/** "code" and "msg" of an OKX envelope (code as a string; numbers accepted). */
export function okxEnvelope(body: unknown): { code: string | null; msg: string } {
  const object = asObject(body)
  const code = object?.code
  return {
    code: typeof code === 'string' || typeof code === 'number' ? String(code) : null,
    msg: typeof object?.msg === 'string' ? object.msg : '',
  }
}

/** The failure for a rate limit (HTTP 429 or code 50011), or null. */
export function okxRateLimited(label: string, answer: JsonAnswer): RateSourceFailure | null {
  const { code, msg } = okxEnvelope(answer.body)
  if (answer.status !== 429 && code !== '50011') return null
  const wait = Math.max(
    retryAfterMs(answer.headers, OKX_RATE_LIMIT_PAUSE_MS) ?? 0,
    OKX_RATE_LIMIT_PAUSE_MS
  )
  return new RateSourceFailure(
    `${label}: HTTP ${answer.status}${code ? `, code ${code}` : ''}: ${msg || 'rate limit reached'}${retryAfterText(wait)}`,
    wait
  )
}

/** The token's price, null when OKX does not list it (51001, or no data). */
async function ticker(base: string, token: string, signal: AbortSignal): Promise<RateQuote | null> {
  const url = new URL(`${base}/api/v5/market/ticker`)
  url.searchParams.set('instId', `${token}-USDT`)
  const answer = await getJson(LABEL, url, { signal })
  const limited = okxRateLimited(LABEL, answer)
  if (limited) throw limited
  const { code, msg } = okxEnvelope(answer.body)
  if (code === null) {
    if (answer.body === undefined) throw notJson(LABEL, answer)
    throw new RateSourceFailure(`${LABEL}: HTTP ${answer.status}: not an OKX answer`)
  }
  if (code === '51001') return null
  if (code !== '0' || answer.status < 200 || answer.status > 299)
    throw new RateSourceFailure(`${LABEL}: HTTP ${answer.status}, code ${code}: ${msg || 'error'}`)
  const data = asObject(answer.body)!.data
  const row = Array.isArray(data)
    ? data.map(asObject).find((entry) => entry?.instId === `${token}-USDT`)
    : undefined
  const price = positivePrice(row?.last)
  if (!row || !price) return null
  const ts = positivePrice(row.ts)
  return { token, quote: 'USDT', price, ...(ts ? { observedAt: ts.toNumber() } : {}) }
}

export const okxSource: LiveRateSource = {
  name: 'okx',
  description: 'OKX spot last prices (in USDT)',
  defaultUrl: DEFAULT_URL,
  kind: 'market',
  supports,

  async quote(pairs, context) {
    const base = baseUrlOf(context.baseUrl, DEFAULT_URL)
    const tokens = [...new Set(pairs.filter(supports).map((pair) => pair.token))]
    const settled = await Promise.allSettled(
      tokens.map((token) => ticker(base, token, context.signal))
    )
    const reasons = settled.flatMap((result) =>
      result.status === 'rejected' ? [result.reason] : []
    )
    // A rate limit first: its wait is what the core must honour.
    const limited = reasons.find(
      (reason) => reason instanceof RateSourceFailure && reason.retryAfterMs !== undefined
    )
    if (limited || reasons.length > 0) throw limited ?? reasons[0]
    return settled.flatMap((result) =>
      result.status === 'fulfilled' && result.value ? [result.value] : []
    )
  },
}
