import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import UnmatchedPayment from '#models/unmatched_payment'
import chainScanner from '#services/chain_scanner'
import orderExpiry from '#services/order_expiry'
import { RpcPool, RpcUnavailableError } from '#chains/rpc_pool'
import { TransferLookupError } from '#chains/chain_family'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { newOrder, newPlaceholder, prepareLifecycle, switchTo } from '#tests/helpers/orders'
import { FAKE_NETWORK, FAKE_USDT, FAKE_WALLET, fakeFamily } from '#tests/helpers/fake_chain'
import type { ObservedTransfer } from '#chains/chain_family'

function transfer(
  reference: string,
  amount: string,
  overrides: Partial<ObservedTransfer> = {}
): ObservedTransfer {
  return {
    reference,
    position: 'log:0',
    to: FAKE_WALLET,
    contract: FAKE_USDT,
    amount,
    timestamp: Date.now(),
    confirmations: 10,
    success: true,
    ...overrides,
  }
}

/** Ends the order's life 50 ms after its creation and runs the expiry. */
async function expireSoon(order: Order) {
  await db
    .from('orders')
    .where('id', order.id)
    .update({ expiration_time: order.createdAt + 50 })
  await new Promise((resolve) => setTimeout(resolve, 60))
  await orderExpiry.expireDue()
  if ((await Order.findOrFail(order.id)).status !== 3) throw new Error('order did not expire')
}

async function scanFake() {
  const [report] = await chainScanner.scan({ network: FAKE_NETWORK })
  return report
}

test.group('Chain scanning: matching', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('a transfer of the exact amount to the order address pays it', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    fakeFamily.pending = [transfer('tx-1', '13.80')]
    const report = await scanFake()
    assert.equal(report.paid, 1)
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, 'tx-1')
    assert.equal(await countRows('callbacks'), 1)
  })

  test('the same transfer seen twice pays once', async ({ client, assert }) => {
    await newOrder(client)
    fakeFamily.pending = [transfer('tx-1', '13.8'), transfer('tx-1', '13.8')]
    await scanFake()
    fakeFamily.pending = [transfer('tx-1', '13.8')]
    await scanFake()
    assert.equal(await countRows('orders', { status: 2 }), 1)
    assert.equal(await countRows('callbacks'), 1)
    assert.equal(await countRows('unmatched_payments'), 0)
  })

  test('one transfer never pays two orders', async ({ client, assert }) => {
    const first = await newOrder(client)
    fakeFamily.pending = [transfer('tx-1', first.actualAmount)]
    await scanFake()
    const second = await newOrder(client) // takes the freed amount again
    assert.equal(second.actualAmount, first.actualAmount)
    fakeFamily.pending = [transfer('tx-1', first.actualAmount)]
    await scanFake()
    assert.equal((await Order.findOrFail(second.id)).status, 1)
  })

  test('wrong amount, unknown address or no order: recorded as unmatched, once', async ({
    client,
    assert,
  }) => {
    await newOrder(client)
    fakeFamily.pending = [
      transfer('tx-wrong', '13.79'),
      transfer('tx-other', '13.80', { to: 'fake:someone' }),
      transfer('tx-wrong', '13.79'),
    ]
    const report = await scanFake()
    assert.equal(report.unmatched, 3)
    const rows = await UnmatchedPayment.query().orderBy('reference')
    assert.deepEqual(
      rows.map((row) => [row.reference, row.toAddress, row.token, row.amount]),
      [
        ['tx-other', 'fake:someone', 'USDT', '13.8'],
        ['tx-wrong', FAKE_WALLET, 'USDT', '13.79'],
      ]
    )
    assert.match(rows[1].reason, /no order waits for 13.79 USDT/)
    assert.equal(await countRows('orders', { status: 2 }), 0)
  })

  test('a transfer made before the order or after its expiry does not pay it', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    fakeFamily.pending = [
      transfer('tx-early', '13.80', { timestamp: order.createdAt - 3_600_000 }),
      transfer('tx-late', '13.80', { timestamp: order.expirationTime + 1000 }),
    ]
    await scanFake()
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    assert.equal(await countRows('unmatched_payments'), 2)
  })

  test('late detection: expired order, transfer made in time', async ({ client, assert }) => {
    const order = await newOrder(client)
    await expireSoon(order)
    fakeFamily.pending = [transfer('tx-1', '13.80', { timestamp: order.createdAt + 10 })]
    const report = await scanFake()
    assert.equal(report.paid, 1)
    assert.equal((await Order.findOrFail(order.id)).status, 2)
  })

  test('a paid child pays the parent; failed transfers and unknown tokens are ignored', async ({
    client,
    assert,
  }) => {
    const parent = await newPlaceholder(client)
    await switchTo(client, parent.tradeId, FAKE_NETWORK)
    fakeFamily.pending = [
      transfer('tx-failed', '13.80', { success: false }),
      transfer('tx-token', '13.80', { contract: 'fake:other' }),
    ]
    await scanFake()
    assert.equal((await Order.findOrFail(parent.id)).status, 1)
    assert.equal(await countRows('unmatched_payments'), 0)
  })
})

