import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import { RateRefresh } from '#rates/rate_refresh'
import configCache from '#services/config_cache'
import { forgetUnknownKrakenPairs } from '#plugins/rate_kraken/kraken_source'
import { forgetUnknownBinanceSymbols } from '#plugins/rate_binance/binance_source'
import { resetDatabase } from '#tests/helpers/database'
import { FAKE_NETWORK, installFakeChain } from '#tests/helpers/fake_chain'
import { FakeRates } from '#tests/helpers/fake_rates'
import { FakeRatesMore } from '#tests/helpers/fake_rates_more'

/**
 * Kraken, OKX spot and the JSON source through the real refresh job
 * (rates:refresh), against their fake APIs: each one's answer reaching
 * rate_answers and rate_current, and its API's own errors recorded as that
 * source's failure while the other sources still price the pair. The
 * pattern of live_rates_sources.spec.ts: OKX P2P (7.215, the median of its
 * asks), CoinGecko (7.19) and Coinbase (7.23) price USDT/CNY.
 */

async function current(token: string, fiat: string) {
  const row = await db.from('rate_current').where({ token, fiat }).first()
  return row ? { ...row, sources: JSON.parse(row.sources) } : null
}

async function answerOf(source: string, token: string, fiat = 'CNY') {
  return db.from('rate_answers').where({ source, token, fiat }).first()
}

async function addTrx() {
  await db.table('tokens').insert({
    network: FAKE_NETWORK,
    symbol: 'TRX',
    contract: null,
    decimals: 6,
    amount_precision: 2,
    enabled: true,
    created_at: Date.now(),
    updated_at: Date.now(),
  })
}

const fakes = new FakeRates()
const more = new FakeRatesMore()

/** The sources of live_rates_sources.spec.ts plus `extra`, every one at its fake. */
async function setUp(sources: string, extra: Record<string, string> = {}) {
  await resetDatabase()
  await installFakeChain()
  fakes.reset()
  more.reset()
  forgetUnknownKrakenPairs()
  forgetUnknownBinanceSymbols()
  await settings.setMany({
    'rate.currencies': 'CNY',
    'rate.sources': sources,
    'rate.min_sources': '2',
    'rate.timeout_seconds': '1',
    'rate.okx_p2p.url': fakes.url,
    'rate.coingecko.url': fakes.url,
    'rate.binance.url': fakes.url,
    'rate.coinbase.url': more.url,
    'rate.frankfurter.url': more.url,
    ...extra,
  })
  fakes.setP2p('USDT', 'CNY', ['7.20', '7.21', '7.22', '7.25'])
  fakes.setCoingecko('tether', 'cny', '7.19')
  more.setCoinbase('USDT', 'CNY', '7.23')
  more.setFrankfurter('CNY', '7.2')
  configCache.invalidate()
}

/** A group's setup: both fake servers, stopped at its end. */
async function startFakes() {
  await fakes.start()
  await more.start()
  return async () => {
    await fakes.stop()
    await more.stop()
  }
}

