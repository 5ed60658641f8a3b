import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import dashboardStats, {
  DashboardStats,
  type DashboardFigures,
} from '#services/admin/dashboard_stats'
import { OperatorError } from '#support/cli/operator_error'
import { resetDatabase } from '#tests/helpers/database'
import { FAKE_NETWORK, installFakeChain } from '#tests/helpers/fake_chain'
import { resetOrderRows, seedOrderRow as seedOrder, seededTradeId } from '#tests/helpers/order_rows'

/** 2025-06-15 12:00 UTC: the tests' "now". */
const NOW = Date.UTC(2025, 5, 15, 12, 0)
const HOUR = 3_600_000
const DAY = 24 * HOUR

function read(options: { now?: number; timeZone?: string } = {}): Promise<DashboardFigures> {
  return new DashboardStats().read({ now: NOW, ...options })
}

test.group('Dashboard figures: orders, volume, conversion', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    resetOrderRows()
  })

  test('an installation without orders: zeros everywhere, no conversion, an empty chart, flagged empty', async ({
    assert,
  }) => {
    const figures = await read()
    assert.isTrue(figures.empty)
    for (const period of Object.values(figures.periods)) {
      assert.deepEqual(period.orders, { waiting: 0, paid: 0, expired: 0, selecting: 0, total: 0 })
      assert.isNull(period.conversion)
      assert.deepEqual(period.volumeByToken, [])
      assert.deepEqual(period.volumeByNetwork, [])
      assert.deepEqual(period.callbacks, { attempts: 0, acknowledged: 0, successRate: null })
    }
    assert.lengthOf(figures.series, 14)
    assert.isTrue(figures.series.every((day) => day.created === 0 && day.paid === 0))
    assert.deepEqual(figures.recentOrders, [])
    assert.deepEqual(figures.outbox, { pending: 0, retrying: 0, failed: 0 })
    assert.deepEqual(figures.unmatched, { waiting: 0, newestAt: null })
  })

  test('today, 7 and 30 days: counts by status, conversion and volumes per token, network and currency, exact', async ({
    assert,
  }) => {
    // Today (UTC): 3 paid, 1 waiting, 1 placeholder.
    const paidToday = await seedOrder({
      status: 2,
      createdAt: NOW - HOUR,
      actualAmount: '10.5',
      amount: '76.13',
    })
    await seedOrder({
      status: 2,
      createdAt: NOW - 2 * HOUR,
      network: 'ethereum',
      actualAmount: '0.29',
      amount: '2.1',
    })
    await seedOrder({
      status: 2,
      createdAt: NOW - 3 * HOUR,
      token: 'TRX',
      actualAmount: '100.12345678',
      amount: '200.2469',
    })
    await seedOrder({ status: 1, createdAt: NOW - 10 * 60_000 })
    await seedOrder({ status: 4, createdAt: NOW - 5 * 60_000 })
    // A child paid today: its parent is the merchant's order, counted once.
    await seedOrder({ status: 2, createdAt: NOW - HOUR, parentId: paidToday, actualAmount: '10.5' })
    // 3 days ago: 1.1 + 2.2 is 3.3000000000000003 in floating point.
    await seedOrder({ status: 2, createdAt: NOW - 3 * DAY, actualAmount: '1.1', amount: '7.98' })
    await seedOrder({
      status: 2,
      createdAt: NOW - 3 * DAY,
      actualAmount: '2.2',
      amount: '15.95',
      currency: 'USD',
    })
    await seedOrder({ status: 3, createdAt: NOW - 3 * DAY })
    // 10 days ago.
    await seedOrder({
      status: 2,
      createdAt: NOW - 10 * DAY,
      actualAmount: '1000000.123',
      amount: '7250000.89',
    })
    await seedOrder({ status: 3, createdAt: NOW - 10 * DAY })
    // Outside 30 days: not counted anywhere.
    await seedOrder({ status: 2, createdAt: NOW - 31 * DAY, actualAmount: '999' })

    const { periods } = await read()

    assert.deepEqual(periods.today.orders, {
      waiting: 1,
      paid: 3,
      expired: 0,
      selecting: 1,
      total: 5,
    })
    assert.equal(periods.today.conversion, 3 / 5)
    assert.deepEqual(periods.today.volumeByToken, [
      { token: 'TRX', amount: '100.12345678' },
      { token: 'USDT', amount: '10.79' },
    ])
    assert.deepEqual(periods.today.volumeByNetwork, [
      { network: 'ethereum', tokens: [{ token: 'USDT', amount: '0.29' }] },
      {
        network: 'tron',
        tokens: [
          { token: 'TRX', amount: '100.12345678' },
          { token: 'USDT', amount: '10.5' },
        ],
      },
    ])
    assert.deepEqual(periods.today.fiatByCurrency, [{ currency: 'CNY', amount: '278.4769' }])

    assert.deepEqual(periods.week.orders, {
      waiting: 1,
      paid: 5,
      expired: 1,
      selecting: 1,
      total: 8,
    })
    assert.equal(periods.week.conversion, 5 / 8)
    assert.deepInclude(periods.week.volumeByToken, { token: 'USDT', amount: '14.09' })
    assert.deepEqual(periods.week.fiatByCurrency, [
      { currency: 'CNY', amount: '286.4569' },
      { currency: 'USD', amount: '15.95' },
    ])

    assert.deepEqual(periods.month.orders, {
      waiting: 1,
      paid: 6,
      expired: 2,
      selecting: 1,
      total: 10,
    })
    assert.equal(periods.month.conversion, 6 / 10)
    assert.deepEqual(periods.month.volumeByToken, [
      { token: 'TRX', amount: '100.12345678' },
      { token: 'USDT', amount: '1000014.213' },
    ])
    assert.deepInclude(periods.month.fiatByCurrency, { currency: 'CNY', amount: '7250287.3469' })
    assert.equal(periods.month.since, Date.UTC(2025, 4, 17))
    assert.equal(periods.week.since, Date.UTC(2025, 5, 9))
    assert.equal(periods.today.since, Date.UTC(2025, 5, 15))
  })

  test('sums stay exact at the 15 significant digits an amount may have', async ({ assert }) => {
    // Ten times 0.1 (0.9999999999999999 in floating point), amounts with 15
    // significant digits at every magnitude, and one with 8 decimals.
    for (let index = 0; index < 10; index++)
      await seedOrder({ status: 2, createdAt: NOW - HOUR, token: 'A', actualAmount: '0.1' })
    const big = [
      '12345678.1234567',
      '123456789.123456',
      '99999999999999.9',
      '1234567.12345678',
      '0.00000001',
    ]
    for (const amount of big)
      await seedOrder({ status: 2, createdAt: NOW - HOUR, token: 'B', actualAmount: amount })
    await seedOrder({
      status: 2,
      createdAt: NOW - HOUR,
      token: 'C',
      actualAmount: '0.29',
      amount: '9999999999999.99',
    })
    await seedOrder({
      status: 2,
      createdAt: NOW - HOUR,
      token: 'C',
      actualAmount: '0.58',
      amount: '0.01',
    })

    const { periods } = await read()
    assert.deepEqual(periods.today.volumeByToken, [
      { token: 'A', amount: '1' },
      { token: 'B', amount: '100000137037034.27036949' },
      { token: 'C', amount: '0.87' },
    ])
    assert.deepInclude(periods.today.fiatByCurrency, { currency: 'CNY', amount: '10000000001500' })
  })

  test('the daily series: 14 days, oldest first, created and paid per day', async ({ assert }) => {
    await seedOrder({ status: 2, createdAt: NOW - HOUR })
    await seedOrder({ status: 1, createdAt: NOW - HOUR })
    await seedOrder({ status: 2, createdAt: NOW - 3 * DAY })
    await seedOrder({ status: 3, createdAt: NOW - 3 * DAY })
    await seedOrder({ status: 3, createdAt: NOW - 3 * DAY })
    await seedOrder({ status: 2, createdAt: NOW - 13 * DAY })
    // Day 15 back is beyond the chart but within the month.
    await seedOrder({ status: 2, createdAt: NOW - 15 * DAY })

    const { series, periods } = await read()
    assert.lengthOf(series, 14)
    assert.equal(series[0].date, '2025-06-02')
    assert.equal(series[13].date, '2025-06-15')
    assert.equal(series[13].start, Date.UTC(2025, 5, 15))
    assert.deepInclude(series[13], { created: 2, paid: 1 })
    assert.deepInclude(series[10], { date: '2025-06-12', created: 3, paid: 1 })
    assert.deepInclude(series[0], { created: 1, paid: 1 })
    assert.equal(
      series.reduce((sum, day) => sum + day.created, 0),
      6
    )
    assert.equal(periods.month.orders.total, 7)
  })

  test('days follow the time zone asked for: an order of 19:00 UTC is tomorrow in Kolkata', async ({
    assert,
  }) => {
    // 2025-06-14 19:00 UTC = 2025-06-15 00:30 in Asia/Kolkata (UTC+05:30).
    await seedOrder({ status: 2, createdAt: Date.UTC(2025, 5, 14, 19, 0) })
    const utc = await read()
    assert.equal(utc.periods.today.orders.total, 0)
    assert.equal(utc.series[12].created, 1)
    const kolkata = await read({ timeZone: 'Asia/Kolkata' })
    assert.equal(kolkata.periods.today.orders.total, 1)
    assert.equal(kolkata.periods.today.since, Date.UTC(2025, 5, 14, 18, 30))
    assert.deepInclude(kolkata.series[13], { date: '2025-06-15', created: 1 })
  })

  test('across a clock change (Paris, 30 March 2025: a 23 h day) each order falls on its local day', async ({
    assert,
  }) => {
    const now = Date.UTC(2025, 3, 10, 12, 0)
    // 2025-03-29 23:30 UTC = 30 March 00:30 in Paris (UTC+1, before the change);
    // 2025-03-30 22:30 UTC = 31 March 00:30 in Paris (UTC+2, after it).
    await seedOrder({ status: 2, createdAt: Date.UTC(2025, 2, 29, 23, 30) })
    await seedOrder({ status: 1, createdAt: Date.UTC(2025, 2, 30, 22, 30) })
    await seedOrder({ status: 2, createdAt: Date.UTC(2025, 2, 30, 22, 30) })
    const paris = await read({ now, timeZone: 'Europe/Paris' })
    const day = (date: string) => paris.series.find((point) => point.date === date)!
    assert.deepInclude(day('2025-03-30'), {
      created: 1,
      paid: 1,
      start: Date.UTC(2025, 2, 29, 23, 0),
    })
    assert.deepInclude(day('2025-03-31'), {
      created: 2,
      paid: 1,
      start: Date.UTC(2025, 2, 30, 22, 0),
    })
    assert.deepInclude(day('2025-03-29'), { created: 0 })
    const utc = await read({ now })
    const utcDay = (date: string) => utc.series.find((point) => point.date === date)!
    assert.deepInclude(utcDay('2025-03-29'), { created: 1 })
    assert.deepInclude(utcDay('2025-03-30'), { created: 2 })
  })

  test('an order dated after now (a clock set back) counts as today, not beyond', async ({
    assert,
  }) => {
    await seedOrder({ status: 2, createdAt: NOW + 2 * DAY })
    const figures = await read()
    assert.equal(figures.periods.today.orders.total, 1)
    assert.equal(figures.series[13].created, 1)
  })

  test('an unknown time zone is refused with a clear message', async ({ assert }) => {
    await assert.rejects(() => read({ timeZone: 'Mars/Olympus' }), OperatorError)
    await assert.rejects(
      () => read({ timeZone: 'Mars/Olympus' }),
      /unknown time zone "Mars\/Olympus"/
    )
  })

  test('recent orders: the ten newest merchant orders, newest first, children left out', async ({
    assert,
  }) => {
    const ids: number[] = []
    for (let index = 0; index < 12; index++)
      ids.push(await seedOrder({ status: 1, createdAt: NOW - (12 - index) * 60_000 }))
    await seedOrder({ status: 2, createdAt: NOW, parentId: ids[11] })
    const { recentOrders, empty } = await read()
    assert.isFalse(empty)
    assert.lengthOf(recentOrders, 10)
    assert.deepEqual(
      recentOrders.map((order) => order.tradeId),
      Array.from({ length: 10 }, (_, index) => seededTradeId(12 - index))
    )
    assert.deepInclude(recentOrders[0], {
      orderId: 'O12',
      status: 1,
      amount: '100',
      actualAmount: '13.8',
      token: 'USDT',
      network: 'tron',
      currency: 'CNY',
      paidAt: null,
      callbackStatus: 'none',
    })
  })
})

