import walletAdmin from '#services/operators/wallet_admin'
import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import paymentService from '#services/payment_service'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { newOrder, newPlaceholder, prepareLifecycle, switchTo } from '#tests/helpers/orders'
import { fakeFamily, fakeTransfer } from '#tests/helpers/fake_chain'
import chainRegistry from '#chains/chain_registry'
import { FakeProvider } from '#tests/helpers/fake_provider'
import { runCommand } from '#tests/helpers/ace_command'
import OrdersMarkPaid from '#commands/orders_mark_paid'

function submit(client: any, tradeId: string, reference: unknown) {
  return client
    .post(`/pay/submit-tx-hash/${tradeId}`)
    .json({ block_transaction_id: reference })
    .accept('json')
}

test.group('Submit transaction hash', (group) => {
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

  test('a verified transfer pays the order', async ({ client, assert }) => {
    const order = await newOrder(client)
    fakeTransfer('0xabc123def456', '13.80')
    const response = await submit(client, order.tradeId, '0xabc123def456')
    response.assertStatus(200)
    assert.deepEqual(response.body().data, {
      trade_id: order.tradeId,
      block_transaction_id: '0xabc123def456',
      status: 2,
    })
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    assert.equal(await countRows('callbacks'), 1)
  })

  const refusals: [string, (amount: string) => void, RegExp][] = [
    ['not found', () => {}, /not found/],
    [
      'failed on chain',
      (amount) => fakeTransfer('0xabc123def456', amount, { success: false }),
      /failed on chain/,
    ],
    [
      'to another address',
      (amount) => fakeTransfer('0xabc123def456', amount, { to: 'fake:someone-else' }),
      /pays fake:someone-else/,
    ],
    [
      'another token',
      (amount) => fakeTransfer('0xabc123def456', amount, { contract: 'fake:other-token' }),
      /does not transfer USDT/,
    ],
    [
      'a wrong amount',
      () => fakeTransfer('0xabc123def456', '13.79'),
      /transfers 13.79 USDT, the order expects 13.8/,
    ],
    [
      'not yet confirmed',
      (amount) => fakeTransfer('0xabc123def456', amount, { confirmations: 0 }),
      /not yet confirmed \(0 of 1/,
    ],
    [
      'made before the order',
      (amount) => fakeTransfer('0xabc123def456', amount, { timestamp: 1000 }),
      /before the order/,
    ],
    [
      'made after expiry',
      (amount) => fakeTransfer('0xabc123def456', amount, { timestamp: Date.now() + 3_600_000 }),
      /after the order expired/,
    ],
  ]
  for (const [name, arrange, message] of refusals) {
    test(`refuses a transfer ${name}`, async ({ client, assert }) => {
      const order = await newOrder(client)
      arrange(order.actualAmount)
      const response = await submit(client, order.tradeId, '0xabc123def456')
      response.assertStatus(400)
      assert.equal(response.body().status_code, 400)
      assert.match(response.body().message, message)
      assert.equal((await Order.findOrFail(order.id)).status, 1)
    })
  }

  test('a reference that already paid another order is 10007', async ({ client, assert }) => {
    const first = await newOrder(client)
    const second = await newOrder(client, { amount: 100 })
    await paymentService.markPaid(first.id, { reference: '0xabc123def456', source: 'scanner' })
    fakeTransfer('0xabc123def456', second.actualAmount)
    const response = await submit(client, second.tradeId, '0xabc123def456')
    assert.equal(response.body().status_code, 10007)
  })

  test('rules 1–4 are checked before any chain lookup', async ({ client, assert }) => {
    const placeholder = await newPlaceholder(client)
    assert.equal(
      (await submit(client, placeholder.tradeId, '0xabc123def456')).body().status_code,
      10013
    )

    const paid = await newOrder(client)
    await paymentService.markPaid(paid.id, { reference: 'tx-paid', source: 'scanner' })
    assert.equal((await submit(client, paid.tradeId, '0xabc123def456')).body().status_code, 10013)

    const expired = await newOrder(client)
    await db.from('orders').where('id', expired.id).update({ status: 3 })
    assert.equal(
      (await submit(client, expired.tradeId, '0xabc123def456')).body().status_code,
      10013
    )

    const overdue = await newOrder(client)
    await db
      .from('orders')
      .where('id', overdue.id)
      .update({ expiration_time: Date.now() - 1 })
    const late = await submit(client, overdue.tradeId, '0xabc123def456')
    assert.equal(late.body().status_code, 10013)
    assert.match(late.body().message, /expired/)

    const providerOrder = await newPlaceholder(client)
    await switchTo(client, providerOrder.tradeId, 'provider')
    const viaProvider = await submit(client, providerOrder.tradeId, '0xabc123def456')
    viaProvider.assertStatus(400)
    assert.match(viaProvider.body().message, /Provider orders/)

    assert.deepEqual(fakeFamily.lookups, [])
  })

  test('unknown order 10008; missing reference 400', async ({ client, assert }) => {
    assert.equal(
      (await submit(client, 'NoSuchTradeId', '0xabc123def456')).body().status_code,
      10008
    )
    const order = await newOrder(client)
    assert.equal((await submit(client, order.tradeId, undefined)).body().status_code, 400)
    assert.equal((await submit(client, order.tradeId, { x: 1 })).body().status_code, 10009)
  })

  test('a chain family without verification says so', async ({ client, assert }) => {
    chainRegistry.register({
      name: 'unverifiable',
      addressFormat: 'any',
      normalizeAddress: (address: string) => address,
      normalizeContract: (contract: string) => contract,
    })
    await chainAdmin.set('silentnet', { family: 'unverifiable' })
    await chainAdmin.setToken('silentnet', 'USDT', { contract: 'silent:usdt', decimals: 6 })
    await walletAdmin.add('silentnet', 'silent:wallet')
    const order = await newOrder(client, { network: 'silentnet' })
    const response = await submit(client, order.tradeId, '0xabc123def456')
    response.assertStatus(400)
    assert.match(response.body().message, /verification is not available for silentnet/)
  })
})

test.group('orders:mark-paid', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('repairs an expired order with a verified transfer made after its expiry', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    await db.from('orders').where('id', order.id).update({ status: 3 })
    fakeTransfer('0xrepair000001', order.actualAmount, { timestamp: Date.now() + 3_600_000 })
    const result = await runCommand(OrdersMarkPaid, [order.tradeId, '0xrepair000001'])
    assert.equal(result.exitCode, 0, result.output)
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    assert.equal(await countRows('callbacks'), 1)
  })

  test('refuses paid orders, placeholders and failed verification', async ({ client, assert }) => {
    const paid = await newOrder(client)
    await paymentService.markPaid(paid.id, { reference: 'tx', source: 'scanner' })
    assert.equal((await runCommand(OrdersMarkPaid, [paid.tradeId, '0xrepair000001'])).exitCode, 1)
    const placeholder = await newPlaceholder(client)
    assert.equal(
      (await runCommand(OrdersMarkPaid, [placeholder.tradeId, '0xrepair000001'])).exitCode,
      1
    )
    const waiting = await newOrder(client)
    const missing = await runCommand(OrdersMarkPaid, [waiting.tradeId, '0xnothing00001'])
    assert.equal(missing.exitCode, 1)
    assert.match(missing.output, /not found/)
    assert.equal((await Order.findOrFail(waiting.id)).status, 1)
  })
})