test.group('Live rates through the refresh: Kraken', (group) => {
  group.setup(startFakes)
  group.each.setup(() =>
    setUp('okx_p2p,coingecko,coinbase,kraken,frankfurter', { 'rate.kraken.url': more.url })
  )

  test('USDT/CNY: Kraken’s USDTZUSD last price, crossed to CNY, is one of the median’s answers', async ({
    assert,
  }) => {
    more.setKraken('USDTUSD', '1.0004', 'USDTZUSD')
    await new RateRefresh().refresh()

    // CNY is no Kraken fiat: the USD pair is asked, and answered under Kraken's own key.
    const asked = more.requestsTo('kraken')
    assert.deepEqual(
      asked.map((request) => [request.path, request.query.pair]),
      [['/0/public/Ticker', 'USDTUSD']]
    )
    const kraken = await answerOf('kraken', 'USDT')
    assert.equal(kraken.quote, 'USD')
    // 1.0004 USD × 7.2 CNY per USD.
    assert.equal(kraken.price, '7.20288')
    assert.equal(kraken.error, '')
    const row = await current('USDT', 'CNY')
    assert.isTrue(Boolean(row!.ok), row!.reason)
    assert.sameMembers(row!.sources.used, ['okx_p2p', 'coingecko', 'coinbase', 'kraken'])
    // The median of 7.19, 7.20288, 7.215 and 7.23 (7.215 without Kraken's).
    assert.equal(row!.rate, '7.20894')
  })

  test('EQuery:Unknown asset pair in HTTP 200: the pairs Kraken knows are still priced; the unknown one is Kraken’s failure, the others price it', async ({
    assert,
  }) => {
    await addTrx()
    fakes.setCoingecko('tron', 'cny', '1.95')
    // This Kraken knows TRXUSD, not USDTUSD: one request for both is refused whole.
    more.setKraken('TRXUSD', '0.2712')
    const refresh = new RateRefresh()
    await refresh.refresh()

    const asked = more.requestsTo('kraken').map((request) => request.query.pair)
    assert.deepEqual(asked, ['TRXUSD,USDTUSD', 'TRXUSD', 'USDTUSD'])
    const trx = await answerOf('kraken', 'TRX')
    assert.equal(trx.quote, 'USD')
    assert.equal(trx.price, '1.95264')
    const usdt = await answerOf('kraken', 'USDT')
    assert.isNull(usdt.price)
    assert.equal(usdt.error, 'no USDT price')

    const trxRow = await current('TRX', 'CNY')
    assert.isTrue(Boolean(trxRow!.ok), trxRow!.reason)
    assert.sameMembers(trxRow!.sources.used, ['coingecko', 'kraken'])
    assert.equal(trxRow!.rate, '1.95132')
    const usdtRow = await current('USDT', 'CNY')
    assert.isTrue(Boolean(usdtRow!.ok), usdtRow!.reason)
    assert.sameMembers(usdtRow!.sources.used, ['okx_p2p', 'coingecko', 'coinbase'])
    assert.deepEqual(usdtRow!.sources.failed, ['kraken'])
    assert.equal(usdtRow!.rate, '7.215')

    // The next refresh does not ask Kraken for the pair it called unknown.
    more.requests = []
    await refresh.refresh()
    assert.deepEqual(
      more.requestsTo('kraken').map((request) => request.query.pair),
      ['TRXUSD']
    )
    assert.equal((await answerOf('kraken', 'TRX')).price, '1.95264')
  })

  test('EAPI:Rate limit exceeded in HTTP 200: Kraken’s failure, held back 60 s while the others price USDT/CNY', async ({
    assert,
  }) => {
    more.setKraken('USDTUSD', '1.0004', 'USDTZUSD')
    more.limit('kraken', { max: 0, windowMs: 60_000 })
    const refresh = new RateRefresh()
    const now = Date.now()
    await refresh.refresh(now)

    const kraken = await answerOf('kraken', 'USDT')
    assert.isNull(kraken.price)
    assert.equal(kraken.error, 'Kraken: EAPI:Rate limit exceeded, retry after 60 s')
    const row = await current('USDT', 'CNY')
    assert.isTrue(Boolean(row!.ok), row!.reason)
    assert.deepEqual(row!.sources.failed, ['kraken'])
    assert.equal(row!.rate, '7.215')
    assert.lengthOf(more.requestsTo('kraken'), 1)

    // Within the minute Kraken is not asked; past it, it is, and prices again.
    await refresh.refresh(now + 30_000)
    assert.lengthOf(more.requestsTo('kraken'), 1)
    assert.match((await answerOf('kraken', 'USDT')).error, /^waiting until \S+ \(it asked to\)$/)
    more.limit('kraken', { max: 100, windowMs: 60_000 })
    await refresh.refresh(now + 61_000)
    assert.lengthOf(more.requestsTo('kraken'), 2)
    assert.equal((await answerOf('kraken', 'USDT')).price, '7.20288')
    assert.equal((await current('USDT', 'CNY'))!.rate, '7.20894')
  })
})

test.group('Live rates through the refresh: OKX spot', (group) => {
  group.setup(startFakes)
  group.each.setup(async () => {
    await setUp('okx_p2p,coingecko,coinbase,okx,binance,frankfurter', {
      'rate.okx.url': fakes.url,
    })
    await addTrx()
    fakes.setBinance('TRXUSDT', '0.2712')
    fakes.setCoingecko('tron', 'cny', '1.953')
  })

  test('TRX/CNY: OKX’s TRX-USDT last price, crossed to CNY, joins Binance’s and CoinGecko’s', async ({
    assert,
  }) => {
    fakes.setOkx('TRX-USDT', '0.2715')
    await new RateRefresh().refresh()

    // One ticker, for TRX only (USDT is the P2P source's).
    assert.deepEqual(
      fakes.requestsTo('okx').map((request) => [request.path, request.query]),
      [['/api/v5/market/ticker', { instId: 'TRX-USDT' }]]
    )
    const okx = await answerOf('okx', 'TRX')
    assert.equal(okx.quote, 'USDT')
    // 0.2715 USDT × 7.2.
    assert.equal(okx.price, '1.9548')
    assert.equal(okx.error, '')
    assert.notExists(await answerOf('okx', 'USDT'))
    const row = await current('TRX', 'CNY')
    assert.isTrue(Boolean(row!.ok), row!.reason)
    assert.sameMembers(row!.sources.used, ['okx', 'binance', 'coingecko'])
    // The median of 1.95264, 1.953 and 1.9548 (1.95282 without OKX's).
    assert.equal(row!.rate, '1.953')
  })

  test('code 50011 (HTTP 429, then in an HTTP 200): OKX’s failure, held back 2 s, while Binance and CoinGecko price TRX/CNY', async ({
    assert,
  }) => {
    fakes.setOkx('TRX-USDT', '0.2715')
    // OKX's error table gives 50011 with HTTP 429; the same body is seen in HTTP 200 too.
    fakes.okxLimitStatus = 429
    fakes.limit('okx', { max: 0, windowMs: 2000 })
    const refresh = new RateRefresh()
    const now = Date.now()
    await refresh.refresh(now)

    let okx = await answerOf('okx', 'TRX')
    assert.isNull(okx.price)
    assert.equal(okx.error, 'OKX: HTTP 429, code 50011: Too Many Requests, retry after 2 s')
    let row = await current('TRX', 'CNY')
    assert.isTrue(Boolean(row!.ok), row!.reason)
    assert.sameMembers(row!.sources.used, ['binance', 'coingecko'])
    // (Coinbase lists no TRX here: no price from it either.)
    assert.sameMembers(row!.sources.failed, ['okx', 'coinbase'])
    assert.equal(row!.rate, '1.95282')
    assert.lengthOf(fakes.requestsTo('okx'), 1)

    // Within the 2 s, OKX is not asked.
    await refresh.refresh(now + 1000)
    assert.lengthOf(fakes.requestsTo('okx'), 1)
    assert.match((await answerOf('okx', 'TRX')).error, /^waiting until \S+ \(it asked to\)$/)

    // Past them it is, and answers 50011 in an HTTP 200: a failure the same.
    fakes.okxLimitStatus = 200
    await refresh.refresh(now + 2500)
    assert.lengthOf(fakes.requestsTo('okx'), 2)
    okx = await answerOf('okx', 'TRX')
    assert.isNull(okx.price)
    assert.equal(okx.error, 'OKX: HTTP 200, code 50011: Too Many Requests, retry after 2 s')
    row = await current('TRX', 'CNY')
    assert.isTrue(Boolean(row!.ok), row!.reason)
    assert.equal(row!.rate, '1.95282')

    // The limit over, OKX prices TRX/CNY again.
    fakes.limit('okx', { max: 20, windowMs: 2000 })
    await refresh.refresh(now + 5000)
    assert.lengthOf(fakes.requestsTo('okx'), 3)
    assert.equal((await answerOf('okx', 'TRX')).price, '1.9548')
    assert.equal((await current('TRX', 'CNY'))!.rate, '1.953')
  })
})

