import walletAdmin from '#services/operators/wallet_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import Callback from '#models/callback'
import paymentService from '#services/payment_service'
import BusinessError from '#exceptions/business_error'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { newOrder, newPlaceholder, prepareLifecycle, switchTo } from '#tests/helpers/orders'
import { FAKE_NETWORK } from '#tests/helpers/fake_chain'
import { TRON_WALLET } from '#tests/helpers/merchant'

async function rejectsWith(promise: Promise<unknown>, code: number) {
  try {
    await promise
  } catch (error) {
    if (error instanceof BusinessError && error.businessCode === code) return
    throw new Error(`expected business code ${code}, got ${(error as Error).message}`)
  }
  throw new Error(`expected business code ${code}, but it succeeded`)
}

test.group('One payment path', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('pays a waiting order: status 2, reference, lock released, callback queued', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    assert.equal(await countRows('amount_locks', { order_id: order.id }), 1)
    const outcome = await paymentService.markPaid(order.id, {
      reference: 'tx-1',
      source: 'scanner',
      paidAt: 1234,
    })
    assert.isFalse(outcome.alreadyPaid)
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, 'tx-1')
    assert.equal(paid.paidAt, 1234)
    assert.equal(paid.callbackStatus, 'pending')
    assert.equal(await countRows('amount_locks'), 0)
    const callback = await Callback.findByOrFail('order_id', order.id)
    assert.equal(callback.status, 'pending')
    assert.equal(callback.format, 'native')
  })

  test('is idempotent for the same order and reference', async ({ client, assert }) => {
    const order = await newOrder(client)
    await paymentService.markPaid(order.id, { reference: 'tx-1', source: 'scanner' })
    const again = await paymentService.markPaid(order.id, { reference: 'tx-1', source: 'scanner' })
    assert.isTrue(again.alreadyPaid)
    assert.equal(await countRows('callbacks'), 1)
    assert.equal(await countRows('payment_references'), 1)
  })

  test('a paid order refuses another reference (10010)', async ({ client }) => {
    const order = await newOrder(client)
    await paymentService.markPaid(order.id, { reference: 'tx-1', source: 'scanner' })
    await rejectsWith(
      paymentService.markPaid(order.id, { reference: 'tx-2', source: 'scanner' }),
      10010
    )
  })

  test('a reference that paid another order is refused (10007), nothing changes', async ({
    client,
    assert,
  }) => {
    const first = await newOrder(client)
    const second = await newOrder(client)
    await paymentService.markPaid(first.id, { reference: 'tx-1', source: 'scanner' })
    await rejectsWith(
      paymentService.markPaid(second.id, { reference: 'tx-1', source: 'scanner' }),
      10007
    )
    const untouched = await Order.findOrFail(second.id)
    assert.equal(untouched.status, 1)
    assert.equal(untouched.blockTransactionId, '')
    assert.equal(await countRows('amount_locks', { order_id: second.id }), 1)
    assert.equal(await countRows('callbacks'), 1)
  })

  test('a placeholder cannot be paid (10013)', async ({ client }) => {
    const order = await newPlaceholder(client)
    await rejectsWith(
      paymentService.markPaid(order.id, { reference: 'tx-1', source: 'scanner' }),
      10013
    )
  })

  test('an expired order: refused to the payer, accepted as a late detection', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    await db.from('orders').where('id', order.id).update({ status: 3 })
    await rejectsWith(
      paymentService.markPaid(order.id, { reference: 'tx-1', source: 'submit' }),
      10013
    )
    await paymentService.markPaid(order.id, { reference: 'tx-1', source: 'scanner' })
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    assert.equal(await countRows('callbacks'), 1)
  })

  test('a paid child pays its parent, and only the parent is notified', async ({
    client,
    assert,
  }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    const parent = await newOrder(client, { order_id: 'merchant-7' })
    const response = await switchTo(client, parent.tradeId, 'tron')
    response.assertStatus(200)
    const child = await Order.findByOrFail('trade_id', response.body().data.trade_id)
    assert.equal(await countRows('amount_locks'), 2)

    const outcome = await paymentService.markPaid(child.id, {
      reference: 'tron-tx',
      source: 'scanner',
    })
    assert.equal(outcome.notified?.id, parent.id)

    const paidParent = await Order.findOrFail(parent.id)
    const paidChild = await Order.findOrFail(child.id)
    assert.equal(paidChild.status, 2)
    assert.equal(paidParent.status, 2)
    assert.equal(paidParent.tradeId, parent.tradeId)
    assert.equal(paidParent.orderId, 'merchant-7')
    assert.equal(paidParent.network, 'tron')
    assert.equal(paidParent.token, child.token)
    assert.equal(paidParent.receiveAddress, TRON_WALLET)
    assert.equal(paidParent.actualAmount, child.actualAmount)
    assert.equal(paidParent.blockTransactionId, 'tron-tx')
    assert.equal(await countRows('amount_locks'), 0)
    assert.equal(await countRows('callbacks'), 1)
    assert.equal((await Callback.firstOrFail()).orderId, parent.id)
  })

  test('a paid parent closes its child now; the child amount stays reserved for the grace', async ({
    client,
    assert,
  }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    const parent = await newOrder(client)
    const childId = (await switchTo(client, parent.tradeId, 'tron')).body().data.trade_id
    const before = Date.now()
    await paymentService.markPaid(parent.id, { reference: 'fake-tx', source: 'scanner' })
    const child = await Order.findByOrFail('trade_id', childId)
    assert.equal(child.status, 3)
    assert.isAtLeast(child.expirationTime, before)
    assert.isAtMost(child.expirationTime, Date.now())
    const locks = await db.from('amount_locks').select('order_id', 'expires_at')
    assert.deepEqual(
      locks.map((lock) => [Number(lock.order_id), Number(lock.expires_at)]),
      [[child.id, child.expirationTime]]
    )
    assert.equal(await countRows('callbacks'), 1)
  })

  test('concurrent payments of one order: one wins, one callback', async ({ client, assert }) => {
    const order = await newOrder(client)
    const results = await Promise.allSettled(
      Array.from({ length: 10 }, (_, index) =>
        paymentService.markPaid(order.id, { reference: `tx-${index % 2}`, source: 'scanner' })
      )
    )
    const paid = await Order.findOrFail(order.id)
    const winners = results.filter(
      (result) => result.status === 'fulfilled' && !result.value.alreadyPaid
    )
    assert.lengthOf(winners, 1)
    for (const result of results) {
      if (result.status === 'fulfilled')
        assert.equal(result.value.order.blockTransactionId, paid.blockTransactionId)
      else assert.equal((result.reason as BusinessError).businessCode, 10010)
    }
    assert.equal(await countRows('callbacks'), 1)
    assert.equal(await countRows('payment_references'), 1)
  })

  test('references are unique per network', async ({ client, assert }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    const onFake = await newOrder(client)
    const onTron = await newOrder(client, { network: 'tron' })
    await paymentService.markPaid(onFake.id, { reference: 'same-hash', source: 'scanner' })
    await paymentService.markPaid(onTron.id, { reference: 'same-hash', source: 'scanner' })
    assert.equal((await Order.findOrFail(onTron.id)).status, 2)
    assert.equal(onFake.network, FAKE_NETWORK)
  })
})
