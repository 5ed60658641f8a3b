import apiKeyAdmin from '#services/operators/api_key_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import paymentService from '#services/payment_service'
import callbackDeliverer from '#callbacks/callback_deliverer'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import { FAKE_NETWORK } from '#tests/helpers/fake_chain'
import { MerchantServer } from '#tests/helpers/merchant_server'
import {
  TEST_SECRET,
  createOrder,
  merchantVerifiesCallback,
  orderParams,
} from '#tests/helpers/merchant'
import {
  compatParams,
  compatSigned,
  submitGet,
  tradeIdFromLocation,
} from '#tests/helpers/compat_merchant'
import { isUniqueViolation } from '#support/database/database_errors'

/** A second merchant beside the installed PID 1000. */
const OTHER_PID = '2002'
const OTHER_SECRET = 'secret-of-2002-0123456789'

function params(pid: string, overrides: Record<string, unknown> = {}) {
  return orderParams({ pid, network: FAKE_NETWORK, token: 'usdt', ...overrides })
}

function secretOf(pid: string) {
  return pid === OTHER_PID ? OTHER_SECRET : TEST_SECRET
}

test.group('Order numbers belong to their merchant (pid)', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await apiKeyAdmin.create({ pid: OTHER_PID, secret: OTHER_SECRET })
  })

  test('two merchants may use the same order_id; each gets its own order', async ({
    client,
    assert,
  }) => {
    const first = await createOrder(client, params('1000', { order_id: 'shared-1', amount: 100 }))
    first.assertStatus(200)
    const second = await createOrder(
      client,
      params(OTHER_PID, { order_id: 'shared-1', amount: 50 }),
      OTHER_SECRET
    )
    second.assertStatus(200)

    const a = first.body().data
    const b = second.body().data
    assert.notEqual(a.trade_id, b.trade_id)
    assert.equal(a.order_id, 'shared-1')
    assert.equal(b.order_id, 'shared-1')
    // Each answer is the merchant's own order, not the other's.
    assert.equal(a.amount, 100)
    assert.equal(b.amount, 50)
    assert.equal((await Order.findByOrFail('trade_id', a.trade_id)).pid, '1000')
    assert.equal((await Order.findByOrFail('trade_id', b.trade_id)).pid, OTHER_PID)
    assert.equal(await countRows('orders', { order_id: 'shared-1' }), 2)
  })

  test('a repeat by the same merchant is 10002, whoever else used the number', async ({
    client,
    assert,
  }) => {
    for (const pid of ['1000', OTHER_PID]) {
      ;(
        await createOrder(client, params(pid, { order_id: 'shared-2' }), secretOf(pid))
      ).assertStatus(200)
    }
    for (const pid of ['1000', OTHER_PID]) {
      const again = await createOrder(
        client,
        params(pid, { order_id: 'shared-2', amount: 7 }),
        secretOf(pid)
      )
      again.assertStatus(400)
      assert.equal(again.body().status_code, 10002, pid)
    }
    assert.equal(await countRows('orders', { order_id: 'shared-2' }), 2)
    assert.equal(await countRows('orders', { order_id: 'shared-2', pid: '1000' }), 1)
    assert.equal(await countRows('orders', { order_id: 'shared-2', pid: OTHER_PID }), 1)
  })

  test("another merchant's placeholder does not block a concrete order with the same number", async ({
    client,
    assert,
  }) => {
    const placeholder = await createOrder(
      client,
      params('1000', { order_id: 'shared-3', token: undefined, network: undefined })
    )
    assert.equal(placeholder.body().data.status, 4)
    const concrete = await createOrder(
      client,
      params(OTHER_PID, { order_id: 'shared-3' }),
      OTHER_SECRET
    )
    concrete.assertStatus(200)
    assert.equal(concrete.body().data.status, 1)
    assert.notEqual(concrete.body().data.trade_id, placeholder.body().data.trade_id)
    // The first merchant's placeholder is untouched.
    const untouched = await Order.findByOrFail('trade_id', placeholder.body().data.trade_id)
    assert.equal(untouched.status, 4)
    assert.equal(untouched.pid, '1000')
  })

  test('concurrent creates of one number by two merchants: one order each', async ({
    client,
    assert,
  }) => {
    const requests = Array.from({ length: 8 }, (_, index) => {
      const pid = index % 2 === 0 ? '1000' : OTHER_PID
      return createOrder(client, params(pid, { order_id: 'race-2' }), secretOf(pid))
    })
    const codes = (await Promise.all(requests)).map((response) => response.body().status_code)
    assert.equal(codes.filter((code) => code === 200).length, 2)
    assert.equal(codes.filter((code) => code === 10002).length, 6)
    assert.equal(await countRows('orders', { order_id: 'race-2', pid: '1000' }), 1)
    assert.equal(await countRows('orders', { order_id: 'race-2', pid: OTHER_PID }), 1)
  })

  test('compat: out_trade_no is per pid too', async ({ client, assert }) => {
    const first = await submitGet(
      client,
      compatSigned(compatParams({ pid: '1000', out_trade_no: 'EP-SHARED' }))
    )
    assert.equal(first.status(), 302, JSON.stringify(first.body()))
    const second = await submitGet(
      client,
      compatSigned(compatParams({ pid: OTHER_PID, out_trade_no: 'EP-SHARED' }), OTHER_SECRET)
    )
    assert.equal(second.status(), 302, JSON.stringify(second.body()))
    assert.notEqual(
      tradeIdFromLocation(first.header('location')),
      tradeIdFromLocation(second.header('location'))
    )

    const repeat = await submitGet(
      client,
      compatSigned(
        compatParams({ pid: OTHER_PID, out_trade_no: 'EP-SHARED', money: '5' }),
        OTHER_SECRET
      )
    )
    repeat.assertStatus(400)
    assert.equal(repeat.body().status_code, 10002)
  })

  test("each merchant's callback carries its own order, pid and signature", async ({
    client,
    assert,
  }) => {
    const merchant = new MerchantServer()
    await merchant.start()
    try {
      const mine = await newOrder(client, {
        order_id: 'shared-4',
        amount: 100,
        notify_url: merchant.notifyUrl,
      })
      const response = await createOrder(
        client,
        params(OTHER_PID, { order_id: 'shared-4', amount: 50, notify_url: merchant.notifyUrl }),
        OTHER_SECRET
      )
      const theirs = await Order.findByOrFail('trade_id', response.body().data.trade_id)
      await paymentService.markPaid(theirs.id, { reference: 'tx-theirs', source: 'scanner' })
      await paymentService.markPaid(mine.id, { reference: 'tx-mine', source: 'scanner' })
      await callbackDeliverer.runOnce()

      const bodies = merchant.requests.map((request) => JSON.parse(request.body))
      assert.lengthOf(bodies, 2)
      const byPid = Object.fromEntries(bodies.map((body) => [body.pid, body]))
      assert.include(byPid['1000'], { trade_id: mine.tradeId, order_id: 'shared-4', amount: 100 })
      assert.include(byPid[OTHER_PID], {
        trade_id: theirs.tradeId,
        order_id: 'shared-4',
        amount: 50,
      })
      assert.isTrue(merchantVerifiesCallback(byPid['1000'], TEST_SECRET))
      assert.isTrue(merchantVerifiesCallback(byPid[OTHER_PID], OTHER_SECRET))
    } finally {
      await merchant.stop()
    }
  })

  test('the database index is per pid: same pid refused, other pid accepted', async ({
    client,
    assert,
  }) => {
    const original = await newOrder(client, { order_id: 'shared-5' })
    const row = await db.from('orders').where('id', original.id).firstOrFail()
    const copy = (pid: string, tradeId: string) => {
      const { id, ...rest } = row
      return { ...rest, pid, trade_id: tradeId }
    }

    let refused: unknown = null
    try {
      await db.table('orders').insert(copy('1000', 'copy-same-pid'))
    } catch (error) {
      refused = error
    }
    assert.isTrue(isUniqueViolation(refused), `expected a unique violation, got ${String(refused)}`)

    await db.table('orders').insert(copy(OTHER_PID, 'copy-other-pid'))
    assert.equal(await countRows('orders', { order_id: 'shared-5' }), 2)
  })
})
