import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import providers, { type PaymentProvider } from '#payments/payment_provider'
import providerReconciliation, { RECONCILE_BATCH, RECONCILE_FIRST_DELAY_MS } from '#services/provider_reconciliation'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { newPlaceholder, prepareLifecycle, switchTo } from '#tests/helpers/orders'
import { ReconcilingProvider } from '#tests/helpers/reconciling_provider'

const MINUTE = 60_000

test.group('Provider reconciliation', (group) => {
  let hosted: PaymentProvider
  let provider: ReconcilingProvider
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    hosted = providers.get('provider')
    provider = new ReconcilingProvider()
    providers.register(provider)
    return () => providers.register(hosted)
  })

  async function providerOrder(client: Parameters<typeof newPlaceholder>[0]) {
    const order = await newPlaceholder(client)
    ;(await switchTo(client, order.tradeId, 'provider', 'usdt')).assertStatus(200)
    return Order.findOrFail(order.id)
  }

  test('pays an order whose notification was dropped, asking with backoff until it is paid', async ({ client, assert }) => {
    const order = await providerOrder(client)
    const start = Date.now()

    // Not before the first delay: the notification usually comes first.
    assert.deepEqual(await providerReconciliation.runOnce(start), { asked: 0, paid: 0 })

    let now = start + RECONCILE_FIRST_DELAY_MS
    assert.deepEqual(await providerReconciliation.runOnce(now), { asked: 1, paid: 0 })
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    // Backing off: not asked again one second later, asked after a minute, then two more.
    assert.equal((await providerReconciliation.runOnce(now + 1000)).asked, 0)
    now += MINUTE
    assert.equal((await providerReconciliation.runOnce(now)).asked, 1)
    assert.equal((await providerReconciliation.runOnce(now + MINUTE)).asked, 0)

    provider.pay(order.tradeId)
    now += 2 * MINUTE
    assert.deepEqual(await providerReconciliation.runOnce(now), { asked: 1, paid: 1 })
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, 'R-1')
    assert.equal(await countRows('callbacks', { order_id: order.id }), 1, 'the merchant is told')

    // Paid: never asked again.
    assert.equal((await providerReconciliation.runOnce(now + 10 * 3_600_000)).asked, 0)
    assert.deepEqual(provider.asked, [order.tradeId, order.tradeId, order.tradeId])
  })

  test('a status the core refuses (wrong amount) pays nothing; an unreachable provider is asked again later', async ({
    client,
    assert,
  }) => {
    const order = await providerOrder(client)
    const now = Date.now() + RECONCILE_FIRST_DELAY_MS
    provider.pay(order.tradeId, '0.01')
    assert.deepEqual(await providerReconciliation.runOnce(now), { asked: 1, paid: 0 })
    assert.equal((await Order.findOrFail(order.id)).status, 1)

    provider.failing = true
    assert.deepEqual(await providerReconciliation.runOnce(now + MINUTE), { asked: 1, paid: 0 })
    const row = await db.from('provider_orders').where('unique_id', order.tradeId).first()
    assert.equal(Number(row.reconcile_attempts), 2)
    assert.equal(Number(row.reconcile_next_at), now + MINUTE + 2 * MINUTE)
  })

  test('bounded: at most a batch per run', async ({ client, assert }) => {
    for (let index = 0; index < RECONCILE_BATCH + 2; index++) await providerOrder(client)
    const now = Date.now() + RECONCILE_FIRST_DELAY_MS
    assert.equal((await providerReconciliation.runOnce(now)).asked, RECONCILE_BATCH)
    assert.equal((await providerReconciliation.runOnce(now)).asked, 2)
  })

  test('a provider that cannot be asked (the hosted one: no status call) is left alone', async ({ client, assert }) => {
    const order = await providerOrder(client)
    providers.register(hosted)
    assert.isUndefined(hosted.retrieveStatus)
    assert.deepEqual(await providerReconciliation.runOnce(Date.now() + 10 * RECONCILE_FIRST_DELAY_MS), { asked: 0, paid: 0 })
    assert.equal((await Order.findOrFail(order.id)).status, 1)
  })
})
