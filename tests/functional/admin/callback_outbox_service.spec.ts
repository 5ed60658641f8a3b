import apiKeyAdmin from '#services/operators/api_key_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import Callback from '#models/callback'
import callbackDeliverer from '#callbacks/callback_deliverer'
import callbackOutboxQuery from '#services/admin/callback_outbox_query'
import callbackAdmin, { batchMessage } from '#services/operators/callback_admin'
import { actingAs } from '#services/audit/audit_context'
import { OperatorError } from '#support/cli/operator_error'
import { countRows, emptyAuditLog } from '#tests/helpers/database'
import { merchantForGroup, paidOrder } from '#tests/helpers/merchant_group'
import { TEST_SECRET } from '#tests/helpers/merchant'
import { giveUpCallback } from '#tests/helpers/admin_callbacks'

const ADMIN = { actor: { kind: 'user' as const, userId: 1, email: 'admin@example.com' } }

async function callbackOf(order: Order) {
  return Callback.findByOrFail('order_id', order.id)
}

test.group('Callback outbox: the console query', (group) => {
  const merchant = merchantForGroup(group)

  test('filters by status (held apart from pending), pid, network, time and trade_id / order_id', async ({
    client,
    assert,
  }) => {
    await apiKeyAdmin.create({ pid: '2000', secret: TEST_SECRET })
    const delivered = await paidOrder(client, merchant)
    await callbackDeliverer.runOnce()
    merchant.reset([{ status: 500, body: 'no' }])
    const pending = await paidOrder(client, merchant, { pid: '2000', order_id: 'shop-order-42' })
    const held = await paidOrder(client, merchant)
    // Its plugin is turned off: the deliverer never sends it.
    await db.from('callbacks').where('order_id', held.id).update({ format: 'retired' })
    const failed = await paidOrder(client, merchant)
    await giveUpCallback(failed)
    await db.from('orders').where('id', failed.id).update({ network: 'othernet' })

    const ids = async (filters: Parameters<typeof callbackOutboxQuery.list>[0]) =>
      (await callbackOutboxQuery.list(filters)).rows.map((row) => row.tradeId)

    assert.deepEqual(await ids({}), [
      failed.tradeId,
      held.tradeId,
      pending.tradeId,
      delivered.tradeId,
    ])
    assert.deepEqual(await ids({ status: 'delivered' }), [delivered.tradeId])
    assert.deepEqual(await ids({ status: 'pending' }), [pending.tradeId])
    assert.deepEqual(await ids({ status: 'held' }), [held.tradeId])
    assert.deepEqual(await ids({ status: 'failed' }), [failed.tradeId])
    assert.deepEqual(await ids({ pid: '2000' }), [pending.tradeId])
    assert.deepEqual(await ids({ network: 'othernet' }), [failed.tradeId])
    assert.deepEqual(await ids({ search: pending.tradeId }), [pending.tradeId])
    assert.deepEqual(await ids({ search: 'shop-order-42' }), [pending.tradeId])
    assert.deepEqual(await ids({ search: 'nothing-like-it' }), [])

    const heldCallback = await callbackOf(held)
    await db.from('callbacks').where('id', heldCallback.id).update({ created_at: 1_000 })
    assert.deepEqual(await ids({ until: 2_000 }), [held.tradeId])
    assert.notInclude(await ids({ since: 2_000 }), held.tradeId)

    const { rows } = await callbackOutboxQuery.list({})
    assert.equal(rows.find((row) => row.tradeId === held.tradeId)!.status, 'held')
    assert.deepEqual(await callbackOutboxQuery.counts(), {
      pending: 1,
      held: 1,
      failed: 1,
      delivered: 1,
    })
  })

  test('keyset pages: newest first, no row skipped or repeated, a bad cursor starts over', async ({
    client,
    assert,
  }) => {
    const made: string[] = []
    for (let index = 0; index < 5; index++) made.push((await paidOrder(client, merchant)).tradeId)
    const seen: string[] = []
    let after: string | null = null
    let pages = 0
    do {
      const page = await callbackOutboxQuery.list({}, { limit: 2, after })
      seen.push(...page.rows.map((row) => row.tradeId))
      after = page.next
      pages++
    } while (after)
    assert.equal(pages, 3)
    assert.deepEqual(seen, made.reverse())
    assert.lengthOf((await callbackOutboxQuery.list({}, { limit: 2, after: '1 OR 1=1' })).rows, 2)
  })

  test('a callback with its attempts: HTTP status, excerpt, duration, error', async ({
    client,
    assert,
  }) => {
    merchant.reset([
      { status: 500, body: 'try later' },
      { status: 200, body: 'ok' },
    ])
    const order = await paidOrder(client, merchant)
    await callbackDeliverer.runOnce()
    await db.from('callbacks').where('order_id', order.id).update({ next_attempt_at: 0 })
    await callbackDeliverer.runOnce()
    const callback = await callbackOf(order)
    const row = (await callbackOutboxQuery.find(callback.id))!
    assert.include(row, {
      tradeId: order.tradeId,
      status: 'delivered',
      attempts: 2,
      notifyUrl: merchant.notifyUrl,
    })
    const attempts = await callbackOutboxQuery.attempts(callback.id)
    assert.deepEqual(
      attempts.map((attempt) => [
        attempt.attempt,
        attempt.httpStatus,
        attempt.responseExcerpt,
        attempt.acknowledged,
      ]),
      [
        [1, 500, 'try later', false],
        [2, 200, 'ok', true],
      ]
    )
    assert.match(attempts[0].error, /not acknowledged/)
    assert.isAtLeast(attempts[1].durationMs, 0)
    assert.isNull(await callbackOutboxQuery.find(callback.id + 1000))
  })
})