test.group('Dashboard figures: callbacks and unmatched payments', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    resetOrderRows()
  })

  async function seedCallback(status: string, attempts: number) {
    const orderId = await seedOrder({ status: 2, createdAt: NOW - DAY })
    const [row] = await db
      .table('callbacks')
      .insert({
        order_id: orderId,
        format: 'native',
        status,
        attempts,
        next_attempt_at: NOW,
        created_at: NOW - DAY,
        updated_at: NOW - DAY,
      })
      .returning('id')
    return Number(typeof row === 'object' ? row.id : row)
  }

  async function seedAttempt(callbackId: number, startedAt: number, acknowledged: boolean) {
    await db.table('callback_attempts').insert({
      callback_id: callbackId,
      attempt: 1,
      started_at: startedAt,
      method: 'POST',
      url: 'https://merchant.example/notify',
      http_status: acknowledged ? 200 : 500,
      duration_ms: 30,
      acknowledged,
    })
  }

  test('success rate per period, and the outbox: pending, retrying, failed', async ({ assert }) => {
    const delivered = await seedCallback('delivered', 3)
    await seedCallback('pending', 0)
    const retrying = await seedCallback('pending', 2)
    await seedCallback('failed', 10)
    // Today 3 attempts (2 acknowledged), 5 days ago 1 (refused), 20 days ago 2 (both), 40 days ago 1 (outside).
    await seedAttempt(delivered, NOW - HOUR, true)
    await seedAttempt(delivered, NOW - 2 * HOUR, true)
    await seedAttempt(retrying, NOW - 3 * HOUR, false)
    await seedAttempt(retrying, NOW - 5 * DAY, false)
    await seedAttempt(delivered, NOW - 20 * DAY, true)
    await seedAttempt(delivered, NOW - 20 * DAY, true)
    await seedAttempt(delivered, NOW - 40 * DAY, false)

    const figures = await read()
    assert.deepEqual(figures.periods.today.callbacks, {
      attempts: 3,
      acknowledged: 2,
      successRate: 2 / 3,
    })
    assert.deepEqual(figures.periods.week.callbacks, {
      attempts: 4,
      acknowledged: 2,
      successRate: 0.5,
    })
    assert.deepEqual(figures.periods.month.callbacks, {
      attempts: 6,
      acknowledged: 4,
      successRate: 4 / 6,
    })
    assert.deepEqual(figures.outbox, { pending: 2, retrying: 1, failed: 1 })
  })

  test("unmatched payments waiting, with the newest one's time", async ({ assert }) => {
    for (const [index, detectedAt] of [NOW - DAY, NOW - HOUR].entries()) {
      await db.table('unmatched_payments').insert({
        network: 'tron',
        reference: `ref-${index}`,
        to_address: 'TWallet',
        token: 'USDT',
        amount: '1.5',
        transfer_time: detectedAt,
        reason: 'no order waits for this amount',
        detected_at: detectedAt,
      })
    }
    assert.deepEqual((await read()).unmatched, { waiting: 2, newestAt: NOW - HOUR })
    // Settled ones wait no more: dismissed with a note, or assigned to their order.
    await db
      .from('unmatched_payments')
      .where('reference', 'ref-1')
      .update({ dismissed_at: NOW, dismissed_by: 'a', dismiss_note: 'refunded' })
    assert.deepEqual((await read()).unmatched, { waiting: 1, newestAt: NOW - DAY })
  })
})

