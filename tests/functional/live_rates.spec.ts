import apiKeyAdmin from '#services/operators/api_key_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import rateSources from '#rates/rate_source_registry'
import { RateRefresh } from '#rates/rate_refresh'
import rateService from '#rates/rate_service'
import configCache from '#services/config_cache'
import { Decimal } from '#support/text/money'
import { RateSourceFailure, type LiveRateSource, type RatePair } from '#rates/live_rate_source'
import { resetDatabase } from '#tests/helpers/database'
import { installFakeChain } from '#tests/helpers/fake_chain'
import { runCommand } from '#tests/helpers/ace_command'
import RateSet from '#commands/rate_set'
import RateList from '#commands/rate_list'
import RateSources from '#commands/rate_sources'
import RateRefreshCommand from '#commands/rate_refresh'
import { createOrder, orderParams } from '#tests/helpers/merchant'
import { FAKE_NETWORK } from '#tests/helpers/fake_chain'
import { rateChecks } from '#services/doctor/rate_checks'

/** A market source answering from a table; `fail` makes it throw; `calls` counts its refreshes. */
class TableSource implements LiveRateSource {
  kind = 'market' as const
  description = 'a test source'
  defaultUrl = 'http://127.0.0.1:9'
  calls = 0
  fail: RateSourceFailure | null = null
  constructor(
    readonly name: string,
    public prices: Record<string, string>,
    readonly quoteIn: string | null = null
  ) {}
  supports(pair: RatePair) {
    return `${pair.token}` in this.prices
  }
  async quote(pairs: RatePair[]) {
    this.calls++
    if (this.fail) throw this.fail
    return pairs
      .filter((pair) => this.prices[pair.token])
      .map((pair) => ({
        token: pair.token,
        quote: this.quoteIn ?? pair.fiat,
        price: new Decimal(this.prices[pair.token]),
      }))
  }
}

class CrossSource implements LiveRateSource {
  kind = 'fiat_cross' as const
  name = 'test_cross'
  description = 'a test fiat cross source'
  defaultUrl = 'http://127.0.0.1:9'
  constructor(public rates: Record<string, string>) {}
  supports(pair: RatePair) {
    return pair.token === 'USD' && pair.fiat in this.rates
  }
  async quote(pairs: RatePair[]) {
    return pairs.map((pair) => ({
      token: 'USD',
      quote: pair.fiat,
      price: new Decimal(this.rates[pair.fiat]),
    }))
  }
}

const a = new TableSource('test_a', { USDT: '7.20' })
const b = new TableSource('test_b', { USDT: '7.22' })
const c = new TableSource('test_c', { USDT: '7.21' })
const usd = new TableSource('test_usd', { USDT: '1.001' }, 'USD')
const cross = new CrossSource({ CNY: '7.2' })

async function stored(token: string, fiat: string) {
  return db.from('rate_current').where({ token, fiat }).first()
}

