import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import { RateRefresh } from '#rates/rate_refresh'
import rateService from '#rates/rate_service'
import configCache from '#services/config_cache'
import { resetDatabase } from '#tests/helpers/database'
import { FAKE_NETWORK, installFakeChain } from '#tests/helpers/fake_chain'
import { FakeRates } from '#tests/helpers/fake_rates'
import { FakeRatesMore } from '#tests/helpers/fake_rates_more'

async function current(token: string, fiat: string) {
  const row = await db.from('rate_current').where({ token, fiat }).first()
  return row ? { ...row, sources: JSON.parse(row.sources) } : null
}

test.group('Live rates from the real source plugins, against their fake APIs', (group) => {
  const fakes = new FakeRates()
  const more = new FakeRatesMore()

  group.setup(async () => {
    await fakes.start()
    await more.start()
    return async () => {
      await fakes.stop()
      await more.stop()
    }
  })

  group.each.setup(async () => {
    await resetDatabase()
    await installFakeChain()
    fakes.reset()
    more.reset()
    await settings.setMany({
      'rate.currencies': 'CNY',
      'rate.sources': 'okx_p2p,coingecko,coinbase,binance,frankfurter',
      'rate.min_sources': '2',
      'rate.timeout_seconds': '1',
      'rate.okx_p2p.url': fakes.url,
      'rate.coingecko.url': fakes.url,
      'rate.binance.url': fakes.url,
      'rate.coinbase.url': more.url,
      'rate.frankfurter.url': more.url,
    })
    fakes.setP2p('USDT', 'CNY', ['7.20', '7.21', '7.22', '7.25'])
    fakes.setCoingecko('tether', 'cny', '7.19')
    more.setCoinbase('USDT', 'CNY', '7.23')
    configCache.invalidate()
  })

  test('USDT/CNY: the median of OKX P2P, CoinGecko and Coinbase prices an order', async ({
    assert,
  }) => {
    await new RateRefresh().refresh()
    const row = await current('USDT', 'CNY')
    assert.isTrue(Boolean(row!.ok), row!.reason)
    const answers = await db.from('rate_answers').orderBy('source')
    assert.deepEqual(
      answers.map((answer) => [answer.source, answer.price]),
      [
        ['coinbase', '7.23'],
        ['coingecko', '7.19'],
        ['okx_p2p', '7.215'],
      ]
    )
    assert.equal(row!.rate, '7.215')
    assert.sameMembers(row!.sources.used, ['okx_p2p', 'coingecko', 'coinbase'])
    configCache.invalidate()
    const quote = await rateService.quote('72.15', 'CNY', 'USDT')
    assert.equal(quote.amount.toFixed(), '10')
    assert.equal(quote.source, 'live: okx_p2p, coingecko, coinbase')
  })

  test('a source far from the others is dropped; one that hangs is a failure and the rest decide', async ({
    assert,
  }) => {
    more.setCoinbase('USDT', 'CNY', '8.50')
    fakes.inject('coingecko', 'hang')
    await new RateRefresh().refresh()
    const row = await current('USDT', 'CNY')
    // Left: okx_p2p 7.215 and coinbase 8.50; too far apart to tell which is right.
    assert.isFalse(Boolean(row!.ok))
    assert.include(row!.reason, 'disagree')
    const coingecko = await db.from('rate_answers').where('source', 'coingecko').first()
    assert.isNull(coingecko.price)
    assert.include(coingecko.error, 'no answer before the refresh')

    fakes.reset()
    fakes.setP2p('USDT', 'CNY', ['7.20', '7.21', '7.22', '7.25'])
    fakes.setCoingecko('tether', 'cny', '7.19')
    await new RateRefresh().refresh()
    const again = await current('USDT', 'CNY')
    assert.isTrue(Boolean(again!.ok), again!.reason)
    // The median of okx_p2p 7.215 and coingecko 7.19, coinbase dropped.
    assert.equal(again!.rate, '7.2025')
    assert.deepEqual(
      again!.sources.dropped.map((entry: { source: string }) => entry.source),
      ['coinbase']
    )
  })

  test('TRX/CNY from Binance’s TRXUSDT, crossed to CNY by the ECB rate', async ({ assert }) => {
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
    await settings.set('rate.min_sources', '1')
    fakes.setBinance('TRXUSDT', '0.2712')
    more.setFrankfurter('CNY', '7.2')
    await new RateRefresh().refresh()
    const binance = await db.from('rate_answers').where({ source: 'binance', token: 'TRX' }).first()
    assert.equal(binance.quote, 'USDT')
    assert.equal(binance.price, '1.95264')
    const row = await current('TRX', 'CNY')
    assert.isTrue(Boolean(row!.ok), row!.reason)
    assert.equal(row!.rate, '1.95264')
  })
})