test.group('Dashboard figures: scanner status per chain', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
  })

  async function watch(network: string) {
    await db.table('wallets').insert({
      network,
      address: `${network}-wallet`,
      enabled: true,
      note: '',
      created_at: NOW,
      updated_at: NOW,
    })
  }

  async function cursor(network: string, values: Record<string, unknown>) {
    await db.table('chain_cursors').insert({
      network,
      cursor: '{}',
      caught_up: true,
      last_scan_at: NOW - 5_000,
      last_error: '',
      updated_at: NOW,
      ...values,
    })
  }

  test('cursor, lag behind the head beyond the confirmations, last scan, last error, and each state', async ({
    assert,
  }) => {
    await installFakeChain()
    for (const network of ['ethereum', 'bsc', 'polygon', 'tron', 'solana']) await watch(network)
    await db.from('chains').where('network', 'ton').update({ enabled: false })
    await db.from('chains').where('network', 'plasma').update({ enabled: true })
    await db.from('chains').where('network', FAKE_NETWORK).update({ family: 'nosuch' })
    // ethereum: 12 confirmations, 12 s blocks; 11 blocks behind is the confirmations' wait.
    await db
      .from('chains')
      .where('network', 'ethereum')
      .update({ confirmations: 12, block_time_ms: 12_000, enabled: true })
    await cursor('ethereum', {
      head_height: '20000000',
      scanned_height: '19999989',
      heights_at: NOW - 5_000,
    })
    // bsc: 15 confirmations, 3 s blocks, 100 behind: 86 blocks (258 s) more than it waits for.
    await db
      .from('chains')
      .where('network', 'bsc')
      .update({ confirmations: 15, block_time_ms: 3_000, enabled: true })
    await cursor('bsc', {
      head_height: '50000100',
      scanned_height: '50000000',
      heights_at: NOW - 5_000,
    })
    await db.from('chains').where('network', 'polygon').update({ enabled: true })
    await cursor('polygon', {
      last_error: 'every RPC endpoint failed; last: HTTP 503',
      caught_up: true,
    })
    await db
      .from('chains')
      .where('network', 'tron')
      .update({ enabled: true, scan_interval_seconds: 5 })
    await cursor('tron', { last_scan_at: NOW - 10 * 60_000, locked_until: NOW + 60_000 })
    await db.from('chains').where('network', 'solana').update({ enabled: true })

    const scanners = new Map((await read()).scanners.map((status) => [status.network, status]))

    assert.deepInclude(scanners.get('ethereum')!, {
      state: 'ok',
      headHeight: '20000000',
      scannedHeight: '19999989',
      lagBlocks: '11',
      lagMs: 132_000,
      lagLarge: false,
      lastScanAt: NOW - 5_000,
      lastError: '',
      wallets: 1,
      scanning: false,
    })
    assert.isAbove(scanners.get('ethereum')!.tokens, 0)
    assert.deepInclude(scanners.get('bsc')!, {
      state: 'behind',
      lagBlocks: '100',
      lagMs: 300_000,
      lagLarge: true,
    })
    assert.deepInclude(scanners.get('polygon')!, {
      state: 'error',
      lastError: 'every RPC endpoint failed; last: HTTP 503',
      lagBlocks: null,
    })
    assert.deepInclude(scanners.get('tron')!, { state: 'stale', scanning: true })
    assert.deepInclude(scanners.get('solana')!, { state: 'never', lastScanAt: null })
    assert.deepInclude(scanners.get('ton')!, { state: 'disabled', enabled: false })
    assert.deepInclude(scanners.get('plasma')!, { state: 'idle', wallets: 0 })
    assert.deepInclude(scanners.get(FAKE_NETWORK)!, { state: 'unavailable', scannable: false })
  })

  test('a scan that is behind (not caught up) is large lag whatever the heights say', async ({
    assert,
  }) => {
    await watch('ethereum')
    await db.from('chains').where('network', 'ethereum').update({ enabled: true })
    await cursor('ethereum', { caught_up: false, head_height: '100', scanned_height: '99' })
    const status = (await read()).scanners.find((row) => row.network === 'ethereum')!
    assert.deepInclude(status, { state: 'behind', lagLarge: true, caughtUp: false, lagBlocks: '1' })
  })

  test('the service resolves from the container', async ({ assert }) => {
    assert.instanceOf(dashboardStats, DashboardStats)
  })
})
