import { Decimal } from '#support/text/money'
import { RateSourceFailure } from '#rates/live_rate_source'

/**
 * What the rate source plugins share: one GET with the refresh's signal,
 * the answer parsed as JSON with every number kept as its source text,
 * Retry-After read, prices checked.
 */

export type JsonAnswer = {
  status: number
  headers: Headers
  /** The parsed body; `undefined` when it is not JSON (an HTML error page, an empty body). */
  body: unknown
}

/**
 * JSON.parse keeping numbers as the digits the API sent ("7.21000001", never
 * a float's rounding): the reviver's third argument carries the source text
 * of primitives (Node ≥ 21).
 */
export function parseJsonExact(text: string): unknown {
  const reviver = (_key: string, value: unknown, context?: { source?: string }) =>
    typeof value === 'number' && context?.source !== undefined ? context.source : value
  return JSON.parse(text, reviver as (key: string, value: unknown) => unknown)
}

/**
 * GET `url` as `sourceLabel` (the source's label). A network error, the signal
 * (the refresh's deadline) or a body that never ends: RateSourceFailure.
 * The URL is not put in messages (a mirror's URL may carry credentials).
 */
export async function getJson(
  sourceLabel: string,
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
        `${sourceLabel}: no answer before the refresh deadline (${url.pathname})`
      )
    throw new RateSourceFailure(
      `${sourceLabel}: ${url.pathname} is unreachable: ${(error as Error).message}`
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

/** "HTTP 502, not JSON": for an answer whose body is not the API's. */
export function notJson(sourceLabel: string, answer: JsonAnswer): RateSourceFailure {
  return new RateSourceFailure(
    `${sourceLabel}: HTTP ${answer.status} without a JSON body (a proxy's or CDN's error page?)`
  )
}

/**
 * Retry-After in ms: delta-seconds or an HTTP date; `fallbackMs` when the
 * header is missing or unreadable.
 */
export function retryAfterMs(headers: Headers, fallbackMs?: number): number | undefined {
  const value = headers.get('retry-after')?.trim()
  if (value) {
    if (/^\d+$/.test(value)) return Number(value) * 1000
    const date = Date.parse(value)
    if (Number.isFinite(date)) return Math.max(0, date - Date.now())
  }
  return fallbackMs
}

/** ", retry after 60 s" for a message. */
export function retryAfterText(ms: number | undefined): string {
  return ms === undefined ? '' : `, retry after ${Math.ceil(ms / 1000)} s`
}

/**
 * A price as the API gave it (a decimal string, or a number's source
 * text): a positive finite Decimal, or null (missing, zero, negative,
 * "NaN", not a number at all).
 */
export function positivePrice(value: unknown): Decimal | null {
  if (typeof value !== 'string' && typeof value !== 'number') return null
  const text = String(value).trim()
  if (!/^[+]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text)) return null
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