test.group('Chain scanning: cursor and scheduling', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('the cursor is persisted and handed back; the first scan gets a start time', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    await scanFake()
    await scanFake()
    assert.isNull(fakeFamily.scans[0].cursor)
    assert.equal(fakeFamily.scans[0].startTime, order.createdAt)
    assert.deepEqual(fakeFamily.scans[1].cursor, { scans: 1 })
    const row = await db.from('chain_cursors').where('network', FAKE_NETWORK).first()
    assert.equal(row.cursor, JSON.stringify({ scans: 2 }))
    assert.deepEqual(fakeFamily.scans[1].addresses, [FAKE_WALLET])
  })

  test('a failing scan keeps the cursor and records the error', async ({ assert }) => {
    await scanFake()
    fakeFamily.failScan = 'node exploded'
    const report = await scanFake()
    assert.isFalse(report.scanned)
    assert.match(report.detail, /node exploded/)
    const row = await db.from('chain_cursors').where('network', FAKE_NETWORK).first()
    assert.equal(row.cursor, JSON.stringify({ scans: 1 }))
    assert.equal(row.last_error, 'node exploded')
    assert.isNull(row.locked_by)
  })

  test('runDue respects the scan interval', async ({ assert }) => {
    await chainScanner.runDue()
    await chainScanner.runDue()
    assert.lengthOf(fakeFamily.scans, 1)
    await db.from('chain_cursors').update({ last_scan_at: 0 })
    await chainScanner.runDue()
    assert.lengthOf(fakeFamily.scans, 2)
  })

  test('a chain leased by another process is skipped', async ({ assert }) => {
    await scanFake()
    await db.from('chain_cursors').update({ locked_by: 'other', locked_until: Date.now() + 60_000 })
    const report = await scanFake()
    assert.match(report.detail, /another process/)
    assert.lengthOf(fakeFamily.scans, 1)
  })

  test('a chain without wallets is not scanned', async ({ assert }) => {
    await db.from('wallets').delete()
    const report = await scanFake()
    assert.match(report.detail, /no wallet/)
    assert.lengthOf(fakeFamily.scans, 0)
  })
})

test.group('RPC pool', (group) => {
  group.each.setup(() => RpcPool.reset())

  test('fails over to the next endpoint and cools the failing one down', async ({ assert }) => {
    const pool = new RpcPool(['http://a', 'http://b'], { cooldownMs: 60_000, timeoutMs: 1000 })
    const asked: string[] = []
    const result = await pool.call(async (url) => {
      asked.push(url)
      if (url === 'http://a') throw new Error('down')
      return 'ok'
    })
    assert.equal(result, 'ok')
    await pool.call(async (url) => {
      asked.push(url)
      return 'ok'
    })
    assert.deepEqual(asked, ['http://a', 'http://b', 'http://b'])
  })

  test('all endpoints down is RpcUnavailableError; a lookup answer passes through', async ({
    assert,
  }) => {
    const pool = new RpcPool(['http://a', 'http://b'], { cooldownMs: 1, timeoutMs: 1000 })
    await assert.rejects(
      () => pool.call(async () => Promise.reject(new Error('down'))),
      RpcUnavailableError
    )
    let calls = 0
    await assert.rejects(
      () =>
        pool.call(async () => {
          calls++
          throw new TransferLookupError('no such transaction')
        }),
      /no such transaction/
    )
    assert.equal(calls, 1)
    await assert.rejects(
      () => new RpcPool([], { cooldownMs: 1, timeoutMs: 1 }).call(async () => 1),
      /no RPC endpoint/
    )
  })
})

test.group('Payment URI endpoint', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('answers the family URI; placeholders 10013; unknown 10008', async ({ client, assert }) => {
    const order = await newOrder(client)
    const response = await client.get(`/pay/payment-uri/${order.tradeId}`)
    assert.equal(response.body().data.uri, `fake:${FAKE_WALLET}?amount=13.8`)
    const placeholder = await newPlaceholder(client)
    assert.equal(
      (await client.get(`/pay/payment-uri/${placeholder.tradeId}`)).body().status_code,
      10013
    )
    assert.equal((await client.get('/pay/payment-uri/nope')).body().status_code, 10008)
  })
})
