import walletAdmin from '#services/operators/wallet_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import Callback from '#models/callback'
import ProviderOrder from '#models/provider_order'
import orderExpiry from '#services/order_expiry'
import paymentService from '#services/payment_service'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { newOrder, newPlaceholder, prepareLifecycle, switchTo } from '#tests/helpers/orders'
import { FakeProvider } from '#tests/helpers/fake_provider'
import { merchantForGroup } from '#tests/helpers/merchant_group'
import { TRON_WALLET } from '#tests/helpers/merchant'
import { runAce, startServerProcess } from '#tests/helpers/processes'
import { SETTINGS_REFRESH_MS } from '#settings/settings_service'

async function overdue(...ids: number[]) {
  await db
    .from('orders')
    .whereIn('id', ids)
    .update({ expiration_time: Date.now() - 1000 })
}

test.group('Expiry', (group) => {
  const provider = new FakeProvider()
  group.setup(async () => {
    await provider.start()
    return () => provider.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await provider.configure()
  })

  test('waiting and placeholder orders past their time expire; their amounts stay reserved for the grace', async ({
    client,
    assert,
  }) => {
    const waiting = await newOrder(client)
    const placeholder = await newPlaceholder(client)
    const fresh = await newOrder(client)
    await overdue(waiting.id, placeholder.id)
    assert.equal(await orderExpiry.expireDue(), 2)
    assert.equal((await Order.findOrFail(waiting.id)).status, 3)
    assert.equal((await Order.findOrFail(placeholder.id)).status, 3)
    assert.equal((await Order.findOrFail(fresh.id)).status, 1)
    assert.equal(await countRows('amount_locks'), 2)
    assert.equal(await orderExpiry.expireDue(), 0)
    assert.equal(await countRows('amount_locks'), 2)
  })

  test('paid orders never expire', async ({ client, assert }) => {
    const order = await newOrder(client)
    await paymentService.markPaid(order.id, { reference: 'tx', source: 'scanner' })
    await overdue(order.id)
    assert.equal(await orderExpiry.expireDue(), 0)
    assert.equal((await Order.findOrFail(order.id)).status, 2)
  })

  test('a parent with a live child expires with it', async ({ client, assert }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    const parent = await newOrder(client)
    const childTradeId = (await switchTo(client, parent.tradeId, 'tron')).body().data.trade_id
    const child = await Order.findByOrFail('trade_id', childTradeId)
    await overdue(parent.id, child.id)
    assert.equal(await orderExpiry.expireDue(), 2)
    assert.equal((await Order.findOrFail(child.id)).status, 3)
    assert.equal(await countRows('amount_locks'), 2) // reserved for the late-payment grace
  })

  test('an expired provider order marks its provider payment expired', async ({
    client,
    assert,
  }) => {
    const order = await newPlaceholder(client)
    await switchTo(client, order.tradeId, 'provider')
    await overdue(order.id)
    await orderExpiry.expireDue()
    assert.equal((await ProviderOrder.findByOrFail('unique_id', order.tradeId)).status, 'expired')
  })

  test('a payment seen after expiry but made in time still pays (late detection)', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    await overdue(order.id)
    await orderExpiry.expireDue()
    await paymentService.markPaid(order.id, {
      reference: 'late-tx',
      source: 'scanner',
      paidAt: order.createdAt + 1000,
    })
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.paidAt, order.createdAt + 1000)
    assert.equal(await countRows('callbacks'), 1)
  })

  test('orders:expire and orders:close commands', async ({ client, assert }) => {
    const order = await newOrder(client)
    await overdue(order.id)
    const result = await runAce(['orders:expire'])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /Expired 1 order/)
    assert.equal((await Order.findOrFail(order.id)).status, 3)
  }).timeout(30_000)

  test('two expiry processes at once expire each order exactly once', async ({
    client,
    assert,
  }) => {
    const ids: number[] = []
    for (let index = 0; index < 60; index++) ids.push((await newPlaceholder(client)).id)
    await overdue(...ids)
    const [first, second] = await Promise.all([
      runAce(['orders:expire']),
      runAce(['orders:expire']),
    ])
    const counted = [first, second].map((result) =>
      Number(/Expired (\d+)/.exec(result.stdout)?.[1] ?? Number.NaN)
    )
    assert.equal(
      counted[0] + counted[1],
      60,
      `${first.stdout} ${first.stderr} ${second.stdout} ${second.stderr}`
    )
    assert.equal(await countRows('orders', { status: 3 }), 60)
  }).timeout(60_000)
})

