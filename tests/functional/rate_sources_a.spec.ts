import { test } from '@japa/runner'
import { readFile } from 'node:fs/promises'
import { RateSourceFailure, type LiveRateSource, type RateQuote } from '#rates/live_rate_source'
import { Decimal } from '#support/text/money'
import coingeckoPlugin from '#plugins/rate_coingecko/plugin'
import binancePlugin from '#plugins/rate_binance/plugin'
import okxPlugin from '#plugins/rate_okx/plugin'
import { coingeckoKeyHeader, coingeckoSource } from '#plugins/rate_coingecko/coingecko_source'
import { binanceSource, forgetUnknownBinanceSymbols } from '#plugins/rate_binance/binance_source'
import { okxSource } from '#plugins/rate_okx/okx_source'
import { okxP2pSource, p2pPrice } from '#plugins/rate_okx/okx_p2p_source'
import { FakeRates } from '#tests/helpers/fake_rates'

const fake = new FakeRates()

function context(overrides: { apiKey?: string; signal?: AbortSignal; baseUrl?: string } = {}) {
  return {
    baseUrl: overrides.baseUrl ?? fake.url,
    apiKey: overrides.apiKey ?? '',
    signal: overrides.signal ?? AbortSignal.timeout(5000),
  }
}

/** token/quote → price digits, observedAt. */
function table(quotes: RateQuote[]) {
  return Object.fromEntries(
    quotes.map((quote) => [
      `${quote.token}/${quote.quote}`,
      quote.observedAt === undefined
        ? quote.price.toFixed()
        : [quote.price.toFixed(), quote.observedAt],
    ])
  )
}

/** The failure a source threw (the test fails when it answered). */
async function failureOf(promise: Promise<unknown>): Promise<RateSourceFailure> {
  try {
    await promise
  } catch (error) {
    if (error instanceof RateSourceFailure) return error
    throw new Error(`not a RateSourceFailure: ${String(error)}`)
  }
  throw new Error('the source answered instead of failing')
}

/** A source given a request that never ends fails when the refresh's signal ends it, not later. */
async function assertTimesOut(
  assert: any,
  source: LiveRateSource,
  pair: { token: string; fiat: string }
) {
  const startedAt = Date.now()
  const failure = await failureOf(
    source.quote([pair], context({ signal: AbortSignal.timeout(300) }))
  )
  const elapsed = Date.now() - startedAt
  assert.match(failure.message, /deadline/)
  assert.isBelow(elapsed, 3000)
  assert.isUndefined(failure.retryAfterMs)
}

