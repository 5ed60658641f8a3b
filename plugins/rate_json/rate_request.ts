import { retryAfterMs as sharedRetryAfterMs } from '#rates/rate_http'

/**
 * What the Coinbase, Kraken, Frankfurter and JSON rate sources use besides
 * the sources' shared HTTP helper (app/rates/rate_http.ts: one GET with the
 * refresh's signal, JSON numbers kept as the digits sent, Retry-After,
 * price checks), which is re-exported here.
 */
export {
  asObject,
  baseUrlOf,
  getJson,
  notJson,
  parseJsonExact,
  positivePrice,
  retryAfterText,
  type JsonAnswer,
} from '#rates/rate_http'

/** Retry-After in ms (delta-seconds or an HTTP date); `fallbackMs` when absent or unreadable. */
export function retryAfterMs(headers: Headers, fallbackMs: number): number {
  return sharedRetryAfterMs(headers, fallbackMs) ?? fallbackMs
}

/** The tokens the gateway's chains carry (the market sources price these). */
export const GATEWAY_TOKENS: ReadonlySet<string> = new Set([
  'USDT',
  'USDC',
  'TRX',
  'ETH',
  'BNB',
  'POL',
  'SOL',
  'TON',
  'BTC',
  'XPL',
])

/** An ISO 4217-shaped code: three upper-case letters. */
export function isCurrencyCode(code: string): boolean {
  return /^[A-Z]{3}$/.test(code)
}
