import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import UnmatchedPayment from '#models/unmatched_payment'
import chainScanner from '#services/chain_scanner'
import orderExpiry from '#services/order_expiry'
import settings from '#settings/settings_service'
import { rpcFor } from '#chains/chain_rpc'
import Chain from '#models/chain'
import { RpcPool } from '#chains/rpc_pool'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import {
  FAKE_NETWORK,
  FAKE_USDT,
  FAKE_WALLET,
  fakeFamily,
  fakeTransfer,
} from '#tests/helpers/fake_chain'
import type { ObservedTransfer } from '#chains/chain_family'

function transfer(reference: string, amount: string, overrides: Partial<ObservedTransfer> = {}) {
  const made = fakeTransfer(reference, amount, overrides)
  fakeFamily.transactions.delete(reference)
  return made
}

async function scanFake() {
  const [report] = await chainScanner.scan({ network: FAKE_NETWORK })
  return report
}

async function cursorRow() {
  return db.from('chain_cursors').where('network', FAKE_NETWORK).first()
}

test.group('Chain scanning: an interrupted run keeps its progress', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    RpcPool.reset()
  })

  test('its transfers are paid, its cursor saved, the reason kept as the last error', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    await scanFake()
    fakeFamily.pending = [transfer('tx-1', order.actualAmount)]
    fakeFamily.interrupt = 'every RPC endpoint failed; last: HTTP 429 Too Many Requests'
    const report = await scanFake()
    assert.isTrue(report.scanned)
    assert.equal(report.paid, 1)
    assert.isFalse(report.caughtUp)
    assert.match(report.interrupted!, /HTTP 429/)
    assert.match(
      report.detail,
      /^interrupted \(.*HTTP 429.*\), progress kept: 1 transfer\(s\), 1 paid/
    )
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    const row = await cursorRow()
    assert.equal(row.cursor, JSON.stringify({ scans: 2 }))
    assert.match(row.last_error, /^interrupted: every RPC endpoint failed/)
    assert.isFalse(Boolean(row.caught_up))
    // The next run resumes from there, and a complete run clears the error.
    await scanFake()
    assert.deepEqual(fakeFamily.scans.at(-1)!.cursor, { scans: 2 })
    assert.equal((await cursorRow()).last_error, '')
  })

  test('a thrown error still saves nothing', async ({ client, assert }) => {
    const order = await newOrder(client)
    await scanFake()
    fakeFamily.failScan = 'node exploded'
    fakeFamily.pending = [transfer('tx-1', order.actualAmount)]
    const report = await scanFake()
    assert.isFalse(report.scanned)
    assert.equal((await cursorRow()).cursor, JSON.stringify({ scans: 1 }))
    assert.equal((await Order.findOrFail(order.id)).status, 1)
  })

  test('runDue runs an interrupted chain again at its interval, a chain merely behind at once', async ({
    assert,
  }) => {
    fakeFamily.interrupt = 'HTTP 429'
    await chainScanner.runDue()
    await chainScanner.runDue()
    assert.lengthOf(fakeFamily.scans, 1)
    await db.from('chain_cursors').update({ last_scan_at: Date.now() - 6_000 })
    await chainScanner.runDue()
    assert.lengthOf(fakeFamily.scans, 2)
    // Behind without an error (a bounded run): at once.
    await db
      .from('chain_cursors')
      .update({ caught_up: false, last_error: '', last_scan_at: Date.now() })
    await chainScanner.runDue()
    assert.lengthOf(fakeFamily.scans, 3)
  })

  test('a chain whose every endpoint spent its daily budget is not scanned, its cursor untouched', async ({
    assert,
  }) => {
    await scanFake()
    await db
      .from('chains')
      .where('network', FAKE_NETWORK)
      .update({ rpc_urls: JSON.stringify(['https://rpc.example/a']), rpc_requests_per_day: 1 })
    const rpc = await rpcFor(await Chain.findByOrFail('network', FAKE_NETWORK))
    await rpc.permit('https://rpc.example/a')
    const report = await scanFake()
    assert.isFalse(report.scanned)
    assert.match(report.detail, /daily request budget of every RPC endpoint is spent/)
    assert.lengthOf(fakeFamily.scans, 1)
    const row = await cursorRow()
    assert.equal(row.cursor, JSON.stringify({ scans: 1 }))
    assert.isNull(row.locked_by)
  })
})

