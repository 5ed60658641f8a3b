import { Decimal } from '#support/money'
import { RateSourceFailure } from '#rates/live_rate_source'

/**
 * What the Coinbase, Kraken, Frankfurter and JSON rate sources share: one
 * GET with the refresh's signal (global fetch: nothing loads undici here),
 * the body parsed as JSON with every number kept as the digits sent,
 * Retry-After read, prices checked. (plugins/rate_coingecko/rate_http.ts
 * does the same for CoinGecko, Binance and OKX: both belong in app/rates/.)
 */

export type JsonAnswer = {
  status: number
  headers: Headers
  /** The parsed body; `undefined` when it is not JSON (an HTML error page, an empty body). */
  body: unknown
}

/**
 * JSON.parse keeping numbers as the text the API sent ("7.2100000000000000123",
 * never a double's rounding): the reviver's context carries the source text
 * of primitives (Node ≥ 21).
 */
export function parseJsonExact(text: string): unknown {
  const reviver = (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined ? context.source : value
  return JSON.parse(text, reviver as (key: string, value: unknown) => unknown)
}

/**
 * GET `url` for `label` ("Kraken"). The signal ending it (the refresh's
 * deadline), a network error or a body cut short: RateSourceFailure. The
 * message names the path, never the whole URL (a mirror's may carry a secret).
 */
export async function getJson(
  label: string,
  url: URL,
  options: { signal: AbortSignal; headers?: Record<string, string> }
): Promise<JsonAnswer> {
  let response: Response
  let text: string
  try {
    response = await fetch(url, {
      signal: options.signal,
      headers: { accept: 'application/json', ...options.headers },
      redirect: 'follow',
    })
    text = await response.text()
  } catch (error) {
    if (options.signal.aborted)
      throw new RateSourceFailure(
        `${label}: no answer before the refresh deadline (${url.pathname})`
      )
    throw new RateSourceFailure(
      `${label}: ${url.pathname} is unreachable: ${(error as Error).message}`
    )
  }
  let body: unknown
  try {
    body = text.trim() === '' ? undefined : parseJsonExact(text)
  } catch {
    body = undefined
  }
  return { status: response.status, headers: response.headers, body }
}

/** For an answer whose body is not the API's JSON (a proxy's or CDN's page, nothing). */
export function notJson(label: string, answer: JsonAnswer): RateSourceFailure {
  return new RateSourceFailure(
    `${label}: HTTP ${answer.status} without a JSON body (a proxy's or CDN's error page?)`
  )
}

/** Retry-After in ms (delta-seconds or an HTTP date); `fallbackMs` when absent or unreadable. */
export function retryAfterMs(headers: Headers, fallbackMs: number): number {
  const value = headers.get('retry-after')?.trim()
  if (value) {
    if (/^\d+$/.test(value)) return Number(value) * 1000
    const date = Date.parse(value)
    if (Number.isFinite(date)) return Math.max(0, date - Date.now())
  }
  return fallbackMs
}

/** ", retry after 60 s" for a message. */
export function retryAfterText(ms: number): string {
  return `, retry after ${Math.ceil(ms / 1000)} s`
}

const NUMBER_TEXT = /^[+]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/

/**
 * A price as the API gave it (a decimal string, or a JSON number's source
 * text): a positive finite Decimal, or null (missing, zero, negative, NaN,
 * Infinity, not a number).
 */
export function positivePrice(value: unknown): Decimal | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null
  const text = String(value).trim()
  if (!NUMBER_TEXT.test(text)) return null
  const price = new Decimal(text)
  return price.isFinite() && price.gt(0) ? price : null
}

/** A JSON object (not an array, not null), else null. */
export function asObject(value: unknown): Record<string, unknown> | null {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null
}

/** The base URL to use: the setting's, else the source's own; no trailing slash. */
export function baseUrlOf(contextBaseUrl: string, defaultUrl: string): string {
  return (contextBaseUrl.trim() || defaultUrl).replace(/\/+$/, '')
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
