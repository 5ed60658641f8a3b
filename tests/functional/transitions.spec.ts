import walletAdmin from '#services/operators/wallet_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import ProviderOrder from '#models/provider_order'
import orderExpiry from '#services/order_expiry'
import orderService from '#services/order_service'
import paymentService from '#services/payment_service'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { newOrder, newPlaceholder, prepareLifecycle, switchTo } from '#tests/helpers/orders'
import { FAKE_NETWORK, fakeTransfer } from '#tests/helpers/fake_chain'
import { FakeProvider, SHOP_ID, notificationSign } from '#tests/helpers/fake_provider'
import { TRON_WALLET } from '#tests/helpers/merchant'
import {
  compatParams,
  compatSigned,
  submitGet,
  tradeIdFromLocation,
} from '#tests/helpers/compat_merchant'
import { runCommand } from '#tests/helpers/ace_command'
import OrdersMarkPaid from '#commands/orders_mark_paid'

/** One test per row of the spec's transition table. */
test.group('Order state transitions (spec table)', (group) => {
  const provider = new FakeProvider()
  group.setup(async () => {
    await provider.start()
    return () => provider.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await provider.configure()
    await walletAdmin.add('tron', TRON_WALLET)
  })

  async function notifyPaid(order: Order) {
    const record = await ProviderOrder.findByOrFail('unique_id', order.tradeId)
    const fields: Record<string, string> = {
      'id': SHOP_ID,
      'status': 'success',
      'code': '10000',
      'data[order_id]': record.providerOrderId,
      'data[unique_id]': order.tradeId,
      'data[amount]': record.amount,
      'data[coin]': record.coin,
      'data[status]': '1',
      'data[type]': 'deposit',
    }
    const response = await fetch(`${process.env.APP_URL}/payments/provider/v1/notify`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...fields, sign: notificationSign(fields) }).toString(),
    })
    return response.text()
  }

  test('(none) → 1: create with token and network; wallet, amount, lock', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    assert.equal(order.status, 1)
    assert.notEqual(order.receiveAddress, '')
    assert.equal(await countRows('amount_locks', { order_id: order.id }), 1)
  })

  test('(none) → 4: native without token and network; compat with nothing resolved', async ({
    client,
    assert,
  }) => {
    const native = await newPlaceholder(client)
    assert.equal(native.status, 4)
    assert.equal(native.actualAmount, '0')
    const response = await submitGet(client, compatSigned(compatParams()))
    const compat = await Order.findByOrFail(
      'trade_id',
      tradeIdFromLocation(response.header('location'))
    )
    assert.equal(compat.status, 4)
    assert.equal(await countRows('amount_locks'), 0)
  })

  test('4 → 1: first on-chain selection, in place, lock now, not selected', async ({
    client,
    assert,
  }) => {
    const order = await newPlaceholder(client)
    const data = (await switchTo(client, order.tradeId, FAKE_NETWORK)).body().data
    assert.equal(data.trade_id, order.tradeId)
    assert.equal(data.status, 1)
    assert.isFalse(data.is_selected)
    assert.equal(await countRows('amount_locks', { order_id: order.id }), 1)
    assert.equal(await countRows('orders'), 1)
  })

  test('4 → 1: first provider selection converts in place', async ({ client, assert }) => {
    const order = await newPlaceholder(client)
    const data = (await switchTo(client, order.tradeId, 'provider')).body().data
    assert.deepInclude(data, {
      trade_id: order.tradeId,
      status: 1,
      network: 'provider',
      receive_address: 'PROVIDER',
      is_selected: false,
    })
    assert.notEqual(data.payment_url, '')
    assert.equal(await countRows('amount_locks'), 0)
  })

  test('4 → 3: expiration task or backend closure, nothing to unlock', async ({
    client,
    assert,
  }) => {
    const expiring = await newPlaceholder(client)
    await db
      .from('orders')
      .where('id', expiring.id)
      .update({ expiration_time: Date.now() - 1 })
    await orderExpiry.expireDue()
    assert.equal((await Order.findOrFail(expiring.id)).status, 3)
    const closing = await newPlaceholder(client)
    assert.isTrue(await orderService.close(closing))
    assert.equal((await Order.findOrFail(closing.id)).status, 3)
  })

  test('1 → 1: same target returns the order; after a completed placeholder it is selected', async ({
    client,
    assert,
  }) => {
    const direct = await newOrder(client)
    const same = (await switchTo(client, direct.tradeId, FAKE_NETWORK)).body().data
    assert.equal(same.trade_id, direct.tradeId)
    assert.isFalse(same.is_selected)
    const placeholder = await newPlaceholder(client)
    await switchTo(client, placeholder.tradeId, FAKE_NETWORK)
    assert.isTrue(
      (await switchTo(client, placeholder.tradeId, FAKE_NETWORK)).body().data.is_selected
    )
  })

  test('1 → 1: another target creates one child, parent unchanged', async ({ client, assert }) => {
    const parent = await newOrder(client)
    const child = (await switchTo(client, parent.tradeId, 'tron')).body().data
    assert.notEqual(child.trade_id, parent.tradeId)
    assert.equal((await Order.findOrFail(parent.id)).network, FAKE_NETWORK)
    assert.equal(await countRows('orders', { parent_id: parent.id }), 1)
  })

  test('1 → 3: expiry keeps the amount reserved for the late-payment grace', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    await db
      .from('orders')
      .where('id', order.id)
      .update({ expiration_time: Date.now() - 1 })
    await orderExpiry.expireDue()
    assert.equal((await Order.findOrFail(order.id)).status, 3)
    assert.equal(await countRows('amount_locks', { order_id: order.id }), 1)
  })

  test('1 → 2: payment confirmed on chain triggers the callback', async ({ client, assert }) => {
    const order = await newOrder(client)
    await paymentService.markPaid(order.id, { reference: 'chain-tx', source: 'scanner' })
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    assert.equal(await countRows('callbacks', { order_id: order.id }), 1)
  })

  test('1 → 2: submit transaction hash, verified', async ({ client, assert }) => {
    const order = await newOrder(client)
    fakeTransfer('0xsubmitted0001', order.actualAmount)
    const response = await client
      .post(`/pay/submit-tx-hash/${order.tradeId}`)
      .json({ block_transaction_id: '0xsubmitted0001' })
      .accept('json')
    assert.equal(response.body().data.status, 2)
    assert.equal(await countRows('callbacks', { order_id: order.id }), 1)
  })

  test('1 or 3 → 2: admin mark-paid repairs on-chain orders', async ({ client, assert }) => {
    const waiting = await newOrder(client)
    const expired = await newOrder(client, { amount: 50 })
    await db.from('orders').where('id', expired.id).update({ status: 3 })
    for (const [order, reference] of [
      [waiting, '0xadminrepair01'],
      [expired, '0xadminrepair02'],
    ] as const) {
      fakeTransfer(reference, order.actualAmount)
      const result = await runCommand(OrdersMarkPaid, [order.tradeId, reference])
      assert.equal(result.exitCode, 0, result.output)
      assert.equal((await Order.findOrFail(order.id)).status, 2)
      assert.equal(await countRows('callbacks', { order_id: order.id }), 1)
    }
  })

  test('provider order (1) → 2: notification for a completed placeholder parent', async ({
    client,
    assert,
  }) => {
    const order = await newPlaceholder(client)
    await switchTo(client, order.tradeId, 'provider')
    assert.equal(await notifyPaid(order), 'success')
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    assert.equal(await countRows('callbacks', { order_id: order.id }), 1)
  })

  test('provider order (1) → 2: notification for a provider child pays the parent', async ({
    client,
    assert,
  }) => {
    const parent = await newOrder(client)
    const child = await Order.findByOrFail(
      'trade_id',
      (await switchTo(client, parent.tradeId, 'provider')).body().data.trade_id
    )
    assert.equal(await notifyPaid(child), 'success')
    assert.equal((await Order.findOrFail(parent.id)).status, 2)
    assert.equal(await countRows('callbacks', { order_id: parent.id }), 1)
  })
})