test.group('Chain scanning: dust and unreadable transactions', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    RpcPool.reset()
  })

  test('the core tells the family what is dust: below half the smallest watched amount', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client) // 13.80 USDT
    await newOrder(client, { amount: 725 }) // 100 USDT
    fakeFamily.pending = [
      transfer('tx-poison', '0.000001'),
      transfer('tx-dust', '6.89'),
      transfer('tx-short', '6.90'), // half of the smallest: an underpayment the operator must see
      transfer('tx-pay', order.actualAmount),
    ]
    const report = await scanFake()
    assert.equal(report.dust, 2)
    assert.equal(report.paid, 1)
    assert.equal(report.unmatched, 1)
    assert.match(report.detail, /2 dust dropped/)
    const context = fakeFamily.scans[0]
    assert.isTrue(context.isDust!(FAKE_USDT, '6.89'))
    assert.isFalse(context.isDust!(FAKE_USDT, '6.9'))
    assert.isFalse(context.isDust!('fake:other-token', '0.000001'))
    assert.deepEqual(
      (await UnmatchedPayment.all()).map((row) => row.reference),
      ['tx-short']
    )
  })

  test('the bar follows a setting: 100 % is the smallest amount itself', async ({
    client,
    assert,
  }) => {
    await newOrder(client)
    await settings.set('chains.dust_percent', '100')
    await scanFake()
    assert.isTrue(fakeFamily.scans[0].isDust!(FAKE_USDT, '13.79'))
    assert.isFalse(fakeFamily.scans[0].isDust!(FAKE_USDT, '13.8'))
  })

  test('an order expired within the late window is still watched: its late payment is not dust', async ({
    client,
    assert,
  }) => {
    const small = await newOrder(client, { amount: 7.25 }) // 1 USDT
    await db
      .from('orders')
      .where('id', small.id)
      .update({ expiration_time: small.createdAt + 50 })
    await new Promise((resolve) => setTimeout(resolve, 60))
    await orderExpiry.expireDue()
    await newOrder(client, { amount: 725 }) // 100 USDT, waiting
    fakeFamily.pending = [
      transfer('tx-late', small.actualAmount, { timestamp: small.createdAt + 10 }),
    ]
    const report = await scanFake()
    assert.equal(report.dust, 0)
    assert.equal(report.paid, 1)
    assert.equal((await Order.findOrFail(small.id)).status, 2)
  })

  test('with no watched order only amounts below one step are dust; the rest is kept as unmatched', async ({
    assert,
  }) => {
    fakeFamily.pending = [
      transfer('tx-zero', '0'),
      transfer('tx-tiny', '0.009'),
      transfer('tx-real', '0.01'),
    ]
    const report = await scanFake()
    assert.equal(report.dust, 2)
    assert.equal(report.unmatched, 1)
    assert.equal(await countRows('unmatched_payments'), 1)
  })

  test('an unreadable transaction is kept as unmatched with its reason, once', async ({
    assert,
  }) => {
    const unreadable = {
      reference: 'tx-odd',
      to: FAKE_WALLET,
      contract: FAKE_USDT,
      timestamp: 1_700_000_000_000,
      reason: 'unknown instruction layout',
    }
    fakeFamily.unreadable = [unreadable, { ...unreadable, contract: null, reference: 'tx-odd-2' }]
    const report = await scanFake()
    assert.equal(report.unreadable, 2)
    assert.match(report.detail, /2 unreadable \(kept as unmatched\)/)
    fakeFamily.unreadable = [unreadable]
    await scanFake()
    const rows = await UnmatchedPayment.query().orderBy('reference')
    assert.deepEqual(
      rows.map((row) => [row.reference, row.toAddress, row.token, row.amount, row.transferTime]),
      [
        ['tx-odd', FAKE_WALLET, 'USDT', '', 1_700_000_000_000],
        ['tx-odd-2', FAKE_WALLET, '?', '', 1_700_000_000_000],
      ]
    )
    assert.equal(rows[0].reason, 'unreadable transaction: unknown instruction layout')
  })
})