test.group('Callback outbox: redeliver', (group) => {
  const merchant = merchantForGroup(group)
  group.each.setup(async () => {
    await emptyAuditLog()
  })

  test('batch: the matching callbacks, newest first, capped, held ones left out and counted', async ({
    client,
    assert,
  }) => {
    merchant.reset([{ status: 500, body: 'no' }])
    const orders: Order[] = []
    for (let index = 0; index < 4; index++) orders.push(await paidOrder(client, merchant))
    for (const order of orders.slice(0, 3)) {
      await db
        .from('callbacks')
        .where('order_id', order.id)
        .update({ status: 'failed', attempts: 7, last_error: 'HTTP 500' })
    }
    const held = orders[3]
    await db.from('callbacks').where('order_id', held.id).update({ format: 'retired', attempts: 0 })

    const result = await actingAs(ADMIN, async () =>
      callbackAdmin.redeliverMatching({ pid: '1000' }, 2)
    )
    assert.deepEqual(result, { queued: 2, capped: true, cap: 2, held: 1 })
    assert.equal(
      batchMessage(result),
      "2 callbacks queued again (the newest 2; more match: send the rest in another batch); 1 callback held, not sent (format's plugin turned off)"
    )
    // The two newest failed ones, not the oldest.
    const states = await Promise.all(
      orders.slice(0, 3).map(async (order) => (await callbackOf(order)).status)
    )
    assert.deepEqual(states, ['failed', 'pending', 'pending'])
    assert.equal((await callbackOf(orders[1])).attempts, 0)
    assert.equal((await Order.findOrFail(orders[2].id)).callbackStatus, 'pending')
    const audited = await db
      .from('audit_log')
      .where('action', 'order.callback_resend')
      .orderBy('id')
    assert.sameMembers(
      audited.map((row) => row.subject_id),
      [orders[1].tradeId, orders[2].tradeId]
    )
    assert.isTrue(
      audited.every(
        (row) => JSON.parse(row.after).batch === true && row.actor === 'admin@example.com'
      )
    )
    // The same rows as a single resend writes: the order before and after.
    const first = audited.find((row) => row.subject_id === orders[2].tradeId)!
    assert.include(JSON.parse(first.before), {
      tradeId: orders[2].tradeId,
      callbackStatus: 'pending',
    })
    assert.include(JSON.parse(first.after), { callbackStatus: 'pending', callbackAttempts: 0 })

    const failedOnly = await callbackAdmin.redeliverMatching({ status: 'failed' })
    assert.deepEqual(failedOnly, { queued: 1, capped: false, cap: 1000, held: 0 })
    assert.equal(batchMessage(failedOnly), '1 callback queued again')
    assert.equal(
      batchMessage(await callbackAdmin.redeliverMatching({ status: 'failed' })),
      'No callback matches these filters'
    )
  })

  test('batch: refused without any filter, and for held callbacks', async ({ client, assert }) => {
    await paidOrder(client, merchant)
    const service = callbackAdmin
    await assert.rejects(() => service.redeliverMatching({}), OperatorError)
    await assert.rejects(
      () => service.redeliverMatching({ pid: '', search: undefined }),
      /at least one filter/
    )
    await assert.rejects(
      () => service.redeliverMatching({ status: 'held' }),
      /Held callbacks cannot be sent/
    )
    assert.equal(await countRows('audit_log', { action: 'order.callback_resend' }), 0)
  })
})
