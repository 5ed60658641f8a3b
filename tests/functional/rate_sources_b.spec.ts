import { test } from '@japa/runner'
import { readFile } from 'node:fs/promises'
import { RateSourceFailure, type LiveRateSource, type RateQuote } from '#rates/live_rate_source'
import coinbasePlugin from '#plugins/rate_coinbase/plugin'
import krakenPlugin from '#plugins/rate_kraken/plugin'
import frankfurterPlugin from '#plugins/rate_frankfurter/plugin'
import jsonPlugin from '#plugins/rate_json/plugin'
import { coinbaseSource } from '#plugins/rate_coinbase/coinbase_source'
import { forgetUnknownKrakenPairs, krakenSource } from '#plugins/rate_kraken/kraken_source'
import { frankfurterSource } from '#plugins/rate_frankfurter/frankfurter_source'
import { invertRate, jsonSource } from '#plugins/rate_json/json_source'
import { Decimal } from '#support/text/money'
import { FakeRatesMore } from '#tests/helpers/fake_rates_more'

const fake = new FakeRatesMore()

function context(overrides: { signal?: AbortSignal; baseUrl?: string } = {}) {
  return {
    baseUrl: overrides.baseUrl ?? fake.url,
    apiKey: '',
    signal: overrides.signal ?? AbortSignal.timeout(5000),
  }
}

/** token/quote → price digits (and observedAt when given). */
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

async function failureOf(promise: Promise<unknown>): Promise<RateSourceFailure> {
  try {
    await promise
  } catch (error) {
    if (error instanceof RateSourceFailure) return error
    throw new Error(`not a RateSourceFailure: ${String(error)}`)
  }
  throw new Error('the source answered instead of failing')
}

/** A request that never ends fails when the refresh's signal ends it, not later. */
async function assertTimesOut(
  assert: any,
  source: LiveRateSource,
  pair: { token: string; fiat: string },
  baseUrl = fake.url
) {
  const startedAt = Date.now()
  const failure = await failureOf(
    source.quote([pair], context({ signal: AbortSignal.timeout(300), baseUrl }))
  )
  assert.match(failure.message, /deadline/)
  assert.isBelow(Date.now() - startedAt, 3000)
  assert.isUndefined(failure.retryAfterMs)
}

