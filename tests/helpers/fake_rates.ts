import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * One local HTTP server (127.0.0.1, a free port) that answers at the real
 * paths of CoinGecko, Binance spot, OKX spot and OKX P2P, with their
 * documented bodies and worst habits:
 *
 * - CoinGecko `GET /api/v3/simple/price?ids&vs_currencies[&include_last_updated_at]`:
 *   `{ "<id>": { "<fiat>": <number>, "last_updated_at": <s> } }`, unknown ids
 *   left out (`{}`); prices are written into the body as the digits set
 *   (JSON numbers); a required key missing or wrong → 401
 *   `{"status":{"error_code":10002,"error_message":"API Key Missing"}}`;
 *   over the limit → 429 `{"status":{"error_code":429,"error_message":"You've exceeded the Rate Limit. …"}}`.
 * - Binance `GET /api/v3/ticker/price?symbols=[…]` (or `?symbol=`): an array of
 *   `{symbol, price}` (strings); any unknown symbol → 400 `{"code":-1121,"msg":"Invalid symbol."}`;
 *   over the limit → 429 `{"code":-1003,…}` with Retry-After; once banned
 *   (`banAfter` 429s ignored) → 418 with Retry-After.
 * - OKX `GET /api/v5/market/ticker?instId=TRX-USDT`: `{"code":"0","msg":"","data":[{…,"last","ts"}]}`;
 *   unknown instrument → HTTP 200 `{"code":"51001",…}`; over the limit → HTTP
 *   200 (or `okxLimitStatus`) `{"code":"50011","msg":"Too Many Requests"}`.
 * - OKX P2P `GET /v3/c2c/tradingOrders/books?quoteCurrency&baseCurrency&side…`:
 *   `{"code":0,"msg":"","data":{"sell":[{"price":…}],"buy":[…]}}` (the
 *   shape open-source clients of the web page's endpoint read).
 *
 * Failures are injected per route, consumed one per request: 'hang' (never
 * answers), 'html_502' (a proxy's error page), 'empty' (HTTP 200 with the
 * API's empty answer), or any status/body/headers. Every request is
 * recorded (route, path, query, headers).
 */

export type FakeRoute = 'coingecko' | 'binance' | 'okx' | 'okx_p2p'

export type Injected =
  | 'hang'
  | 'html_502'
  | 'empty'
  | { status: number; body: unknown; headers?: Record<string, string> }

export type RecordedRequest = {
  route: FakeRoute | 'unknown'
  path: string
  query: Record<string, string>
  headers: IncomingMessage['headers']
  at: number
}

export type RouteLimit = {
  /** Requests served per window; the next ones are refused. */
  max: number
  windowMs: number
  /** Retry-After sent with the refusal (seconds); none when undefined. */
  retryAfterSeconds?: number
  /** Binance: after this many refused requests in a window, 418 (the IP ban). */
  banAfter?: number
  banRetryAfterSeconds?: number
}

const ROUTES: Record<string, FakeRoute> = {
  '/api/v3/simple/price': 'coingecko',
  '/api/v3/ticker/price': 'binance',
  '/api/v5/market/ticker': 'okx',
  '/v3/c2c/tradingOrders/books': 'okx_p2p',
}

export const COINGECKO_RATE_LIMIT_BODY = {
  status: {
    error_code: 429,
    error_message:
      "You've exceeded the Rate Limit. Please visit https://www.coingecko.com/en/api/pricing to subscribe to our API plans for higher rate limits.",
  },
}

export class FakeRates {
  url = ''
  requests: RecordedRequest[] = []
  /** CoinGecko: coin id → fiat (lower-case) → price digits. */
  coingeckoPrices = new Map<string, Map<string, string>>()
  coingeckoUpdatedAt = 1_711_356_300
  /** CoinGecko: the key the fake demands (in `coingeckoKeyHeader`), '' for none. */
  coingeckoKey = ''
  coingeckoKeyHeader = 'x-cg-demo-api-key'
  /** Binance: symbol → price string. */
  binancePrices = new Map<string, string>()
  /** OKX: instId → { last, ts }. */
  okxTickers = new Map<string, { last: string; ts: string }>()
  /** HTTP status of OKX's 50011: its error table says 429; the same body comes in HTTP 200 too (set 429 to follow the table). */
  okxLimitStatus = 200
  /** OKX P2P: "USDT-CNY" → offers (the sell side lists the asks). */
  p2pBooks = new Map<string, { sell: string[]; buy: string[] }>()
  injected: Record<FakeRoute, Injected[]> = { coingecko: [], binance: [], okx: [], okx_p2p: [] }
  limits: Partial<Record<FakeRoute, RouteLimit>> = {}
  #windows = new Map<FakeRoute, { startedAt: number; served: number; refused: number }>()
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

  /** Back to no prices, no failures, no limits, no requests. */
  reset() {
    this.requests = []
    this.coingeckoPrices.clear()
    this.coingeckoKey = ''
    this.coingeckoKeyHeader = 'x-cg-demo-api-key'
    this.binancePrices.clear()
    this.okxTickers.clear()
    this.okxLimitStatus = 200
    this.p2pBooks.clear()
    this.injected = { coingecko: [], binance: [], okx: [], okx_p2p: [] }
    this.limits = {}
    this.#windows.clear()
  }

  setCoingecko(coinId: string, fiat: string, price: string) {
    const table = this.coingeckoPrices.get(coinId) ?? new Map<string, string>()
    table.set(fiat.toLowerCase(), price)
    this.coingeckoPrices.set(coinId, table)
  }

  setBinance(symbol: string, price: string) {
    this.binancePrices.set(symbol, price)
  }

  setOkx(instId: string, last: string, ts = '1597026383085') {
    this.okxTickers.set(instId, { last, ts })
  }

  setP2p(token: string, fiat: string, sell: string[], buy: string[] = []) {
    this.p2pBooks.set(`${token.toUpperCase()}-${fiat.toUpperCase()}`, { sell, buy })
  }

  inject(route: FakeRoute, ...failures: Injected[]) {
    this.injected[route].push(...failures)
  }

  limit(route: FakeRoute, limit: RouteLimit) {
    this.limits[route] = limit
    this.#windows.delete(route)
  }

  requestsTo(route: FakeRoute) {
    return this.requests.filter((request) => request.route === route)
  }

  #handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? '/', 'http://fake')
    const route = ROUTES[url.pathname]
    this.requests.push({
      route: route ?? 'unknown',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: request.headers,
      at: Date.now(),
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
      return this.#send(
        response,
        502,
        '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>cloudflare</center></body></html>',
        { 'content-type': 'text/html' }
      )
    if (injected && injected !== 'empty')
      return this.#json(response, injected.status, injected.body, injected.headers)

    const refused = this.#refuse(route, response)
    if (refused) return

    const empty = injected === 'empty'
    if (route === 'coingecko') return this.#coingecko(request, url, response, empty)
    if (route === 'binance') return this.#binance(url, response, empty)
    if (route === 'okx') return this.#okx(url, response, empty)
    return this.#p2p(url, response, empty)
  }

  /** The route's limit: true when it answered the refusal. */
  #refuse(route: FakeRoute, response: ServerResponse): boolean {
    const limit = this.limits[route]
    if (!limit) return false
    const now = Date.now()
    let window = this.#windows.get(route)
    if (!window || now - window.startedAt >= limit.windowMs) {
      window = { startedAt: now, served: 0, refused: 0 }
      this.#windows.set(route, window)
    }
    if (window.served < limit.max) {
      window.served++
      return false
    }
    window.refused++
    const retry: Record<string, string> =
      limit.retryAfterSeconds !== undefined
        ? { 'retry-after': String(limit.retryAfterSeconds) }
        : {}
    if (route === 'coingecko') {
      this.#json(response, 429, COINGECKO_RATE_LIMIT_BODY, retry)
    } else if (route === 'binance') {
      if (limit.banAfter !== undefined && window.refused > limit.banAfter) {
        const until = now + (limit.banRetryAfterSeconds ?? 120) * 1000
        this.#json(
          response,
          418,
          {
            code: -1003,
            msg: `Way too many requests; IP(127.0.0.1) banned until ${until}. Please use the websocket for live updates to avoid bans.`,
          },
          { 'retry-after': String(limit.banRetryAfterSeconds ?? 120) }
        )
      } else {
        this.#json(
          response,
          429,
          {
            code: -1003,
            msg: 'Too many requests; current limit of IP(127.0.0.1) is 6000 requests per minute. Please use the websocket for live updates to avoid polling the API.',
          },
          retry
        )
      }
    } else {
      this.#json(
        response,
        this.okxLimitStatus,
        { msg: 'Too Many Requests', code: '50011', data: [] },
        retry
      )
    }
    return true
  }

  #coingecko(request: IncomingMessage, url: URL, response: ServerResponse, empty: boolean) {
    if (this.coingeckoKey) {
      const given = request.headers[this.coingeckoKeyHeader]
      if (given !== this.coingeckoKey)
        return this.#json(response, 401, {
          status: {
            error_code: 10002,
            error_message: given ? 'Invalid API Key' : 'API Key Missing',
          },
        })
    }
    const ids = (url.searchParams.get('ids') ?? '').split(',').filter(Boolean)
    const fiats = (url.searchParams.get('vs_currencies') ?? '').split(',').filter(Boolean)
    if (fiats.length === 0)
      return this.#json(response, 400, { error: 'Missing parameter vs_currencies' })
    const withTime = url.searchParams.get('include_last_updated_at') === 'true'
    // Written by hand so that prices go out as the digits set (JSON numbers).
    const entries: string[] = []
    for (const id of empty ? [] : ids) {
      const table = this.coingeckoPrices.get(id)
      if (!table) continue
      const fields = fiats.flatMap((fiat) =>
        table.has(fiat) ? [`${JSON.stringify(fiat)}:${table.get(fiat)}`] : []
      )
      if (withTime) fields.push(`"last_updated_at":${this.coingeckoUpdatedAt}`)
      entries.push(`${JSON.stringify(id)}:{${fields.join(',')}}`)
    }
    this.#send(response, 200, `{${entries.join(',')}}`, { 'content-type': 'application/json' })
  }

  #binance(url: URL, response: ServerResponse, empty: boolean) {
    const single = url.searchParams.get('symbol')
    const list = url.searchParams.get('symbols')
    let symbols: string[]
    if (single !== null) symbols = [single]
    else if (list !== null) {
      try {
        const parsed = JSON.parse(list)
        if (!Array.isArray(parsed) || parsed.some((s) => typeof s !== 'string')) throw new Error()
        symbols = parsed
      } catch {
        return this.#json(response, 400, {
          code: -1100,
          msg: 'Illegal characters found in parameter \'symbols\'; legal range is \'^\\[("[A-Z0-9-_.]{1,20}"(,"[A-Z0-9-_.]{1,20}"){0,}){0,1}\\]$\'.',
        })
      }
    } else symbols = [...this.binancePrices.keys()]
    if (symbols.some((symbol) => !this.binancePrices.has(symbol)))
      return this.#json(response, 400, { code: -1121, msg: 'Invalid symbol.' })
    const rows = empty
      ? []
      : symbols.map((symbol) => ({ symbol, price: this.binancePrices.get(symbol)! }))
    this.#json(response, 200, single !== null ? (rows[0] ?? {}) : rows)
  }

  #okx(url: URL, response: ServerResponse, empty: boolean) {
    const instId = url.searchParams.get('instId') ?? ''
    if (!instId)
      return this.#json(response, 200, {
        code: '50014',
        msg: 'Parameter instId can not be empty.',
        data: [],
      })
    const ticker = this.okxTickers.get(instId)
    if (!ticker)
      return this.#json(response, 200, {
        code: '51001',
        msg: "Instrument ID or Spread ID doesn't exist.",
        data: [],
      })
    if (empty) return this.#json(response, 200, { code: '0', msg: '', data: [] })
    this.#json(response, 200, {
      code: '0',
      msg: '',
      data: [
        {
          instType: 'SPOT',
          instId,
          last: ticker.last,
          lastSz: '0.1',
          askPx: ticker.last,
          askSz: '11',
          bidPx: ticker.last,
          bidSz: '5',
          open24h: ticker.last,
          high24h: ticker.last,
          low24h: ticker.last,
          volCcy24h: '2222',
          vol24h: '2222',
          sodUtc0: ticker.last,
          sodUtc8: ticker.last,
          ts: ticker.ts,
        },
      ],
    })
  }

  #p2p(url: URL, response: ServerResponse, empty: boolean) {
    const token = (url.searchParams.get('baseCurrency') ?? '').toUpperCase()
    const fiat = (url.searchParams.get('quoteCurrency') ?? '').toUpperCase()
    const side = url.searchParams.get('side') ?? ''
    const book = this.p2pBooks.get(`${token}-${fiat}`) ?? { sell: [], buy: [] }
    const offer = (price: string, index: number) => ({
      id: `${index + 1}`,
      nickName: `trader${index + 1}`,
      price,
      availableAmount: '1000.00',
      quoteCurrency: fiat.toLowerCase(),
      baseCurrency: token.toLowerCase(),
      quoteMinAmountPerOrder: '100.00',
      quoteMaxAmountPerOrder: '50000.00',
      paymentMethods: ['bank', 'aliPay', 'wxPay'],
    })
    const data = {
      sell: empty || (side && side !== 'sell') ? [] : book.sell.map(offer),
      buy: empty || (side && side !== 'buy') ? [] : book.buy.map(offer),
    }
    this.#json(response, 200, {
      code: 0,
      data,
      detailMsg: '',
      error_code: '0',
      error_message: '',
      msg: '',
    })
  }

  #json(
    response: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {}
  ) {
    this.#send(response, status, JSON.stringify(body), {
      'content-type': 'application/json',
      ...headers,
    })
  }

  #send(response: ServerResponse, status: number, text: string, headers: Record<string, string>) {
    response.writeHead(status, headers)
    response.end(text)
  }
}
