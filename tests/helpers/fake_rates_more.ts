import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * One local HTTP server (127.0.0.1, a free port) answering at the real paths
 * of Coinbase, Kraken, Frankfurter and a CDN-style JSON rate API, with their
 * documented bodies and habits (tests/helpers/fake_rates.ts does CoinGecko,
 * Binance and OKX):
 *
 * - Coinbase `GET /v2/exchange-rates?currency=TRX` →
 *   `{"data":{"currency":"TRX","rates":{"USD":"0.27",…}}}` (strings); a currency
 *   it does not know → 400 `{"errors":[{"id":"not_found","message":"Invalid currency"}]}`;
 *   over the limit → 429 `{"errors":[{"id":"rate_limit_exceeded","message":"Too many requests"}]}`.
 * - Kraken `GET /0/public/Ticker?pair=A,B` → `{"error":[],"result":{"<Kraken's key>":{"c":["<last>","<vol>"],…}}}`
 *   keyed by Kraken's own names (XXBTZUSD for XBTUSD); one unknown pair →
 *   HTTP 200 `{"error":["EQuery:Unknown asset pair"]}` for the whole request;
 *   over the limit → HTTP 200 `{"error":["EAPI:Rate limit exceeded"]}`.
 * - Frankfurter `GET /v1/latest?base=USD&symbols=CNY,EUR` (and `/latest`, the
 *   old host's path, with `from`/`to` too) → `{"amount":1.0,"base":"USD","date":…,"rates":{…}}`
 *   (JSON numbers, written as the digits set); an unknown currency → 404 `{"message":"not found"}`.
 * - JSON rates `GET /json/<fiat>.json` → `{"date":…,"<fiat>":{"<token>":<tokens per fiat>}}`
 *   (JSON numbers as the digits set); a fiat it has no file for → 404 (text).
 *
 * Failures are injected per route, one per request: 'hang' (never answers),
 * 'html_502' (a CDN's error page), 'empty' (HTTP 200 with the API's empty
 * answer), any status/body/headers (the body sent as JSON), or any
 * status/text/headers (the text sent as it is, `text/html` unless the
 * headers say otherwise: a captive portal's or a CDN's page in an HTTP 200). Per-route limits refuse requests
 * beyond `max` per window the way the API does (with Retry-After when
 * given). Every request is recorded.
 */

export type FakeRouteB = 'coinbase' | 'kraken' | 'frankfurter' | 'json'

export type InjectedB =
  | 'hang'
  | 'html_502'
  | 'empty'
  | { status: number; body: unknown; headers?: Record<string, string> }
  | { status: number; text: string; headers?: Record<string, string> }

export type RecordedRequestB = {
  route: FakeRouteB | 'unknown'
  path: string
  query: Record<string, string>
  headers: IncomingMessage['headers']
}

export type RouteLimitB = { max: number; windowMs: number; retryAfterSeconds?: number }

export const COINBASE_NOT_FOUND = {
  errors: [{ id: 'not_found', message: 'Invalid currency' }],
}
export const COINBASE_RATE_LIMITED = {
  errors: [{ id: 'rate_limit_exceeded', message: 'Too many requests' }],
}
export const KRAKEN_UNKNOWN_PAIR = { error: ['EQuery:Unknown asset pair'] }
export const KRAKEN_RATE_LIMITED = { error: ['EAPI:Rate limit exceeded'] }

const HTML_502 =
  '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>cloudflare</center></body></html>'

function routeOf(path: string): FakeRouteB | undefined {
  if (path === '/v2/exchange-rates') return 'coinbase'
  if (path === '/0/public/Ticker') return 'kraken'
  if (path === '/v1/latest' || path === '/latest') return 'frankfurter'
  if (/^\/json\/[^/]+\.json$/.test(path)) return 'json'
  return undefined
}

export class FakeRatesMore {
  url = ''
  requests: RecordedRequestB[] = []
  /** Coinbase: token → currency → rate digits (units of the currency per token). */
  coinbaseRates = new Map<string, Map<string, string>>()
  /** Kraken: the pair name asked (TRXUSD) → the key it answers under and the last price. */
  krakenTickers = new Map<string, { key: string; last: string }>()
  /** Frankfurter: currency → rate digits (per 1 USD), and the date it answers. */
  frankfurterRates = new Map<string, string>()
  frankfurterDate = '2026-11-26'
  /** JSON rates: fiat (lower-case) → token (lower-case) → tokens per 1 fiat (digits). */
  jsonTables = new Map<string, Map<string, string>>()
  injected: Record<FakeRouteB, InjectedB[]> = {
    coinbase: [],
    kraken: [],
    frankfurter: [],
    json: [],
  }
  limits: Partial<Record<FakeRouteB, RouteLimitB>> = {}
  #windows = new Map<FakeRouteB, { startedAt: number; served: number }>()
  #server: Server | null = null
  #hanging = new Set<ServerResponse>()

  async start() {
    this.#server = createServer((request, response) => {
      request.resume()
      request.on('end', () => this.#handle(request, response))
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`
    return this
  }

  async stop() {
    for (const response of this.#hanging) response.destroy()
    this.#hanging.clear()
    this.#server?.closeAllConnections()
    await new Promise<void>((resolve) =>
      this.#server ? this.#server.close(() => resolve()) : resolve()
    )
  }

  reset() {
    this.requests = []
    this.coinbaseRates.clear()
    this.krakenTickers.clear()
    this.frankfurterRates.clear()
    this.frankfurterDate = '2026-11-26'
    this.jsonTables.clear()
    this.injected = { coinbase: [], kraken: [], frankfurter: [], json: [] }
    this.limits = {}
    this.#windows.clear()
  }

  setCoinbase(token: string, currency: string, rate: string) {
    const table = this.coinbaseRates.get(token) ?? new Map<string, string>()
    table.set(currency, rate)
    this.coinbaseRates.set(token, table)
  }

  /** `pair` as asked (ETHUSD); `key` as Kraken answers it (XETHZUSD), the same by default. */
  setKraken(pair: string, last: string, key = pair) {
    this.krakenTickers.set(pair, { key, last })
  }

  setFrankfurter(currency: string, rate: string) {
    this.frankfurterRates.set(currency, rate)
  }

  setJson(fiat: string, token: string, tokensPerFiat: string) {
    const table = this.jsonTables.get(fiat.toLowerCase()) ?? new Map<string, string>()
    table.set(token.toLowerCase(), tokensPerFiat)
    this.jsonTables.set(fiat.toLowerCase(), table)
  }

  inject(route: FakeRouteB, ...failures: InjectedB[]) {
    this.injected[route].push(...failures)
  }

  limit(route: FakeRouteB, limit: RouteLimitB) {
    this.limits[route] = limit
    this.#windows.delete(route)
  }

  requestsTo(route: FakeRouteB) {
    return this.requests.filter((request) => request.route === route)
  }

  #handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? '/', 'http://fake')
    const route = routeOf(url.pathname)
    this.requests.push({
      route: route ?? 'unknown',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: request.headers,
    })
    if (!route || request.method !== 'GET')
      return this.#send(response, 404, '<html><body><h1>404 Not Found</h1></body></html>', {
        'content-type': 'text/html',
      })

    const injected = this.injected[route].shift()
    if (injected === 'hang') {
      this.#hanging.add(response)
      response.on('close', () => this.#hanging.delete(response))
      return
    }
    if (injected === 'html_502')
      return this.#send(response, 502, HTML_502, { 'content-type': 'text/html' })
    if (injected && injected !== 'empty' && 'text' in injected)
      return this.#send(response, injected.status, injected.text, {
        'content-type': 'text/html; charset=utf-8',
        ...injected.headers,
      })
    if (injected && injected !== 'empty')
      return this.#json(response, injected.status, JSON.stringify(injected.body), injected.headers)
    if (this.#refuse(route, response)) return

    const empty = injected === 'empty'
    if (route === 'coinbase') return this.#coinbase(url, response, empty)
    if (route === 'kraken') return this.#kraken(url, response, empty)
    if (route === 'frankfurter') return this.#frankfurter(url, response, empty)
    return this.#jsonRates(url, response, empty)
  }

  /** Over the route's limit: the API's own refusal. */
  #refuse(route: FakeRouteB, response: ServerResponse): boolean {
    const limit = this.limits[route]
    if (!limit) return false
    const now = Date.now()
    let window = this.#windows.get(route)
    if (!window || now - window.startedAt >= limit.windowMs) {
      window = { startedAt: now, served: 0 }
      this.#windows.set(route, window)
    }
    if (window.served < limit.max) {
      window.served++
      return false
    }
    const headers: Record<string, string> =
      limit.retryAfterSeconds === undefined
        ? {}
        : { 'retry-after': String(limit.retryAfterSeconds) }
    if (route === 'coinbase')
      this.#json(response, 429, JSON.stringify(COINBASE_RATE_LIMITED), headers)
    else if (route === 'kraken')
      this.#json(response, 200, JSON.stringify(KRAKEN_RATE_LIMITED), headers)
    else if (route === 'frankfurter')
      this.#json(response, 429, JSON.stringify({ message: 'Too Many Requests' }), headers)
    else
      this.#send(response, 429, 'Too Many Requests', { 'content-type': 'text/plain', ...headers })
    return true
  }

  #coinbase(url: URL, response: ServerResponse, empty: boolean) {
    const currency = (url.searchParams.get('currency') ?? 'USD').toUpperCase()
    const table = this.coinbaseRates.get(currency)
    if (!table && !empty) return this.#json(response, 400, JSON.stringify(COINBASE_NOT_FOUND))
    const rates = Object.fromEntries(empty ? [] : table!)
    this.#json(response, 200, JSON.stringify({ data: { currency, rates } }))
  }

  #kraken(url: URL, response: ServerResponse, empty: boolean) {
    const names = (url.searchParams.get('pair') ?? '').split(',').filter(Boolean)
    if (names.length === 0)
      return this.#json(response, 200, JSON.stringify({ error: ['EGeneral:Invalid arguments'] }))
    if (names.some((name) => !this.krakenTickers.has(name)))
      return this.#json(response, 200, JSON.stringify(KRAKEN_UNKNOWN_PAIR))
    // Prices go in as the digits set (Kraken sends strings).
    const entries = empty
      ? []
      : names.map((name) => {
          const { key, last } = this.krakenTickers.get(name)!
          return `${JSON.stringify(key)}:{"a":[${JSON.stringify(last)},"1","1.000"],"b":[${JSON.stringify(last)},"2","2.000"],"c":[${JSON.stringify(last)},"100.00000000"],"v":["1000","2000"],"p":["1","1"],"t":[10,20],"l":["0","0"],"h":["9","9"],"o":"1"}`
        })
    this.#json(response, 200, `{"error":[],"result":{${entries.join(',')}}}`)
  }

  #frankfurter(url: URL, response: ServerResponse, empty: boolean) {
    const base = (
      url.searchParams.get('base') ??
      url.searchParams.get('from') ??
      'EUR'
    ).toUpperCase()
    const symbols = (url.searchParams.get('symbols') ?? url.searchParams.get('to') ?? '')
      .split(',')
      .filter(Boolean)
      .map((code) => code.toUpperCase())
    if (base !== 'USD' || symbols.some((code) => !this.frankfurterRates.has(code)))
      return this.#json(response, 404, '{"message":"not found"}')
    const rates = empty
      ? ''
      : symbols
          .map((code) => `${JSON.stringify(code)}:${this.frankfurterRates.get(code)}`)
          .join(',')
    this.#json(
      response,
      200,
      `{"amount":1.0,"base":"USD","date":${JSON.stringify(this.frankfurterDate)},"rates":{${rates}}}`
    )
  }

  #jsonRates(url: URL, response: ServerResponse, empty: boolean) {
    const fiat = decodeURIComponent(url.pathname.slice('/json/'.length, -'.json'.length))
    const table = this.jsonTables.get(fiat)
    if (!table) return this.#send(response, 404, "Couldn't find the requested file.", {})
    const entries = empty
      ? ''
      : [...table].map(([token, value]) => `${JSON.stringify(token)}:${value}`).join(',')
    this.#json(response, 200, `{"date":"2026-11-26",${JSON.stringify(fiat)}:{${entries}}}`)
  }

  #json(
    response: ServerResponse,
    status: number,
    text: string,
    headers: Record<string, string> = {}
  ) {
    this.#send(response, status, text, { 'content-type': 'application/json', ...headers })
  }

  #send(response: ServerResponse, status: number, text: string, headers: Record<string, string>) {
    response.writeHead(status, headers)
    response.end(text)
  }
}