test.group('Rate sources B: plugins', () => {
  test('each plugin brings its source and its rate.<name>.url setting', ({ assert }) => {
    const expected = [
      [coinbasePlugin, 'rate_coinbase', 'coinbase', 'market'],
      [krakenPlugin, 'rate_kraken', 'kraken', 'market'],
      [frankfurterPlugin, 'rate_frankfurter', 'frankfurter', 'fiat_cross'],
      [jsonPlugin, 'rate_json', 'json', 'market'],
    ] as const
    for (const [plugin, name, source, kind] of expected) {
      assert.equal(plugin.name, name)
      assert.deepEqual(
        plugin.rateSources.map((each) => each.name),
        [source]
      )
      assert.equal(plugin.rateSources[0].kind, kind)
      assert.deepEqual(Object.keys(plugin.settings), [`rate.${source}.url`])
    }
    assert.equal(coinbaseSource.defaultUrl, 'https://api.coinbase.com')
    assert.equal(krakenSource.defaultUrl, 'https://api.kraken.com')
    assert.equal(frankfurterSource.defaultUrl, 'https://api.frankfurter.dev/v1')
    assert.equal(jsonSource.defaultUrl, '')
  })

  test('no source module loads undici at its top', async ({ assert }) => {
    for (const file of [
      'plugins/rate_json/rate_request.ts',
      'plugins/rate_json/json_source.ts',
      'plugins/rate_coinbase/coinbase_source.ts',
      'plugins/rate_kraken/kraken_source.ts',
      'plugins/rate_frankfurter/frankfurter_source.ts',
    ]) {
      const text = await readFile(new URL(`../../${file}`, import.meta.url), 'utf8')
      assert.notMatch(text, /from ['"]undici['"]/, file)
    }
  })
})

test.group('Rate sources B: Coinbase', (group) => {
  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(() => fake.reset())

  test('supports our tokens against fiat codes', ({ assert }) => {
    assert.isTrue(coinbaseSource.supports({ token: 'TRX', fiat: 'CNY' }))
    assert.isTrue(coinbaseSource.supports({ token: 'USDT', fiat: 'EUR' }))
    assert.isFalse(coinbaseSource.supports({ token: 'DOGE', fiat: 'USD' }))
    assert.isFalse(coinbaseSource.supports({ token: 'TRX', fiat: 'cny' }))
  })

  test('one request per token; the string rates kept digit for digit; USD when the fiat is missing', async ({
    assert,
  }) => {
    fake.setCoinbase('TRX', 'CNY', '1.9712345678901234567891')
    fake.setCoinbase('TRX', 'USD', '0.27')
    fake.setCoinbase('USDT', 'USD', '1.0001')
    fake.setCoinbase('USDT', 'EUR', '0')
    const quotes = await coinbaseSource.quote(
      [
        { token: 'TRX', fiat: 'CNY' },
        { token: 'TRX', fiat: 'USD' },
        { token: 'USDT', fiat: 'XAF' },
        { token: 'USDT', fiat: 'EUR' },
      ],
      context()
    )
    assert.deepEqual(table(quotes), {
      'TRX/CNY': '1.9712345678901234567891',
      'TRX/USD': '0.27',
      'USDT/USD': '1.0001',
    })
    assert.deepEqual(
      fake.requestsTo('coinbase').map((request) => [request.path, request.query]),
      [
        ['/v2/exchange-rates', { currency: 'TRX' }],
        ['/v2/exchange-rates', { currency: 'USDT' }],
      ]
    )
  })

  test('a currency Coinbase does not know (not_found) is left out; the others kept', async ({
    assert,
  }) => {
    fake.setCoinbase('ETH', 'USD', '3000.5')
    const quotes = await coinbaseSource.quote(
      [
        { token: 'XPL', fiat: 'USD' },
        { token: 'ETH', fiat: 'USD' },
      ],
      context()
    )
    assert.deepEqual(table(quotes), { 'ETH/USD': '3000.5' })
    assert.lengthOf(fake.requestsTo('coinbase'), 2)
  })

  test('HTTP 429 fails with the wait from Retry-After, else 60 s', async ({ assert }) => {
    fake.setCoinbase('TRX', 'USD', '0.27')
    fake.limit('coinbase', { max: 0, windowMs: 60_000, retryAfterSeconds: 17 })
    let failure = await failureOf(coinbaseSource.quote([{ token: 'TRX', fiat: 'USD' }], context()))
    assert.match(failure.message, /Coinbase: HTTP 429: rate_limit_exceeded: Too many requests/)
    assert.equal(failure.retryAfterMs, 17_000)

    fake.limit('coinbase', { max: 0, windowMs: 60_000 })
    failure = await failureOf(coinbaseSource.quote([{ token: 'TRX', fiat: 'USD' }], context()))
    assert.equal(failure.retryAfterMs, 60_000)
  })

  test('an errors body for every token is a failure that quotes Coinbase', async ({ assert }) => {
    fake.inject('coinbase', {
      status: 401,
      body: { errors: [{ id: 'authentication_error', message: 'invalid api key' }] },
    })
    const failure = await failureOf(
      coinbaseSource.quote([{ token: 'TRX', fiat: 'USD' }], context())
    )
    assert.equal(
      failure.message,
      'Coinbase: HTTP 401 for TRX: authentication_error: invalid api key'
    )
    assert.isUndefined(failure.retryAfterMs)
  })

  test('an HTML error page or an empty table: no price, a failure when nothing is left', async ({
    assert,
  }) => {
    fake.setCoinbase('TRX', 'USD', '0.27')
    fake.setCoinbase('ETH', 'USD', '3000')
    fake.inject('coinbase', 'html_502')
    assert.deepEqual(
      table(
        await coinbaseSource.quote(
          [
            { token: 'TRX', fiat: 'USD' },
            { token: 'ETH', fiat: 'USD' },
          ],
          context()
        )
      ),
      { 'ETH/USD': '3000' }
    )
    fake.inject('coinbase', 'html_502')
    const failure = await failureOf(
      coinbaseSource.quote([{ token: 'TRX', fiat: 'USD' }], context())
    )
    assert.match(failure.message, /Coinbase: HTTP 502 without a JSON body/)
    fake.inject('coinbase', 'empty')
    assert.deepEqual(await coinbaseSource.quote([{ token: 'TRX', fiat: 'USD' }], context()), [])
  })

  test('a Coinbase that never answers fails at the refresh deadline', async ({ assert }) => {
    fake.inject('coinbase', 'hang')
    await assertTimesOut(assert, coinbaseSource, { token: 'TRX', fiat: 'USD' })
  })
})

test.group('Rate sources B: Kraken', (group) => {
  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(() => {
    fake.reset()
    forgetUnknownKrakenPairs()
  })

  test('supports the tokens Kraken lists, against any fiat code', ({ assert }) => {
    assert.isTrue(krakenSource.supports({ token: 'BTC', fiat: 'EUR' }))
    assert.isTrue(krakenSource.supports({ token: 'TRX', fiat: 'CNY' }))
    assert.isFalse(krakenSource.supports({ token: 'BNB', fiat: 'USD' }))
    assert.isFalse(krakenSource.supports({ token: 'constructor', fiat: 'USD' }))
  })

  test("one request; Kraken's own result keys mapped back; the fiat when listed, else USD", async ({
    assert,
  }) => {
    fake.setKraken('TRXUSD', '0.27123456789012345678')
    fake.setKraken('ETHUSD', '3000.10', 'XETHZUSD')
    fake.setKraken('ETHEUR', '2800.20', 'XETHZEUR')
    fake.setKraken('XBTUSD', '90000.1', 'XXBTZUSD')
    fake.setKraken('XBTEUR', '85000.2', 'XXBTZEUR')
    fake.setKraken('USDTUSD', '1.00010', 'USDTZUSD')
    const quotes = await krakenSource.quote(
      [
        { token: 'TRX', fiat: 'CNY' },
        { token: 'ETH', fiat: 'EUR' },
        { token: 'BTC', fiat: 'EUR' },
        { token: 'USDT', fiat: 'USD' },
      ],
      context()
    )
    assert.deepEqual(table(quotes), {
      'TRX/USD': '0.27123456789012345678',
      'ETH/EUR': '2800.2',
      'BTC/EUR': '85000.2',
      'USDT/USD': '1.0001',
    })
    const requests = fake.requestsTo('kraken')
    assert.lengthOf(requests, 1)
    assert.equal(requests[0].path, '/0/public/Ticker')
    assert.sameMembers(requests[0].query.pair.split(','), [
      'TRXUSD',
      'ETHEUR',
      'ETHUSD',
      'XBTEUR',
      'XBTUSD',
      'USDTUSD',
    ])
  })

  test('an unknown pair (200 with EQuery:Unknown asset pair) is found and left out, the others kept, and not asked again', async ({
    assert,
  }) => {
    fake.setKraken('TRXUSD', '0.27')
    fake.setKraken('SOLUSD', '150.5')
    fake.setKraken('ETHUSD', '3000', 'XETHZUSD')
    // TONUSD and TRXGBP are unknown to this Kraken: TRX/GBP falls back to TRXUSD.
    const pairs = [
      { token: 'TRX', fiat: 'GBP' },
      { token: 'TON', fiat: 'USD' },
      { token: 'SOL', fiat: 'USD' },
      { token: 'ETH', fiat: 'USD' },
    ]
    const quotes = await krakenSource.quote(pairs, context())
    assert.deepEqual(table(quotes), {
      'TRX/USD': '0.27',
      'SOL/USD': '150.5',
      'ETH/USD': '3000',
    })
    assert.isAbove(fake.requestsTo('kraken').length, 1)

    fake.requests = []
    assert.deepEqual(table(await krakenSource.quote(pairs, context())), table(quotes))
    const again = fake.requestsTo('kraken')
    assert.lengthOf(again, 1)
    assert.sameMembers(again[0].query.pair.split(','), ['TRXUSD', 'SOLUSD', 'ETHUSD'])
  })

  test('EAPI:Rate limit exceeded in HTTP 200 fails with a wait', async ({ assert }) => {
    fake.setKraken('TRXUSD', '0.27')
    fake.limit('kraken', { max: 0, windowMs: 60_000 })
    let failure = await failureOf(krakenSource.quote([{ token: 'TRX', fiat: 'USD' }], context()))
    assert.equal(failure.message, 'Kraken: EAPI:Rate limit exceeded, retry after 60 s')
    assert.equal(failure.retryAfterMs, 60_000)

    fake.limit('kraken', { max: 0, windowMs: 60_000, retryAfterSeconds: 5 })
    failure = await failureOf(krakenSource.quote([{ token: 'TRX', fiat: 'USD' }], context()))
    assert.equal(failure.retryAfterMs, 5_000)
  })

  test('other errors in HTTP 200, an HTML page: failures saying so; warnings are not errors', async ({
    assert,
  }) => {
    fake.setKraken('TRXUSD', '0.27')
    fake.inject('kraken', { status: 200, body: { error: ['EService:Unavailable'] } })
    let failure = await failureOf(krakenSource.quote([{ token: 'TRX', fiat: 'USD' }], context()))
    assert.equal(failure.message, 'Kraken: EService:Unavailable')
    assert.isUndefined(failure.retryAfterMs)

    fake.inject('kraken', 'html_502')
    failure = await failureOf(krakenSource.quote([{ token: 'TRX', fiat: 'USD' }], context()))
    assert.match(failure.message, /Kraken: HTTP 502 without a JSON body/)

    fake.inject('kraken', {
      status: 200,
      body: { error: ['WGeneral:Deprecated'], result: { TRXUSD: { c: ['0.28', '1'] } } },
    })
    assert.deepEqual(table(await krakenSource.quote([{ token: 'TRX', fiat: 'USD' }], context())), {
      'TRX/USD': '0.28',
    })

    fake.inject('kraken', 'empty')
    assert.deepEqual(await krakenSource.quote([{ token: 'TRX', fiat: 'USD' }], context()), [])
  })

  test('a non-positive last price is left out', async ({ assert }) => {
    fake.setKraken('TRXUSD', '0.00000000')
    fake.setKraken('SOLUSD', '150')
    assert.deepEqual(
      table(
        await krakenSource.quote(
          [
            { token: 'TRX', fiat: 'USD' },
            { token: 'SOL', fiat: 'USD' },
          ],
          context()
        )
      ),
      { 'SOL/USD': '150' }
    )
  })

  test('a Kraken that never answers fails at the refresh deadline', async ({ assert }) => {
    fake.inject('kraken', 'hang')
    await assertTimesOut(assert, krakenSource, { token: 'TRX', fiat: 'USD' })
  })
})

test.group('Rate sources B: Frankfurter', (group) => {
  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(() => fake.reset())

  test('supports USD against the ECB currencies only', ({ assert }) => {
    assert.isTrue(frankfurterSource.supports({ token: 'USD', fiat: 'CNY' }))
    assert.isTrue(frankfurterSource.supports({ token: 'USD', fiat: 'EUR' }))
    assert.isFalse(frankfurterSource.supports({ token: 'USD', fiat: 'VND' }))
    assert.isFalse(frankfurterSource.supports({ token: 'USDT', fiat: 'CNY' }))
  })

  test('one request for every fiat; the JSON numbers kept as their digits; observedAt the date', async ({
    assert,
  }) => {
    fake.setFrankfurter('CNY', '7.2112345678901234567')
    fake.setFrankfurter('EUR', '0.95')
    fake.frankfurterDate = '2026-11-26'
    const quotes = await frankfurterSource.quote(
      [
        { token: 'USD', fiat: 'CNY' },
        { token: 'USD', fiat: 'EUR' },
        { token: 'USD', fiat: 'CNY' },
      ],
      context({ baseUrl: `${fake.url}/v1` })
    )
    const day = Date.UTC(2026, 10, 26)
    assert.deepEqual(table(quotes), {
      'USD/CNY': ['7.2112345678901234567', day],
      'USD/EUR': ['0.95', day],
    })
    const requests = fake.requestsTo('frankfurter')
    assert.deepEqual(
      requests.map((request) => [request.path, request.query]),
      [['/v1/latest', { base: 'USD', symbols: 'CNY,EUR' }]]
    )
  })

  test('the old host (base URL without /v1) is served at /latest', async ({ assert }) => {
    fake.setFrankfurter('JPY', '150.25')
    const quotes = await frankfurterSource.quote([{ token: 'USD', fiat: 'JPY' }], context())
    assert.deepEqual(table(quotes), { 'USD/JPY': ['150.25', Date.UTC(2026, 10, 26)] })
    assert.equal(fake.requestsTo('frankfurter')[0].path, '/latest')
  })

  test('404 {"message":"not found"} is a failure naming the currencies asked', async ({
    assert,
  }) => {
    fake.setFrankfurter('EUR', '0.95')
    const failure = await failureOf(
      frankfurterSource.quote(
        [
          { token: 'USD', fiat: 'EUR' },
          { token: 'USD', fiat: 'ISK' },
        ],
        context({ baseUrl: `${fake.url}/v1` })
      )
    )
    assert.equal(
      failure.message,
      'Frankfurter: HTTP 404: not found (a currency among EUR,ISK unknown?)'
    )
  })

  test('429 with Retry-After, an HTML page, an empty table', async ({ assert }) => {
    fake.setFrankfurter('EUR', '0.95')
    fake.limit('frankfurter', { max: 0, windowMs: 60_000, retryAfterSeconds: 30 })
    let failure = await failureOf(
      frankfurterSource.quote([{ token: 'USD', fiat: 'EUR' }], context())
    )
    assert.equal(failure.retryAfterMs, 30_000)
    assert.match(failure.message, /HTTP 429: Too Many Requests, retry after 30 s/)
    fake.limit('frankfurter', { max: 100, windowMs: 60_000 })

    fake.inject('frankfurter', 'html_502')
    failure = await failureOf(frankfurterSource.quote([{ token: 'USD', fiat: 'EUR' }], context()))
    assert.match(failure.message, /Frankfurter: HTTP 502 without a JSON body/)

    fake.inject('frankfurter', 'empty')
    assert.deepEqual(await frankfurterSource.quote([{ token: 'USD', fiat: 'EUR' }], context()), [])
  })

  test('an answer for another base is refused', async ({ assert }) => {
    fake.inject('frankfurter', {
      status: 200,
      body: { amount: 1, base: 'EUR', date: '2026-11-26', rates: { CNY: 7.7 } },
    })
    const failure = await failureOf(
      frankfurterSource.quote([{ token: 'USD', fiat: 'CNY' }], context())
    )
    assert.equal(failure.message, 'Frankfurter: asked for base USD, answered base EUR')
  })

  test('a Frankfurter that never answers fails at the refresh deadline', async ({ assert }) => {
    fake.inject('frankfurter', 'hang')
    await assertTimesOut(assert, frankfurterSource, { token: 'USD', fiat: 'EUR' })
  })
})

test.group('Rate sources B: JSON', (group) => {
  group.setup(async () => {
    await fake.start()
    return () => fake.stop()
  })
  group.each.setup(() => fake.reset())

  const jsonUrl = () => `${fake.url}/json/`

  test('the inverse keeps 18 significant digits, exact when it has no more', ({ assert }) => {
    assert.equal(invertRate(new Decimal('0.125')).toFixed(), '8')
    assert.equal(invertRate(new Decimal('0.5')).toFixed(), '2')
    assert.equal(invertRate(new Decimal('3')).toFixed(), '0.333333333333333333')
    assert.equal(invertRate(new Decimal('1.5')).toFixed(), '0.666666666666666667')
    // Far below 1e-30 (the money Decimal's places) and far above: still 18 digits.
    assert.isTrue(invertRate(new Decimal('3e35')).eq('3.33333333333333333e-36'))
    assert.equal(invertRate(new Decimal('0.0000000000003')).toFixed(), '3333333333333.33333')
  })

  test('one request per fiat, lower-case; tokens per fiat inverted exactly', async ({ assert }) => {
    fake.setJson('cny', 'usdt', '0.138696255201109570')
    fake.setJson('cny', 'trx', '0.5')
    fake.setJson('cny', 'eth', '0')
    fake.setJson('usd', 'trx', '3.6866359447004608')
    const quotes = await jsonSource.quote(
      [
        { token: 'USDT', fiat: 'CNY' },
        { token: 'TRX', fiat: 'CNY' },
        { token: 'ETH', fiat: 'CNY' },
        { token: 'SOL', fiat: 'CNY' },
        { token: 'TRX', fiat: 'USD' },
      ],
      context({ baseUrl: jsonUrl() })
    )
    assert.deepEqual(table(quotes), {
      // 1 / 0.13869625520110957 = 7.21 (the API's 7.21 CNY per USDT, as it stored the inverse).
      'USDT/CNY': new Decimal(1).div('0.138696255201109570').precision(18).toFixed(),
      'TRX/CNY': '2',
      // 3.6866359447004608 is 1 / 0.27125 cut at 17 digits: its inverse is a hair above.
      'TRX/USD': '0.271250000000000002',
    })
    assert.equal(table(quotes)['USDT/CNY'], '7.21')
    assert.deepEqual(
      fake.requestsTo('json').map((request) => request.path),
      ['/json/cny.json', '/json/usd.json']
    )
  })

  test('supports any well-formed pair; without its URL, quote refuses', async ({ assert }) => {
    assert.isTrue(jsonSource.supports({ token: 'USDT', fiat: 'CNY' }))
    assert.isFalse(jsonSource.supports({ token: 'USDT', fiat: 'cny' }))
    assert.isFalse(jsonSource.supports({ token: '../x', fiat: 'CNY' }))
    const failure = await failureOf(
      jsonSource.quote([{ token: 'USDT', fiat: 'CNY' }], context({ baseUrl: '' }))
    )
    assert.equal(failure.message, 'JSON rates: rate.json.url is not set')
    assert.lengthOf(fake.requests, 0)
  })

  test('no file for the fiat, an HTML page, no table: failures saying so', async ({ assert }) => {
    let failure = await failureOf(
      jsonSource.quote([{ token: 'USDT', fiat: 'CNY' }], context({ baseUrl: jsonUrl() }))
    )
    assert.equal(
      failure.message,
      "JSON rates: HTTP 404 without a JSON body (a proxy's or CDN's error page?)"
    )
    fake.setJson('cny', 'usdt', '0.1387')
    fake.inject('json', 'html_502')
    failure = await failureOf(
      jsonSource.quote([{ token: 'USDT', fiat: 'CNY' }], context({ baseUrl: jsonUrl() }))
    )
    assert.match(failure.message, /HTTP 502 without a JSON body/)
    fake.inject('json', { status: 200, body: { date: '2026-11-26', usd: {} } })
    failure = await failureOf(
      jsonSource.quote([{ token: 'USDT', fiat: 'CNY' }], context({ baseUrl: jsonUrl() }))
    )
    assert.equal(failure.message, 'JSON rates: /json/cny.json has no "cny" object')
    fake.limit('json', { max: 0, windowMs: 60_000, retryAfterSeconds: 9 })
    failure = await failureOf(
      jsonSource.quote([{ token: 'USDT', fiat: 'CNY' }], context({ baseUrl: jsonUrl() }))
    )
    assert.equal(failure.retryAfterMs, 9_000)
  })

  test('a JSON API that never answers fails at the refresh deadline', async ({ assert }) => {
    fake.inject('json', 'hang')
    await assertTimesOut(assert, jsonSource, { token: 'USDT', fiat: 'CNY' }, jsonUrl())
  })
})