test.group('Live rates: refreshed by the workers, read by order creation', (group) => {
  group.setup(() => {
    for (const source of [a, b, c, usd, cross]) rateSources.register(source)
    return () => {
      for (const source of [a, b, c, usd, cross]) rateSources.unregister(source.name)
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    await installFakeChain()
    await settings.setMany({
      'rate.currencies': 'CNY',
      'rate.sources': 'test_a,test_b,test_c',
      'rate.min_sources': '2',
      'rate.max_deviation_percent': '2',
      'rate_limit.create_per_minute': '0',
    })
    a.prices = { USDT: '7.20' }
    b.prices = { USDT: '7.22' }
    c.prices = { USDT: '7.21' }
    for (const source of [a, b, c, usd]) {
      source.fail = null
      source.calls = 0
    }
    configCache.invalidate()
  })

  test('the median of three sources prices an order; creating it asks no source', async ({
    client,
    assert,
  }) => {
    await new RateRefresh().refresh()
    const row = await stored('USDT', 'CNY')
    assert.isTrue(Boolean(row.ok))
    assert.equal(row.rate, '7.21')
    assert.sameMembers(JSON.parse(row.sources).used, ['test_a', 'test_b', 'test_c'])
    const calls = a.calls + b.calls + c.calls
    configCache.invalidate()
    const response = await createOrder(
      client,
      orderParams({ network: FAKE_NETWORK, token: 'usdt', amount: 72.1 })
    )
    assert.equal(response.status(), 200, JSON.stringify(response.body()))
    // 72.1 CNY at 7.21: 10 USDT (the unique amount may add a step).
    assert.isTrue(new Decimal(response.body().data.actual_amount).gte(10))
    assert.isTrue(new Decimal(response.body().data.actual_amount).lt(10.1))
    assert.equal(a.calls + b.calls + c.calls, calls, 'no source was asked by the create')
    // The order keeps what priced it.
    const saved = await db.from('orders').where('trade_id', response.body().data.trade_id).first()
    assert.deepInclude(saved, {
      rate: '7.21',
      rate_source: 'live: test_a, test_b, test_c',
      rate_markup: '',
    })
  })

  test('an outlier is dropped and flagged; a source that fails keeps its last price until it is too old', async ({
    assert,
  }) => {
    c.prices = { USDT: '9.99' }
    const refresh = new RateRefresh()
    await refresh.refresh()
    let row = await stored('USDT', 'CNY')
    assert.equal(row.rate, '7.21')
    assert.deepEqual(
      JSON.parse(row.sources).dropped.map((entry: { source: string }) => entry.source),
      ['test_c']
    )

    a.fail = new RateSourceFailure('HTTP 429: slow down', 60_000)
    await refresh.refresh(Date.now() + 1000)
    row = await stored('USDT', 'CNY')
    assert.isTrue(Boolean(row.ok), 'the last price of test_a is still fresh')
    const answer = await db.from('rate_answers').where({ source: 'test_a' }).first()
    assert.equal(answer.price, '7.2')
    assert.equal(answer.error, 'HTTP 429: slow down')
    // Held for the minute it asked: not asked again meanwhile.
    const callsBefore = a.calls
    await refresh.refresh(Date.now() + 2000)
    assert.equal(a.calls, callsBefore)

    // Past test_a's max age: test_b (7.22) and the outlier test_c (9.99) are left, too far
    // apart for either to be told right → refused.
    await refresh.refresh(Date.now() + 700_000)
    row = await stored('USDT', 'CNY')
    assert.isFalse(Boolean(row.ok))
    assert.include(row.reason, 'its sources disagree by more than 2 % (test_b 7.22, test_c 9.99)')
    assert.deepEqual(JSON.parse(row.sources).stale, ['test_a'])
    // The operator is told once (the pair was usable before).
    const told = await db.from('notification_events').where('name', 'rate.stale')
    assert.lengthOf(told, 1)
    assert.include(JSON.parse(told[0].data).finding, 'USDT/CNY: its sources disagree')
    await refresh.refresh(Date.now() + 710_000)
    assert.lengthOf(await db.from('notification_events').where('name', 'rate.stale'), 1)
  })

  test('a pair the sources cannot price refuses orders with 10006 and the reason', async ({
    client,
    assert,
  }) => {
    a.prices = {}
    b.prices = {}
    c.prices = { USDT: '7.21' }
    await new RateRefresh().refresh()
    configCache.invalidate()
    const response = await createOrder(
      client,
      orderParams({ network: FAKE_NETWORK, token: 'usdt', amount: 10 })
    )
    assert.equal(response.body().status_code, 10006)
    assert.include(
      response.body().message,
      'No usable USDT/CNY rate: 1 fresh agreeing source(s), 2 needed'
    )
  })

  test('a rate the workers stopped refreshing is refused as stale', async ({ assert }) => {
    await new RateRefresh().refresh(Date.now() - 3_600_000)
    configCache.invalidate()
    await assert.rejects(
      () => rateService.convert('10', 'CNY', 'USDT'),
      /is stale: last computed \d+ s ago/
    )
  })

  test('a USD price is crossed to CNY through the fiat cross source', async ({ assert }) => {
    await settings.setMany({ 'rate.sources': 'test_usd,test_cross', 'rate.min_sources': '1' })
    await new RateRefresh().refresh()
    const row = await stored('USDT', 'CNY')
    assert.equal(row.rate, '7.2072')
    const answer = await db.from('rate_answers').where({ source: 'test_usd' }).first()
    assert.equal(answer.quote, 'USD')

    await settings.set('rate.sources', 'test_usd')
    await new RateRefresh().refresh()
    const noCross = await db.from('rate_answers').where({ source: 'test_usd' }).first()
    assert.include(noCross.error, 'no USD→CNY cross rate')
  })

  test('rate:set with a markup floats the pair on the live rate, exactly; a fixed rate still wins', async ({
    assert,
  }) => {
    await new RateRefresh().refresh()
    const marked = await runCommand(RateSet, ['USDT', 'CNY', '~1.02'])
    assert.equal(marked.exitCode, 0, marked.output)
    configCache.invalidate()
    // 7.21 × 1.02 = 7.3542 CNY per USDT: 100 CNY buys 13.5976… USDT.
    const amount = await rateService.convert('100', 'CNY', 'USDT')
    assert.equal(amount.toFixed(10), new Decimal(100).dividedBy('7.3542').toFixed(10))
    const quoted = await rateService.quote('100', 'CNY', 'USDT')
    assert.deepInclude(quoted, {
      rate: '7.3542',
      source: 'live: test_a, test_b, test_c',
      markup: '~1.02',
    })
    await runCommand(RateSet, ['USDT', 'CNY', '-0.21'])
    configCache.invalidate()
    assert.equal((await rateService.convert('70', 'CNY', 'USDT')).toFixed(), '10')

    const bad = await runCommand(RateSet, ['USDT', 'CNY', '~7'])
    assert.equal(bad.exitCode, 1)
    assert.include(bad.output, 'a typo?')

    await runCommand(RateSet, ['USDT', 'CNY', '7.25'])
    configCache.invalidate()
    assert.equal((await rateService.convert('72.5', 'CNY', 'USDT')).toFixed(), '10')
    assert.deepInclude(await rateService.quote('72.5', 'CNY', 'USDT'), {
      rate: '7.25',
      source: 'fixed',
      markup: '',
    })
    const audit = await db.from('audit_log').where('action', 'rate.set').orderBy('id')
    assert.isAtLeast(audit.length, 3)
  })

  test("a markup per API key wins over the pair's for that key's orders only; --clear restores the pair's", async ({
    client,
    assert,
  }) => {
    const otherSecret = 'secret-of-2001-rates-0123'
    await apiKeyAdmin.create({ pid: '2001', secret: otherSecret })
    await new RateRefresh().refresh()
    assert.equal((await runCommand(RateSet, ['USDT', 'CNY', '~1.02'])).exitCode, 0)
    const own = await runCommand(RateSet, ['usdt', 'cny', '+0.29', '--key=2001'])
    assert.equal(own.exitCode, 0, own.output)
    assert.include(own.output, "for API key 2001's orders")
    configCache.invalidate()

    const create = async (pid: string, secret?: string) => {
      const response = await createOrder(
        client,
        orderParams({ pid, network: FAKE_NETWORK, token: 'usdt', amount: 75 }),
        secret
      )
      assert.equal(response.status(), 200, JSON.stringify(response.body()))
      return db.from('orders').where('trade_id', response.body().data.trade_id).first()
    }
    // Key 2001: 7.21 + 0.29 = 7.5 CNY per USDT, so 75 CNY is 10 USDT.
    const ofKey = await create('2001', otherSecret)
    assert.deepInclude(ofKey, { rate: '7.5', rate_markup: '+0.29' })
    assert.isTrue(
      new Decimal(ofKey.actual_amount).gte(10) && new Decimal(ofKey.actual_amount).lt(10.01)
    )
    // Key 1000 keeps the pair's markup: 7.21 × 1.02 = 7.3542.
    assert.deepInclude(await create('1000'), { rate: '7.3542', rate_markup: '~1.02' })

    const list = await runCommand(RateList, [])
    assert.include(list.output, 'USDT|CNY|2001|+0.29')
    assert.include(list.output, 'USDT|CNY|7.21|~1.02|ok', "the pair's own markup stays as it was")

    // A fixed rate prices every key; a key's markup is never a fixed rate; an unknown pid is refused.
    const fixedPerKey = await runCommand(RateSet, ['USDT', 'CNY', '7.3', '--key=2001'])
    assert.equal(fixedPerKey.exitCode, 1)
    assert.include(fixedPerKey.output, 'A fixed rate applies to every API key')
    const unknown = await runCommand(RateSet, ['USDT', 'CNY', '~1.01', '--key=9999'])
    assert.equal(unknown.exitCode, 1)
    assert.include(unknown.output, 'No API key with pid 9999')
    assert.equal(
      Number((await db.from('rate_markups').count('* as n').first()).n),
      2,
      'the refusals wrote nothing'
    )

    const cleared = await runCommand(RateSet, ['USDT', 'CNY', '--clear', '--key=2001'])
    assert.equal(cleared.exitCode, 0, cleared.output)
    configCache.invalidate()
    assert.deepInclude(await create('2001', otherSecret), { rate: '7.3542', rate_markup: '~1.02' })
    const again = await runCommand(RateSet, ['USDT', 'CNY', '--clear', '--key=2001'])
    assert.equal(again.exitCode, 1)
    assert.include(again.output, 'has no markup for API key 2001')

    const audit = await db
      .from('audit_log')
      .whereIn('action', ['rate.set', 'rate.markup_clear'])
      .where('subject_id', 'USDT/CNY key 2001')
      .orderBy('id')
    assert.deepEqual(
      audit.map((entry) => entry.action),
      ['rate.set', 'rate.markup_clear']
    )
  })

  test('the doctor (and rate.stale) read what the workers computed, asking no source', async ({
    assert,
  }) => {
    const before = a.calls + b.calls + c.calls
    let [check] = await rateChecks(Date.now())
    assert.equal(check.status, 'problem')
    assert.include(check.finding, 'USDT: not priced yet (are the workers running?)')

    await new RateRefresh().refresh()
    ;[check] = await rateChecks(Date.now())
    assert.equal(check.status, 'ok', check.finding)
    assert.equal(check.finding, 'CNY: live rates fresh from the sources')

    a.prices = {}
    b.prices = {}
    await db.from('rate_answers').delete()
    await new RateRefresh().refresh()
    ;[check] = await rateChecks(Date.now())
    assert.equal(check.status, 'problem')
    assert.include(check.finding, '2 needed')
    assert.equal(
      a.calls + b.calls + c.calls,
      before + 4,
      'only the refreshes asked the sources (3, then the one left that prices USDT)'
    )
  })

  test('rate:sources chooses and orders the sources (audited); rate:list shows each pair and answer', async ({
    assert,
  }) => {
    const auditedBefore = (
      await db.from('audit_log').where('action', 'setting.set').where('subject_id', 'rate.sources')
    ).length
    const listed = await runCommand(RateSources, [])
    assert.equal(listed.exitCode, 0)
    assert.include(listed.output, 'test_a')

    const chosen = await runCommand(RateSources, ['--order=test_c,test_a', '--enable=test_b'])
    assert.equal(chosen.exitCode, 0, chosen.output)
    assert.deepEqual(await settings.get('rate.sources'), ['test_c', 'test_a', 'test_b'])
    await runCommand(RateSources, ['--disable=test_a'])
    assert.deepEqual(await settings.get('rate.sources'), ['test_c', 'test_b'])
    const audited = await db
      .from('audit_log')
      .where('action', 'setting.set')
      .where('subject_id', 'rate.sources')
    assert.lengthOf(audited, auditedBefore + 2)
    const unknown = await runCommand(RateSources, ['--enable=nosuch'])
    assert.equal(unknown.exitCode, 1)
    assert.include(unknown.output, 'Unknown rate source(s): nosuch')
    assert.deepEqual(await settings.get('rate.sources'), ['test_c', 'test_b'])

    c.prices = { USDT: '9.0' }
    await settings.set('rate.sources', 'test_a,test_b,test_c')
    await new RateRefresh().refresh()
    await runCommand(RateSet, ['USDT', 'CNY', '+0.3'])
    const { exitCode, output } = await runCommand(RateList, [])
    assert.equal(exitCode, 0)
    for (const text of [
      'USDT',
      'CNY',
      '7.21',
      '+0.3',
      'ok',
      'test_c 9 (',
      'Last answer of each source',
    ])
      assert.include(output, text)
  })

  test('rate:refresh asks the sources now and prints each pair; a refused pair exits 1', async ({
    assert,
  }) => {
    const fine = await runCommand(RateRefreshCommand, [])
    assert.equal(fine.exitCode, 0, fine.output)
    assert.include(fine.output, '7.21')
    assert.equal((await stored('USDT', 'CNY')).rate, '7.21')

    a.prices = {}
    b.prices = {}
    await db.from('rate_answers').delete()
    const refused = await runCommand(RateRefreshCommand, [])
    assert.equal(refused.exitCode, 1)
    assert.include(refused.output, 'refused: 1 fresh agreeing source(s), 2 needed')

    await settings.set('rate.sources', '')
    const none = await runCommand(RateRefreshCommand, [])
    assert.equal(none.exitCode, 0)
    assert.include(none.output, 'No live source is used')
  })
})
