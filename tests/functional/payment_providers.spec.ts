import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import ProviderOrder from '#models/provider_order'
import providers, { NotificationRejectedError } from '#payments/payment_provider'
import providerCheckout from '#payments/provider_checkout'
import providerReconciliation from '#payments/provider_reconciliation'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { newOrder, newPlaceholder, prepareLifecycle, switchTo } from '#tests/helpers/orders'
import { FakeProvider, providerNotification } from '#tests/helpers/fake_provider'
import { runAce, startServerProcess } from '#tests/helpers/processes'
import { orderParams, signed } from '#tests/helpers/merchant'
import { DEMO_PAY, DemoPay, demoPaySign } from '#tests/fixtures/plugins/demo_provider/demo_pay'

/** Demo Pay's notification that `tradeId` was paid. */
function demoNotice(tradeId: string, amount: string, overrides: Record<string, string> = {}) {
  const fields: Record<string, string> = {
    unique_id: tradeId,
    order_id: `dp-${tradeId}`,
    amount,
    coin: 'USDT',
    ...overrides,
  }
  return { ...fields, sig: overrides.sig ?? demoPaySign(fields) }
}

/** The bundled provider's notification, posted to its own route. */
async function bundledNotice(tradeId: string, providerOrderId: string, amount: string) {
  const body = new URLSearchParams(
    providerNotification(tradeId, providerOrderId, {
      'data[pay_user_id]': 'payer-1',
      'data[amount]': amount,
    })
  )
  const response = await fetch(`${process.env.APP_URL}/payments/provider/v1/notify`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: body.toString(),
  })
  return { status: response.status, text: await response.text() }
}