test.group('Rate sources: plugins', () => {
  test('each plugin brings its sources and their rate.<name>.* settings', ({ assert }) => {
    assert.equal(coingeckoPlugin.name, 'rate_coingecko')
    assert.deepEqual(
      coingeckoPlugin.rateSources.map((source) => source.name),
      ['coingecko']
    )
    assert.sameMembers(Object.keys(coingeckoPlugin.settings), [
      'rate.coingecko.url',
      'rate.coingecko.api_key',
    ])
    assert.isTrue(coingeckoPlugin.settings['rate.coingecko.api_key'].secret)

    assert.equal(binancePlugin.name, 'rate_binance')
    assert.deepEqual(
      binancePlugin.rateSources.map((source) => source.name),
      ['binance']
    )
    assert.sameMembers(Object.keys(binancePlugin.settings), ['rate.binance.url'])

    assert.equal(okxPlugin.name, 'rate_okx')
    assert.deepEqual(
      okxPlugin.rateSources.map((source) => source.name),
      ['okx', 'okx_p2p']
    )
    assert.sameMembers(Object.keys(okxPlugin.settings), ['rate.okx.url', 'rate.okx_p2p.url'])
    for (const source of [coingeckoSource, binanceSource, okxSource, okxP2pSource]) {
      assert.equal(source.kind, 'market')
      assert.match(source.defaultUrl, /^https:\/\//)
    }
  })

  test('no source module loads undici at its top (a web process must not)', async ({ assert }) => {
    for (const file of [
      'app/rates/rate_http.ts',
      'plugins/rate_coingecko/coingecko_source.ts',
      'plugins/rate_binance/binance_source.ts',
      'plugins/rate_okx/okx_source.ts',
      'plugins/rate_okx/okx_p2p_source.ts',
    ]) {
      const text = await readFile(new URL(`../../${file}`, import.meta.url), 'utf8')
      assert.notMatch(text, /from ['"]undici['"]/, file)
    }
  })
})

test.group('Rate sources: CoinGecko', (group) => {
  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(() => fake.reset())

  test('supports our tokens against the fiats CoinGecko lists', ({ assert }) => {
    assert.isTrue(coingeckoSource.supports({ token: 'USDT', fiat: 'CNY' }))
    assert.isTrue(coingeckoSource.supports({ token: 'TON', fiat: 'EUR' }))
    assert.isTrue(coingeckoSource.supports({ token: 'POL', fiat: 'USD' }))
    assert.isFalse(coingeckoSource.supports({ token: 'DOGE', fiat: 'USD' }))
    assert.isFalse(coingeckoSource.supports({ token: 'USDT', fiat: 'XYZ' }))
    assert.isFalse(coingeckoSource.supports({ token: 'constructor', fiat: 'USD' }))
  })

  test('prices keep the digits CoinGecko sent; unknown ids and non-positive prices are left out', async ({
    assert,
  }) => {
    // More digits than a double holds: a float on the way would round them.
    fake.setCoingecko('tether', 'cny', '7.2100000000000000123')
    fake.setCoingecko('tron', 'usd', '0.27123456789012345678')
    fake.setCoingecko('solana', 'usd', '0')
    fake.setCoingecko('ethereum', 'eur', '-1')
    const quotes = await coingeckoSource.quote(
      [
        { token: 'USDT', fiat: 'CNY' },
        { token: 'TRX', fiat: 'USD' },
        { token: 'TON', fiat: 'USD' },
        { token: 'SOL', fiat: 'USD' },
        { token: 'ETH', fiat: 'EUR' },
      ],
      context()
    )
    assert.deepEqual(table(quotes), {
      'USDT/CNY': ['7.2100000000000000123', 1_711_356_300_000],
      'TRX/USD': ['0.27123456789012345678', 1_711_356_300_000],
    })
    assert.instanceOf(quotes[0].price, Decimal)
  })

  test('one request: ids and lower-case fiats, the key in x-cg-demo-api-key', async ({
    assert,
  }) => {
    fake.setCoingecko('tether', 'cny', '7.2')
    fake.coingeckoKey = 'CG-demo-key-123'
    await coingeckoSource.quote(
      [
        { token: 'USDT', fiat: 'CNY' },
        { token: 'TRX', fiat: 'CNY' },
        { token: 'TRX', fiat: 'USD' },
        { token: 'TON', fiat: 'USD' },
      ],
      context({ apiKey: 'CG-demo-key-123' })
    )
    const requests = fake.requestsTo('coingecko')
    assert.lengthOf(requests, 1)
    assert.equal(requests[0].path, '/api/v3/simple/price')
    assert.equal(requests[0].query.ids, 'tether,tron,the-open-network')
    assert.equal(requests[0].query.vs_currencies, 'cny,usd')
    assert.equal(requests[0].headers['x-cg-demo-api-key'], 'CG-demo-key-123')
    assert.isUndefined(requests[0].headers['x-cg-pro-api-key'])

    await coingeckoSource
      .quote([{ token: 'USDT', fiat: 'CNY' }], {
        ...context(),
        apiKey: '',
      })
      .catch(() => {})
    assert.notProperty(fake.requestsTo('coingecko')[1].headers, 'x-cg-demo-api-key')
  })

  test('a Pro key goes in x-cg-pro-api-key on the pro host only', ({ assert }) => {
    assert.equal(coingeckoKeyHeader('https://pro-api.coingecko.com'), 'x-cg-pro-api-key')
    assert.equal(coingeckoKeyHeader('https://pro-api.coingecko.com/'), 'x-cg-pro-api-key')
    assert.equal(coingeckoKeyHeader('https://api.coingecko.com'), 'x-cg-demo-api-key')
    assert.equal(coingeckoKeyHeader(fake.url), 'x-cg-demo-api-key')
  })

  test('HTTP 429: a failure with its words and the Retry-After (60 s without one)', async ({
    assert,
  }) => {
    fake.setCoingecko('tether', 'usd', '1')
    fake.limit('coingecko', { max: 1, windowMs: 60_000, retryAfterSeconds: 42 })
    const pair = [{ token: 'USDT', fiat: 'USD' }]
    assert.lengthOf(await coingeckoSource.quote(pair, context()), 1)
    const failure = await failureOf(coingeckoSource.quote(pair, context()))
    assert.match(failure.message, /CoinGecko: HTTP 429: You've exceeded the Rate Limit/)
    assert.match(failure.message, /retry after 42 s/)
    assert.equal(failure.retryAfterMs, 42_000)

    fake.limit('coingecko', { max: 0, windowMs: 60_000 })
    const bare = await failureOf(coingeckoSource.quote(pair, context()))
    assert.equal(bare.retryAfterMs, 60_000)
  })

  test('401/403: the error body in words and the key setting named', async ({ assert }) => {
    fake.coingeckoKey = 'CG-right'
    const pair = [{ token: 'USDT', fiat: 'USD' }]
    const missing = await failureOf(coingeckoSource.quote(pair, context()))
    assert.match(missing.message, /HTTP 401: API Key Missing \(error_code 10002\)/)
    assert.include(missing.message, 'rate.coingecko.api_key')
    assert.include(missing.message, 'pro-api.coingecko.com')
    assert.isUndefined(missing.retryAfterMs)

    fake.reset()
    fake.inject('coingecko', { status: 403, body: { error: 'Access denied for this region' } })
    const refused = await failureOf(coingeckoSource.quote(pair, context()))
    assert.match(
      refused.message,
      /HTTP 403: Access denied for this region; check rate.coingecko.api_key/
    )
  })

  test('an HTML error page, a body that is not a table: failures', async ({ assert }) => {
    fake.inject('coingecko', 'html_502', { status: 200, body: ['not', 'a', 'table'] })
    const pair = [{ token: 'USDT', fiat: 'USD' }]
    assert.match(
      (await failureOf(coingeckoSource.quote(pair, context()))).message,
      /CoinGecko: HTTP 502 without a JSON body/
    )
    assert.match(
      (await failureOf(coingeckoSource.quote(pair, context()))).message,
      /CoinGecko: HTTP 200 without a JSON body/
    )
  })

  test('a request that never ends fails at the refresh deadline', async ({ assert }) => {
    fake.inject('coingecko', 'hang')
    await assertTimesOut(assert, coingeckoSource, { token: 'USDT', fiat: 'USD' })
  })
})

test.group('Rate sources: Binance', (group) => {
  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(() => {
    fake.reset()
    forgetUnknownBinanceSymbols()
  })

  test('supports tokens in USDT (USDC too), not USDT itself', ({ assert }) => {
    assert.isTrue(binanceSource.supports({ token: 'TRX', fiat: 'CNY' }))
    assert.isTrue(binanceSource.supports({ token: 'USDC', fiat: 'USD' }))
    assert.isFalse(binanceSource.supports({ token: 'USDT', fiat: 'CNY' }))
    assert.isFalse(binanceSource.supports({ token: 'USDT', fiat: 'USD' }))
    assert.isFalse(binanceSource.supports({ token: 'DOGE', fiat: 'USD' }))
  })

  test('one request with the symbols as a JSON array; prices in USDT, digits kept', async ({
    assert,
  }) => {
    fake.setBinance('TRXUSDT', '0.27120000')
    fake.setBinance('ETHUSDT', '3456.78000000')
    fake.setBinance('USDCUSDT', '0.99990000')
    const quotes = await binanceSource.quote(
      [
        { token: 'TRX', fiat: 'CNY' },
        { token: 'TRX', fiat: 'USD' },
        { token: 'ETH', fiat: 'CNY' },
        { token: 'USDC', fiat: 'CNY' },
        { token: 'USDT', fiat: 'CNY' },
      ],
      context()
    )
    assert.deepEqual(table(quotes), {
      'TRX/USDT': '0.2712',
      'ETH/USDT': '3456.78',
      'USDC/USDT': '0.9999',
    })
    const requests = fake.requestsTo('binance')
    assert.lengthOf(requests, 1)
    assert.equal(requests[0].path, '/api/v3/ticker/price')
    assert.equal(requests[0].query.symbols, '["TRXUSDT","ETHUSDT","USDCUSDT"]')
  })

  test('-1121 Invalid symbol: the other symbols are still priced, the unknown one not asked again', async ({
    assert,
  }) => {
    fake.setBinance('TRXUSDT', '0.2712')
    fake.setBinance('ETHUSDT', '3456.78')
    const pairs = [
      { token: 'TRX', fiat: 'USD' },
      { token: 'TON', fiat: 'USD' },
      { token: 'ETH', fiat: 'USD' },
    ]
    assert.deepEqual(table(await binanceSource.quote(pairs, context())), {
      'TRX/USDT': '0.2712',
      'ETH/USDT': '3456.78',
    })
    const first = fake.requestsTo('binance').map((request) => request.query)
    assert.deepEqual(first, [
      { symbols: '["TRXUSDT","TONUSDT","ETHUSDT"]' },
      { symbol: 'TRXUSDT' },
      { symbol: 'TONUSDT' },
      { symbol: 'ETHUSDT' },
    ])

    fake.requests = []
    assert.deepEqual(table(await binanceSource.quote(pairs, context())), {
      'TRX/USDT': '0.2712',
      'ETH/USDT': '3456.78',
    })
    assert.deepEqual(
      fake.requestsTo('binance').map((request) => request.query),
      [{ symbols: '["TRXUSDT","ETHUSDT"]' }]
    )
  })

  test('HTTP 429 -1003 and HTTP 418 (the ban): failures with Retry-After', async ({ assert }) => {
    fake.setBinance('TRXUSDT', '0.2712')
    fake.limit('binance', {
      max: 1,
      windowMs: 60_000,
      retryAfterSeconds: 7,
      banAfter: 1,
      banRetryAfterSeconds: 600,
    })
    const pair = [{ token: 'TRX', fiat: 'USD' }]
    assert.lengthOf(await binanceSource.quote(pair, context()), 1)

    const limited = await failureOf(binanceSource.quote(pair, context()))
    assert.match(
      limited.message,
      /Binance: HTTP 429: Too many requests; .* \(code -1003\), retry after 7 s/
    )
    assert.equal(limited.retryAfterMs, 7000)

    const banned = await failureOf(binanceSource.quote(pair, context()))
    assert.match(banned.message, /Binance: HTTP 418: this IP is banned/)
    assert.match(banned.message, /retry after 600 s/)
    assert.equal(banned.retryAfterMs, 600_000)
  })

  test('a rate limit met while asking symbol by symbol is a failure too', async ({ assert }) => {
    fake.setBinance('TRXUSDT', '0.2712')
    fake.limit('binance', { max: 2, windowMs: 60_000, retryAfterSeconds: 3 })
    const failure = await failureOf(
      binanceSource.quote(
        [
          { token: 'TON', fiat: 'USD' },
          { token: 'TRX', fiat: 'USD' },
        ],
        context()
      )
    )
    assert.equal(failure.retryAfterMs, 3000)
  })

  test('HTML error pages, other errors, an empty list', async ({ assert }) => {
    fake.setBinance('TRXUSDT', '0.2712')
    const pair = [{ token: 'TRX', fiat: 'USD' }]
    fake.inject('binance', 'html_502', {
      status: 451,
      body: { code: 0, msg: 'Service unavailable from a restricted location.' },
    })
    assert.match(
      (await failureOf(binanceSource.quote(pair, context()))).message,
      /Binance: HTTP 502 without a JSON body/
    )
    assert.match(
      (await failureOf(binanceSource.quote(pair, context()))).message,
      /Binance: HTTP 451: Service unavailable from a restricted location. \(code 0\)/
    )
    fake.inject('binance', 'empty')
    assert.deepEqual(await binanceSource.quote(pair, context()), [])
    fake.setBinance('SOLUSDT', '-5')
    assert.deepEqual(await binanceSource.quote([{ token: 'SOL', fiat: 'USD' }], context()), [])
  })

  test('a request that never ends fails at the refresh deadline', async ({ assert }) => {
    fake.setBinance('TRXUSDT', '0.2712')
    fake.inject('binance', 'hang')
    await assertTimesOut(assert, binanceSource, { token: 'TRX', fiat: 'USD' })
  })
})

test.group('Rate sources: OKX spot', (group) => {
  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(() => fake.reset())

  test('supports tokens in USDT, not USDT itself', ({ assert }) => {
    assert.isTrue(okxSource.supports({ token: 'TON', fiat: 'CNY' }))
    assert.isTrue(okxSource.supports({ token: 'USDC', fiat: 'EUR' }))
    assert.isFalse(okxSource.supports({ token: 'USDT', fiat: 'CNY' }))
    assert.isFalse(okxSource.supports({ token: 'XYZ', fiat: 'USD' }))
  })

  test('one ticker request per instrument; last and ts kept exactly', async ({ assert }) => {
    fake.setOkx('TRX-USDT', '0.27120000000000000001', '1597026383085')
    fake.setOkx('SOL-USDT', '143.5', '1597026383999')
    const quotes = await okxSource.quote(
      [
        { token: 'TRX', fiat: 'CNY' },
        { token: 'SOL', fiat: 'CNY' },
        { token: 'SOL', fiat: 'USD' },
        { token: 'USDT', fiat: 'CNY' },
      ],
      context()
    )
    assert.deepEqual(table(quotes), {
      'TRX/USDT': ['0.27120000000000000001', 1_597_026_383_085],
      'SOL/USDT': ['143.5', 1_597_026_383_999],
    })
    const requests = fake.requestsTo('okx')
    assert.sameDeepMembers(
      requests.map((request) => [request.path, request.query]),
      [
        ['/api/v5/market/ticker', { instId: 'TRX-USDT' }],
        ['/api/v5/market/ticker', { instId: 'SOL-USDT' }],
      ]
    )
  })

  test('code 51001 (no such instrument) and empty data leave the token out, the others stay', async ({
    assert,
  }) => {
    fake.setOkx('TRX-USDT', '0.2712')
    fake.setOkx('ETH-USDT', '3456.7')
    const quotes = await okxSource.quote(
      [
        { token: 'ETH', fiat: 'USD' },
        { token: 'POL', fiat: 'USD' },
        { token: 'TRX', fiat: 'USD' },
      ],
      context()
    )
    assert.deepEqual(table(quotes), {
      'ETH/USDT': ['3456.7', 1_597_026_383_085],
      'TRX/USDT': ['0.2712', 1_597_026_383_085],
    })
    assert.lengthOf(fake.requestsTo('okx'), 3)

    fake.inject('okx', 'empty')
    assert.deepEqual(await okxSource.quote([{ token: 'TRX', fiat: 'USD' }], context()), [])
  })

  test('code 50011 in an HTTP 200 (and in a 429): a rate-limit failure waiting 2 s', async ({
    assert,
  }) => {
    fake.setOkx('TRX-USDT', '0.2712')
    fake.setOkx('ETH-USDT', '3456.7')
    fake.limit('okx', { max: 1, windowMs: 2000 })
    const pairs = [
      { token: 'TRX', fiat: 'USD' },
      { token: 'ETH', fiat: 'USD' },
    ]
    const failure = await failureOf(okxSource.quote(pairs, context()))
    assert.match(failure.message, /OKX: HTTP 200, code 50011: Too Many Requests, retry after 2 s/)
    assert.equal(failure.retryAfterMs, 2000)

    fake.reset()
    fake.setOkx('TRX-USDT', '0.2712')
    fake.okxLimitStatus = 429
    fake.limit('okx', { max: 0, windowMs: 2000, retryAfterSeconds: 5 })
    const limited = await failureOf(okxSource.quote(pairs.slice(0, 1), context()))
    assert.match(limited.message, /OKX: HTTP 429, code 50011/)
    assert.equal(limited.retryAfterMs, 5000)
  })

  test('another code, an HTML page: failures naming them', async ({ assert }) => {
    fake.setOkx('TRX-USDT', '0.2712')
    const pair = [{ token: 'TRX', fiat: 'USD' }]
    fake.inject(
      'okx',
      { status: 200, body: { code: '50001', msg: 'Service temporarily unavailable', data: [] } },
      'html_502'
    )
    const failure = await failureOf(okxSource.quote(pair, context()))
    assert.equal(failure.message, 'OKX: HTTP 200, code 50001: Service temporarily unavailable')
    assert.isUndefined(failure.retryAfterMs)
    assert.match(
      (await failureOf(okxSource.quote(pair, context()))).message,
      /OKX: HTTP 502 without a JSON body/
    )
  })

  test('a request that never ends fails at the refresh deadline', async ({ assert }) => {
    fake.setOkx('TRX-USDT', '0.2712')
    fake.inject('okx', 'hang')
    await assertTimesOut(assert, okxSource, { token: 'TRX', fiat: 'USD' })
  })
})

test.group('Rate sources: OKX P2P', (group) => {
  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(() => fake.reset())

  test('supports USDT and USDC against CNY only', ({ assert }) => {
    assert.isTrue(okxP2pSource.supports({ token: 'USDT', fiat: 'CNY' }))
    assert.isTrue(okxP2pSource.supports({ token: 'USDC', fiat: 'CNY' }))
    assert.isFalse(okxP2pSource.supports({ token: 'USDT', fiat: 'USD' }))
    assert.isFalse(okxP2pSource.supports({ token: 'TRX', fiat: 'CNY' }))
  })

  test('the median of the best 10 asks, whatever their order; the request shape', async ({
    assert,
  }) => {
    // 12 asks, unsorted: the best 10 are 7.10 … 7.19; the two highest are ignored.
    fake.setP2p(
      'USDT',
      'CNY',
      [
        '7.19',
        '7.10',
        '9.99',
        '7.11',
        '7.18',
        '7.12',
        '7.17',
        '7.13',
        '7.16',
        '7.14',
        '7.15',
        '8.50',
      ],
      ['7.01', '7.00']
    )
    const quotes = await okxP2pSource.quote(
      [
        { token: 'USDT', fiat: 'CNY' },
        { token: 'USDT', fiat: 'USD' },
      ],
      context()
    )
    assert.deepEqual(table(quotes), { 'USDT/CNY': '7.145' })
    const requests = fake.requestsTo('okx_p2p')
    assert.lengthOf(requests, 1)
    assert.equal(requests[0].path, '/v3/c2c/tradingOrders/books')
    assert.deepEqual(requests[0].query, {
      quoteCurrency: 'cny',
      baseCurrency: 'usdt',
      side: 'sell',
      paymentMethod: 'all',
      userType: 'all',
    })
  })

  test('p2pPrice: odd and even counts, too few offers', ({ assert }) => {
    const d = (...values: string[]) => values.map((value) => new Decimal(value))
    assert.equal(p2pPrice(d('7.3', '7.1', '7.2'))!.toFixed(), '7.2')
    assert.equal(p2pPrice(d('7.3', '7.1', '7.2', '7.25'))!.toFixed(), '7.225')
    assert.isNull(p2pPrice(d('7.1', '7.2')))
  })

  test('a thin book (under 3 asks), bad prices, an empty book: the pair left out', async ({
    assert,
  }) => {
    fake.setP2p('USDT', 'CNY', ['7.2', '0', '-1', 'abc'])
    assert.deepEqual(await okxP2pSource.quote([{ token: 'USDT', fiat: 'CNY' }], context()), [])
    fake.setP2p('USDC', 'CNY', ['7.2', '7.3', '7.4'])
    fake.inject('okx_p2p', 'empty')
    assert.deepEqual(await okxP2pSource.quote([{ token: 'USDC', fiat: 'CNY' }], context()), [])
    assert.deepEqual(table(await okxP2pSource.quote([{ token: 'USDC', fiat: 'CNY' }], context())), {
      'USDC/CNY': '7.3',
    })
  })

  test('a non-zero code, an HTML page (bot protection), a rate limit: failures', async ({
    assert,
  }) => {
    fake.setP2p('USDT', 'CNY', ['7.2', '7.3', '7.4'])
    const pair = [{ token: 'USDT', fiat: 'CNY' }]
    fake.inject(
      'okx_p2p',
      { status: 200, body: { code: 51000, msg: 'Parameter quoteCurrency error', data: {} } },
      'html_502'
    )
    assert.equal(
      (await failureOf(okxP2pSource.quote(pair, context()))).message,
      'OKX P2P: HTTP 200, code 51000: Parameter quoteCurrency error'
    )
    assert.match(
      (await failureOf(okxP2pSource.quote(pair, context()))).message,
      /OKX P2P: HTTP 502 without a JSON body/
    )
    fake.okxLimitStatus = 429
    fake.limit('okx_p2p', { max: 0, windowMs: 2000 })
    const limited = await failureOf(okxP2pSource.quote(pair, context()))
    assert.equal(limited.retryAfterMs, 2000)
  })

  test('a request that never ends fails at the refresh deadline', async ({ assert }) => {
    fake.setP2p('USDT', 'CNY', ['7.2', '7.3', '7.4'])
    fake.inject('okx_p2p', 'hang')
    await assertTimesOut(assert, okxP2pSource, { token: 'USDT', fiat: 'CNY' })
  })
})