test.group('Live rates through the refresh: the JSON source', (group) => {
  group.setup(startFakes)
  group.each.setup(() =>
    setUp('okx_p2p,coingecko,coinbase,json', { 'rate.json.url': `${more.url}/json` })
  )

  test('USDT/CNY: the file’s USDT per CNY, inverted, is one of the median’s answers', async ({
    assert,
  }) => {
    // 0.13869625520110957 USDT per CNY: 7.21 CNY per USDT.
    more.setJson('cny', 'usdt', '0.138696255201109570')
    more.setJson('cny', 'trx', '3.6866359447004608')
    await new RateRefresh().refresh()

    assert.deepEqual(
      more.requestsTo('json').map((request) => request.path),
      ['/json/cny.json']
    )
    const json = await answerOf('json', 'USDT')
    assert.equal(json.quote, 'CNY')
    assert.equal(json.price, '7.21')
    assert.equal(json.error, '')
    const row = await current('USDT', 'CNY')
    assert.isTrue(Boolean(row!.ok), row!.reason)
    assert.sameMembers(row!.sources.used, ['okx_p2p', 'coingecko', 'coinbase', 'json'])
    // The median of 7.19, 7.21, 7.215 and 7.23 (7.215 without the file's).
    assert.equal(row!.rate, '7.2125')
  })

  test('an HTML page in HTTP 200, then a file without USDT: the JSON source’s failure, the others price USDT/CNY', async ({
    assert,
  }) => {
    // The CDN's file lists other tokens only; before it, a captive portal's page.
    more.setJson('cny', 'trx', '3.6866359447004608')
    more.inject('json', {
      status: 200,
      text: '<!doctype html><html><head><title>Sign in to the network</title></head><body><form>…</form></body></html>',
    })
    const refresh = new RateRefresh()
    await refresh.refresh()

    let json = await answerOf('json', 'USDT')
    assert.isNull(json.price)
    assert.equal(
      json.error,
      "JSON rates: HTTP 200 without a JSON body (a proxy's or CDN's error page?)"
    )
    let row = await current('USDT', 'CNY')
    assert.isTrue(Boolean(row!.ok), row!.reason)
    assert.sameMembers(row!.sources.used, ['okx_p2p', 'coingecko', 'coinbase'])
    assert.deepEqual(row!.sources.failed, ['json'])
    assert.equal(row!.rate, '7.215')

    await refresh.refresh()
    assert.lengthOf(more.requestsTo('json'), 2)
    json = await answerOf('json', 'USDT')
    assert.isNull(json.price)
    assert.equal(json.error, 'no USDT price')
    row = await current('USDT', 'CNY')
    assert.isTrue(Boolean(row!.ok), row!.reason)
    assert.deepEqual(row!.sources.failed, ['json'])
    assert.equal(row!.rate, '7.215')

    // Once the file lists USDT, the source is used again.
    more.setJson('cny', 'usdt', '0.138696255201109570')
    await refresh.refresh()
    assert.equal((await answerOf('json', 'USDT')).price, '7.21')
    assert.equal((await current('USDT', 'CNY'))!.rate, '7.2125')
  })
})
