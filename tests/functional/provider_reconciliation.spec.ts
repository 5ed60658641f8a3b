import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import providers, { type PaymentProvider } from '#payments/payment_provider'
import ProviderOrder from '#models/provider_order'
import providerReconciliation, {
  RECONCILE_AFTER_EXPIRY_MS,
  RECONCILE_BATCH,
  RECONCILE_FIRST_DELAY_MS,
} from '#payments/provider_reconciliation'
import { FakeProvider } from '#tests/helpers/fake_provider'
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

  test('pays an order whose notification was dropped, asking with backoff until it is paid', async ({
    client,
    assert,
  }) => {
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

  test('a provider without a status call is left alone', async ({ client, assert }) => {
    const order = await providerOrder(client)
    const withoutStatus: PaymentProvider = {
      name: provider.name,
      ensureUsable: () => provider.ensureUsable(),
      createPayment: (request) => provider.createPayment(request),
      readNotification: () => provider.readNotification(),
    }
    providers.register(withoutStatus)
    assert.deepEqual(
      await providerReconciliation.runOnce(Date.now() + 10 * RECONCILE_FIRST_DELAY_MS),
      { asked: 0, paid: 0 }
    )
    assert.equal((await Order.findOrFail(order.id)).status, 1)
  })

  test('an order that expired recently is still asked about and paid late; one expired long ago is not', async ({
    client,
    assert,
  }) => {
    const recent = await providerOrder(client)
    const old = await providerOrder(client)
    const now = Date.now() + RECONCILE_FIRST_DELAY_MS
    await db
      .from('orders')
      .where('id', recent.id)
      .update({ status: 3, expiration_time: now - 3_600_000 })
    await db
      .from('orders')
      .where('id', old.id)
      .update({ status: 3, expiration_time: now - RECONCILE_AFTER_EXPIRY_MS - 1000 })
    provider.pay(recent.tradeId)
    provider.pay(old.tradeId)
    assert.deepEqual(await providerReconciliation.runOnce(now), { asked: 1, paid: 1 })
    assert.equal((await Order.findOrFail(recent.id)).status, 2)
    assert.equal((await Order.findOrFail(old.id)).status, 3)
    assert.deepEqual(provider.asked, [recent.tradeId])
  })
})

test.group('Provider reconciliation | the hosted provider (checkDeposit)', (group) => {
  const hosted = new FakeProvider()
  group.setup(async () => {
    await hosted.start()
    return () => hosted.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await hosted.configure()
  })

  async function hostedOrder(client: Parameters<typeof newPlaceholder>[0]) {
    const created = await newPlaceholder(client, { amount: 100 })
    ;(await switchTo(client, created.tradeId, 'provider', 'usdt')).assertStatus(200)
    const order = await Order.findOrFail(created.id)
    const record = await ProviderOrder.findByOrFail('unique_id', order.tradeId)
    return Object.assign(order, { ref: record.providerOrderId })
  }

  test('pays an order whose notification was dropped: the provider says paid when asked', async ({
    client,
    assert,
  }) => {
    const order = await hostedOrder(client)
    const now = Date.now() + RECONCILE_FIRST_DELAY_MS

    // Not paid yet at the provider: pending, nothing changes.
    assert.deepEqual(await providerReconciliation.runOnce(now), { asked: 1, paid: 0 })
    assert.equal((await Order.findOrFail(order.id)).status, 1)

    // The payer pays on the provider's page; its notification never reaches us.
    hosted.pay(order.tradeId)
    assert.deepEqual(await providerReconciliation.runOnce(now + MINUTE), { asked: 1, paid: 1 })
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, order.ref)
    assert.equal(
      await countRows('callbacks', { order_id: order.id }),
      1,
      'the merchant is told once'
    )
    assert.equal((await ProviderOrder.findByOrFail('unique_id', order.tradeId)).status, 'paid')

    // Each question was signed with the shop token (the fake refuses others).
    assert.deepEqual(hosted.statusQuestions(), [order.tradeId, order.tradeId])
    assert.equal(hosted.badSigns, 0)
    // Paid: not asked again.
    assert.equal((await providerReconciliation.runOnce(now + 10 * 3_600_000)).asked, 0)
  })

  test('a paid answer with another amount pays nothing and is asked again later', async ({
    client,
    assert,
  }) => {
    const order = await hostedOrder(client)
    const now = Date.now() + RECONCILE_FIRST_DELAY_MS
    hosted.pay(order.tradeId, '0.01000000')
    assert.deepEqual(await providerReconciliation.runOnce(now), { asked: 1, paid: 0 })
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    assert.equal(await countRows('callbacks', { order_id: order.id }), 0)
    const row = await db.from('provider_orders').where('unique_id', order.tradeId).first()
    assert.equal(Number(row.reconcile_attempts), 1)
    assert.isAbove(Number(row.reconcile_next_at), now)
  })

  test('error answers, HTTP errors and a provider that no longer knows the order pay nothing', async ({
    client,
    assert,
  }) => {
    const order = await hostedOrder(client)
    let now = Date.now() + RECONCILE_FIRST_DELAY_MS
    hosted.pay(order.tradeId)

    hosted.mode = 'http500'
    assert.deepEqual(await providerReconciliation.runOnce(now), { asked: 1, paid: 0 })
    hosted.mode = 'ok'
    hosted.payments.delete(order.tradeId)
    now += 2 * MINUTE
    assert.deepEqual(await providerReconciliation.runOnce(now), { asked: 1, paid: 0 })
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    const row = await db.from('provider_orders').where('unique_id', order.tradeId).first()
    assert.equal(Number(row.reconcile_attempts), 2, 'each failure backs off')
  })

  test('a notification that arrives first leaves nothing to reconcile', async ({
    client,
    assert,
  }) => {
    const order = await hostedOrder(client)
    await db
      .from('provider_orders')
      .where('unique_id', order.tradeId)
      .update({ notified_at: Date.now() })
    hosted.pay(order.tradeId)
    assert.deepEqual(await providerReconciliation.runOnce(Date.now() + RECONCILE_FIRST_DELAY_MS), {
      asked: 0,
      paid: 0,
    })
  })
})