test.group('Background jobs across processes', (group) => {
  const merchant = merchantForGroup(group, { replies: [{ status: 200, body: 'ok', delayMs: 30 }] })

  test('two callbacks:deliver processes at once send each callback once', async ({
    client,
    assert,
  }) => {
    for (let index = 0; index < 40; index++) {
      const order = await newOrder(client, { notify_url: merchant.notifyUrl })
      await paymentService.markPaid(order.id, { reference: `tx-${index}`, source: 'scanner' })
    }
    const results = await Promise.all([
      runAce(['callbacks:deliver']),
      runAce(['callbacks:deliver']),
    ])
    for (const result of results) assert.equal(result.code, 0, result.stderr)
    const tradeIds = merchant.requests.map((request) => JSON.parse(request.body).trade_id)
    assert.lengthOf(tradeIds, 40)
    assert.equal(new Set(tradeIds).size, 40)
    assert.equal(await countRows('callbacks', { status: 'delivered' }), 40)
    assert.equal(await countRows('callback_attempts'), 40)
  }).timeout(60_000)

  test('two scheduler processes deliver and expire, each exactly once', async ({
    client,
    assert,
    cleanup,
  }) => {
    for (let index = 0; index < 20; index++) {
      const order = await newOrder(client, { notify_url: merchant.notifyUrl })
      await paymentService.markPaid(order.id, { reference: `tx-${index}`, source: 'scanner' })
    }
    const stale: number[] = []
    for (let index = 0; index < 20; index++) stale.push((await newPlaceholder(client)).id)
    await overdue(...stale)
    await new Promise((resolve) => setTimeout(resolve, SETTINGS_REFRESH_MS))

    // Started together, like a web and a worker node; each stopped even if the other fails.
    const starts = [
      startServerProcess({ RUN_JOBS: 'true' }),
      startServerProcess({ RUN_JOBS: 'true' }),
    ]
    cleanup(async () => {
      for (const start of starts) await start.then((server) => server.stop()).catch(() => {})
    })
    await Promise.all(starts)

    // A deadline only: both processes start, migrate in turn and run their first jobs, slowly on a busy machine.
    const deadline = Date.now() + 60_000
    while (Date.now() < deadline) {
      const delivered = await countRows('callbacks', { status: 'delivered' })
      const expired = await countRows('orders', { status: 3 })
      if (delivered === 20 && expired === 20) break
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    assert.equal(await countRows('callbacks', { status: 'delivered' }), 20)
    assert.equal(await countRows('orders', { status: 3 }), 20)
    assert.lengthOf(merchant.requests, 20)
    assert.equal(
      new Set(merchant.requests.map((request) => JSON.parse(request.body).trade_id)).size,
      20
    )
    assert.equal(await countRows('callback_attempts'), 20)
  }).timeout(120_000)

  test('RUN_JOBS=false serves HTTP without running jobs', async ({ client, assert, cleanup }) => {
    const order = await newOrder(client, { notify_url: merchant.notifyUrl })
    await paymentService.markPaid(order.id, { reference: 'tx', source: 'scanner' })
    const server = await startServerProcess({ RUN_JOBS: 'false' })
    cleanup(() => server.stop())
    await new Promise((resolve) => setTimeout(resolve, 2500))
    assert.lengthOf(merchant.requests, 0)
    assert.equal((await Callback.findByOrFail('order_id', order.id)).status, 'pending')
  }).timeout(60_000)
})