test.group('Payment providers side by side (the bundled one and Demo Pay)', (group) => {
  const bundled = new FakeProvider()
  const demo = new DemoPay()
  group.setup(async () => {
    await bundled.start()
    providers.register(demo)
    return async () => {
      providers.unregister(DEMO_PAY)
      await bundled.stop()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await bundled.configure()
    demo.paidByTradeId.clear()
  })

  test('the cashier offers both; each order opens at the provider chosen, under its name', async ({
    client,
    assert,
  }) => {
    const page = await client.get(`/cashier/${(await newPlaceholder(client)).tradeId}`)
    assert.include(page.text(), 'value="provider|USDT"')
    assert.include(page.text(), 'value="demopay|USDT"')

    const atBundled = await newPlaceholder(client)
    ;(await switchTo(client, atBundled.tradeId, 'provider', 'usdt')).assertStatus(200)
    const atDemo = await newPlaceholder(client)
    const switched = await switchTo(client, atDemo.tradeId, 'demopay', 'usdt')
    switched.assertStatus(200)
    assert.equal(
      switched.body().data.payment_url,
      `https://pay.demo.invalid/checkout/dp-${atDemo.tradeId}`
    )

    const a = await Order.findOrFail(atBundled.id)
    const b = await Order.findOrFail(atDemo.id)
    assert.deepInclude(a.serialize(), {
      network: 'provider',
      receiveAddress: 'PROVIDER',
      payProvider: 'provider',
    })
    assert.deepInclude(b.serialize(), {
      network: 'demopay',
      receiveAddress: 'DEMOPAY',
      payProvider: 'demopay',
    })
    assert.equal((await ProviderOrder.findByOrFail('unique_id', a.tradeId)).provider, 'provider')
    assert.equal((await ProviderOrder.findByOrFail('unique_id', b.tradeId)).provider, 'demopay')

    // Demo Pay's checks belong to Demo Pay: USDC is refused with 10019 by it.
    const usdc = await switchTo(client, (await newPlaceholder(client)).tradeId, 'demopay', 'usdc')
    assert.equal(usdc.body().status_code, 10019)
    assert.include(usdc.body().message, 'Demo Pay takes USDT only')
  })

  test("one provider's word never pays a payment opened at the other; each pays its own", async ({
    client,
    assert,
  }) => {
    const atBundled = await newPlaceholder(client)
    await switchTo(client, atBundled.tradeId, 'provider', 'usdt')
    const atDemo = await newPlaceholder(client)
    await switchTo(client, atDemo.tradeId, 'demopay', 'usdt')
    const a = await Order.findOrFail(atBundled.id)
    const b = await Order.findOrFail(atDemo.id)

    // Demo Pay, well signed, about the bundled provider's payment (its very order id, amount
    // and coin): refused, nothing paid.
    const bundledRef = (await ProviderOrder.findByOrFail('unique_id', a.tradeId)).providerOrderId
    await assert.rejects(
      () =>
        providerCheckout.handleNotification(
          DEMO_PAY,
          demoNotice(a.tradeId, a.actualAmount, { order_id: bundledRef }),
          '{}'
        ),
      /was opened at provider, not demopay/
    )
    // A notice from a provider that is not installed.
    await assert.rejects(
      () =>
        providerCheckout.handleNotification('nopay', demoNotice(b.tradeId, b.actualAmount), '{}'),
      NotificationRejectedError
    )
    // A forged Demo Pay signature.
    await assert.rejects(
      () =>
        providerCheckout.handleNotification(
          DEMO_PAY,
          demoNotice(b.tradeId, b.actualAmount, { sig: 'f'.repeat(64) }),
          '{}'
        ),
      /bad demo pay signature/
    )
    assert.equal((await Order.findOrFail(a.id)).status, 1)
    assert.equal((await Order.findOrFail(b.id)).status, 1)
    assert.equal(await countRows('callbacks'), 0)

    await providerCheckout.handleNotification(DEMO_PAY, demoNotice(b.tradeId, b.actualAmount), '{}')
    const paidB = await Order.findOrFail(b.id)
    assert.equal(paidB.status, 2)
    assert.equal(paidB.blockTransactionId, `dp-${b.tradeId}`)

    const ref = (await ProviderOrder.findByOrFail('unique_id', a.tradeId)).providerOrderId
    const answer = await bundledNotice(a.tradeId, ref, a.actualAmount)
    assert.deepEqual(answer, { status: 200, text: 'success' })
    assert.equal((await Order.findOrFail(a.id)).status, 2)
    assert.equal(await countRows('callbacks'), 2)
  })

  test('a child at the second provider; the reconciliation asks each provider about its own payments only', async ({
    client,
    assert,
  }) => {
    const onChain = await newOrder(client)
    const child = await switchTo(client, onChain.tradeId, 'demopay', 'usdt')
    child.assertStatus(200)
    const childTradeId = child.body().data.trade_id
    assert.notEqual(childTradeId, onChain.tradeId)
    const atBundled = await newPlaceholder(client)
    await switchTo(client, atBundled.tradeId, 'provider', 'usdt')
    // Both links are old enough to be asked about; neither notification came.
    await db.from('provider_orders').update({ created_at: Date.now() - 120_000 })

    const childOrder = await Order.findByOrFail('trade_id', childTradeId)
    demo.paidByTradeId.set(childTradeId, {
      uniqueId: childTradeId,
      providerOrderId: `dp-${childTradeId}`,
      amount: childOrder.actualAmount,
      coin: 'USDT',
    })
    const result = await providerReconciliation.runOnce()
    assert.deepEqual(result, { asked: 2, paid: 1 })
    assert.equal((await Order.findOrFail(childOrder.id)).status, 2)
    // The bundled provider was asked about its own payment, never about Demo Pay's.
    assert.deepEqual(bundled.statusQuestions(), [atBundled.tradeId])
    assert.equal((await Order.findOrFail(atBundled.id)).status, 1)
  })
})

test.group('Payment providers: a provider plugin from PLUGIN_MODULES', (group) => {
  group.each.setup(() => resetDatabase())
  group.each.timeout(90_000)

  test('brings its provider, notify route and cashier texts beside the bundled one', async ({
    assert,
    cleanup,
  }) => {
    const module = './tests/fixtures/plugins/demo_provider/plugin.ts'
    await prepareLifecycle()
    const server = await startServerProcess({ PLUGIN_MODULES: module })
    cleanup(() => server.stop())

    const created = await fetch(`${server.url}/payments/native/v1/order/create-transaction`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept': 'application/json' },
      body: JSON.stringify(signed(orderParams({ token: undefined, network: undefined }))),
    })
    const tradeId = ((await created.json()) as any).data.trade_id as string
    const english = await (await fetch(`${server.url}/cashier/${tradeId}?lang=en`)).text()
    assert.include(english, 'value="demopay|USDT"')
    assert.include(english, 'Demo Pay')
    assert.include(english, 'Pay on the Demo Pay page')
    const chinese = await (await fetch(`${server.url}/cashier/${tradeId}?lang=zh-CN`)).text()
    assert.include(chinese, '演示支付')

    const switched = await fetch(`${server.url}/pay/switch-network`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept': 'application/json' },
      body: JSON.stringify({ trade_id: tradeId, network: 'demopay', token: 'usdt' }),
    })
    assert.equal(switched.status, 200)
    const order = await Order.findByOrFail('trade_id', tradeId)

    const notify = (fields: Record<string, string>) =>
      fetch(`${server.url}/payments/demo_provider/v1/notify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(fields),
      })
    const forged = await notify(demoNotice(tradeId, order.actualAmount, { sig: '0'.repeat(64) }))
    assert.equal(forged.status, 400)
    assert.include(await forged.text(), 'bad demo pay signature')
    const good = await notify(demoNotice(tradeId, order.actualAmount))
    assert.equal(good.status, 200)
    assert.equal((await Order.findOrFail(order.id)).status, 2)

    // Without the module line, its route and name are unknown.
    const listed = await runAce(['plugins:list'], { PLUGIN_MODULES: module })
    assert.include(listed.stdout, 'demo_provider')
  })
})
