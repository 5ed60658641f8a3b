import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { userInfo } from 'node:os'
import Order from '#models/order'
import Callback from '#models/callback'
import paymentService from '#services/payment_service'
import callbackDeliverer from '#callbacks/callback_deliverer'
import orderAdmin, { OrderAdmin } from '#services/operators/order_admin'
import orderDetails from '#services/admin/order_detail'
import { AuditLog, type AuditEntry } from '#services/audit/audit_log'
import { actingAs } from '#services/audit/audit_context'
import { OperatorError } from '#support/cli/operator_error'
import { countRows, emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { newOrder, newPlaceholder, prepareLifecycle } from '#tests/helpers/orders'
import { FAKE_NETWORK, FAKE_WALLET, fakeTransfer } from '#tests/helpers/fake_chain'
import { merchantForGroup } from '#tests/helpers/merchant_group'
import { runCommand } from '#tests/helpers/ace_command'
import OrdersMarkPaid from '#commands/orders_mark_paid'
import OrdersClose from '#commands/orders_close'

const OPERATOR = {
  actor: { kind: 'user' as const, userId: 7, email: 'ops@example.test' },
  ip: '203.0.113.9',
  requestId: 'req-42',
}

/** As the console runs it: a signed-in user is the author of the change. */
function asOperator<T>(work: () => Promise<T>) {
  return actingAs(OPERATOR, work)
}

async function auditRows() {
  const rows = await db.from('audit_log').orderBy('id')
  return rows.map((row) => ({
    ...row,
    before: row.before === null ? null : JSON.parse(row.before),
    after: row.after === null ? null : JSON.parse(row.after),
  }))
}

/** Refused with an operator-facing message, and nothing written. */
async function assertRefused(assert: any, work: () => Promise<unknown>, message: RegExp) {
  const audited = await countRows('audit_log')
  try {
    await work()
  } catch (error) {
    assert.instanceOf(error, OperatorError)
    assert.match((error as Error).message, message)
    assert.equal(await countRows('audit_log'), audited)
    return
  }
  assert.fail(`expected a refusal matching ${message}`)
}

/** A child of `parent` on the fake chain (as a switch to another target makes it). */
async function childOf(parent: Order) {
  return Order.create({
    tradeId: `${parent.tradeId.slice(0, 18)}CHLD`,
    orderId: parent.orderId,
    parentId: parent.id,
    apiKeyId: parent.apiKeyId,
    pid: parent.pid,
    paymentType: parent.paymentType,
    currency: parent.currency,
    amount: parent.amount,
    token: 'USDT',
    network: FAKE_NETWORK,
    receiveAddress: FAKE_WALLET,
    actualAmount: '99.99',
    status: 1,
    notifyUrl: parent.notifyUrl,
    expirationTime: parent.expirationTime,
  })
}

test.group('Order actions: mark paid', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await emptyAuditLog()
  })

  test('a transfer the chain confirms pays the order; the audit row names the operator', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    fakeTransfer('0xconsole0001', order.actualAmount)
    const paid = await asOperator(async () =>
      orderAdmin.markPaid(` ${order.tradeId}`, ' 0xconsole0001 ')
    )
    assert.equal(paid.reference, '0xconsole0001')
    assert.equal(paid.notified?.tradeId, order.tradeId)
    const fresh = await Order.findOrFail(order.id)
    assert.equal(fresh.status, 2)
    assert.equal(fresh.blockTransactionId, '0xconsole0001')
    assert.equal(await countRows('callbacks', { order_id: order.id }), 1)
    assert.equal(
      await countRows('payment_references', { reference: '0xconsole0001', source: 'admin' }),
      1
    )
    const [row] = await auditRows()
    assert.deepInclude(row, {
      actor: 'ops@example.test',
      actor_kind: 'user',
      action: 'order.mark_paid',
      subject_type: 'order',
      subject_id: order.tradeId,
      ip: '203.0.113.9',
      request_id: 'req-42',
    })
    assert.equal(Number(row.actor_user_id), 7)
    assert.deepInclude(row.before, { status: 1, blockTransactionId: '' })
    assert.deepInclude(row.after, {
      status: 2,
      blockTransactionId: '0xconsole0001',
      notified: order.tradeId,
    })
  })

  test('repairs an expired order too (status 3)', async ({ client, assert }) => {
    const order = await newOrder(client)
    await db.from('orders').where('id', order.id).update({ status: 3 })
    fakeTransfer('0xconsole0002', order.actualAmount, { timestamp: Date.now() + 3_600_000 })
    await orderAdmin.markPaid(order.tradeId, '0xconsole0002')
    assert.equal((await Order.findOrFail(order.id)).status, 2)
  })

  test('a reference the chain does not confirm is refused with what is wrong; nothing changes', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const admin = orderAdmin
    await assertRefused(
      assert,
      () => admin.markPaid(order.tradeId, '0xnothing0001'),
      /transaction 0xnothing0001 not found/
    )
    fakeTransfer('0xwrongamount', '0.01')
    await assertRefused(
      assert,
      () => admin.markPaid(order.tradeId, '0xwrongamount'),
      /transfers 0.01 USDT, the order expects/
    )
    fakeTransfer('0xshallow0001', order.actualAmount, { confirmations: 0 })
    await assertRefused(
      assert,
      () => admin.markPaid(order.tradeId, '0xshallow0001'),
      /not yet confirmed/
    )
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    assert.equal(await countRows('payment_references'), 0)
    assert.equal(await countRows('callbacks'), 0)
  })

  test('refuses paid orders, placeholders, unknown orders, a blank or overlong reference', async ({
    client,
    assert,
  }) => {
    const admin = orderAdmin
    const paid = await newOrder(client)
    await paymentService.markPaid(paid.id, { reference: '0xscanner0001', source: 'scanner' })
    await assertRefused(
      assert,
      () => admin.markPaid(paid.tradeId, '0xany'),
      /has status 2; only 1 or 3 can be repaired/
    )
    const placeholder = await newPlaceholder(client)
    await assertRefused(
      assert,
      () => admin.markPaid(placeholder.tradeId, '0xany'),
      /is not an on-chain order/
    )
    await assertRefused(
      assert,
      () => admin.markPaid('NoSuchOrder', '0xany'),
      /No order with trade_id NoSuchOrder/
    )
    const waiting = await newOrder(client)
    await assertRefused(
      assert,
      () => admin.markPaid(waiting.tradeId, '   '),
      /Give the transaction reference/
    )
    await assertRefused(
      assert,
      () => admin.markPaid(waiting.tradeId, `0x${'a'.repeat(300)}`),
      /at most 255 characters/
    )
  })

  test('a reference that already paid another order is refused (10007)', async ({
    client,
    assert,
  }) => {
    const first = await newOrder(client)
    await paymentService.markPaid(first.id, { reference: '0xshared0001', source: 'scanner' })
    const second = await newOrder(client)
    fakeTransfer('0xshared0001', second.actualAmount)
    await assertRefused(
      assert,
      async () => orderAdmin.markPaid(second.tradeId, '0xshared0001'),
      /already paid another order \(10007\)/
    )
    assert.equal((await Order.findOrFail(second.id)).status, 1)
  })

  test('the payment and its audit row commit together: no audit row, no payment', async ({
    client,
    assert,
  }) => {
    class BrokenAudit extends AuditLog {
      async record(_entry: AuditEntry): Promise<void> {
        throw new Error('audit storage is down')
      }
    }
    const order = await newOrder(client)
    fakeTransfer('0xconsole0003', order.actualAmount)
    await assert.rejects(
      () => new OrderAdmin(new BrokenAudit()).markPaid(order.tradeId, '0xconsole0003'),
      /audit storage is down/
    )
    const fresh = await Order.findOrFail(order.id)
    assert.equal(fresh.status, 1)
    assert.equal(fresh.blockTransactionId, '')
    assert.equal(await countRows('payment_references'), 0)
    assert.equal(await countRows('callbacks'), 0)
    assert.equal(await countRows('amount_locks', { order_id: order.id }), 1)
  })

  test('orders:mark-paid goes through the same service (audited as the shell user)', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    fakeTransfer('0xconsole0004', order.actualAmount)
    const result = await runCommand(OrdersMarkPaid, [order.tradeId, '0xconsole0004'])
    assert.equal(result.exitCode, 0, result.output)
    assert.include(
      result.output,
      `Order ${order.tradeId} is paid by 0xconsole0004; callback queued for ${order.tradeId}`
    )
    const [row] = await auditRows()
    assert.deepInclude(row, {
      actor: `ace:${userInfo().username}`,
      action: 'order.mark_paid',
      subject_id: order.tradeId,
    })
  })
})

test.group('Order actions: close', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await emptyAuditLog()
  })

  test('closes a waiting order now; its amount stays reserved; audited', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const before = Date.now()
    const { order: closed } = await asOperator(async () => orderAdmin.close(order.tradeId))
    assert.equal(closed.status, 3)
    assert.isAtMost(closed.expirationTime, Date.now())
    assert.isAtLeast(closed.expirationTime, before)
    assert.equal(await countRows('amount_locks', { order_id: order.id }), 1)
    const [row] = await auditRows()
    assert.deepInclude(row, {
      actor: 'ops@example.test',
      action: 'order.close',
      subject_id: order.tradeId,
    })
    assert.deepEqual([row.before.status, row.after.status], [1, 3])
  })

  test('a parent takes its waiting child along', async ({ client, assert }) => {
    const parent = await newOrder(client)
    const child = await childOf(parent)
    const result = await orderAdmin.close(parent.tradeId)
    assert.equal(result.child?.tradeId, child.tradeId)
    assert.equal(result.child?.status, 3)
  })

  test('closing a paid or already closed order is refused; nothing is written', async ({
    client,
    assert,
  }) => {
    const admin = orderAdmin
    const paid = await newOrder(client)
    await paymentService.markPaid(paid.id, { reference: '0xscanner0002', source: 'scanner' })
    const { updatedAt } = await Order.findOrFail(paid.id)
    await assertRefused(
      assert,
      () => admin.close(paid.tradeId),
      /is not open \(status 2\); nothing to close/
    )
    const still = await Order.findOrFail(paid.id)
    assert.equal(still.status, 2)
    assert.equal(still.updatedAt, updatedAt)
    const waiting = await newOrder(client)
    await admin.close(waiting.tradeId)
    await assertRefused(assert, () => admin.close(waiting.tradeId), /is not open \(status 3\)/)
    await assertRefused(assert, () => admin.close('NoSuchOrder'), /No order with trade_id/)
  })

  test('paid between the page and the click: refused inside the transaction, no audit row', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    // The rule saw it open; it is paid before the close's transaction runs.
    class PaysFirst extends OrderAdmin {
      closeRefusal(target: Order) {
        const refusal = super.closeRefusal(target)
        return target.status === 1 ? null : refusal
      }
      async find(tradeId: string) {
        const found = await super.find(tradeId)
        if (found.status === 1)
          await paymentService.markPaid(found.id, { reference: '0xrace0001', source: 'scanner' })
        return found
      }
    }
    await assertRefused(
      assert,
      () => new PaysFirst(new AuditLog()).close(order.tradeId),
      /is not open \(status 2\)/
    )
    assert.equal((await Order.findOrFail(order.id)).status, 2)
  })

  test('orders:close uses the same service (audited)', async ({ client, assert }) => {
    const order = await newOrder(client)
    const result = await runCommand(OrdersClose, [order.tradeId])
    assert.equal(result.exitCode, 0, result.output)
    const [row] = await auditRows()
    assert.deepInclude(row, { actor: `ace:${userInfo().username}`, action: 'order.close' })
  })
})

test.group('Order actions: resend callback', (group) => {
  const merchant = merchantForGroup(group)
  group.each.setup(async () => {
    await emptyAuditLog()
  })

  async function paidOrder(client: any) {
    const order = await newOrder(client, { notify_url: merchant.notifyUrl })
    await paymentService.markPaid(order.id, { reference: `0x${order.tradeId}`, source: 'scanner' })
    return Order.findOrFail(order.id)
  }

  test("sends it again and returns the merchant's answer: status, duration, excerpt", async ({
    client,
    assert,
  }) => {
    const order = await paidOrder(client)
    await callbackDeliverer.runOnce()
    merchant.reset([{ status: 200, body: 'success', delayMs: 30 }])
    const result = await asOperator(async () => orderAdmin.resendCallback(order.tradeId))
    assert.lengthOf(merchant.requests, 1)
    assert.equal(result.order.callbackStatus, 'delivered')
    assert.equal(result.attempt?.httpStatus, 200)
    assert.equal(result.attempt?.responseExcerpt, 'success')
    assert.isAtLeast(result.attempt!.durationMs, 25)
    assert.equal(result.attempt?.attempt, 1)
    const [row] = await auditRows()
    assert.deepInclude(row, {
      actor: 'ops@example.test',
      action: 'order.callback_resend',
      subject_id: order.tradeId,
    })
    assert.deepEqual(
      [row.before.callbackStatus, row.after.callbackStatus],
      ['delivered', 'pending']
    )
  })

  test("a refused delivery is kept with the merchant's status and the first 200 characters of its answer", async ({
    client,
    assert,
  }) => {
    const order = await paidOrder(client)
    merchant.reset([{ status: 503, body: `busy ${'x'.repeat(500)}` }])
    const result = await orderAdmin.resendCallback(order.tradeId)
    assert.equal(result.attempt?.httpStatus, 503)
    assert.lengthOf(result.attempt!.responseExcerpt, 200)
    assert.isTrue(result.attempt!.responseExcerpt.startsWith('busy xxx'))
    assert.match(result.attempt!.error, /not acknowledged: HTTP 503/)
    assert.equal(result.order.callbackStatus, 'pending')
  })

  test("naming a child sends its parent's callback", async ({ client, assert }) => {
    const parent = await newOrder(client, { notify_url: merchant.notifyUrl })
    const child = await childOf(parent)
    await paymentService.markPaid(child.id, { reference: '0xchild0001', source: 'scanner' })
    const result = await orderAdmin.resendCallback(child.tradeId)
    assert.equal(result.order.tradeId, parent.tradeId)
    assert.lengthOf(merchant.requests, 1)
    assert.include(merchant.requests[0].body, parent.tradeId)
  })

  test("only that order's callback is sent, not others that are due", async ({
    client,
    assert,
  }) => {
    const other = await paidOrder(client)
    const order = await paidOrder(client)
    await orderAdmin.resendCallback(order.tradeId)
    assert.lengthOf(merchant.requests, 1)
    assert.include(merchant.requests[0].body, order.tradeId)
    const waiting = await Callback.findByOrFail('order_id', other.id)
    assert.equal(waiting.status, 'pending')
    assert.equal(waiting.attempts, 0)
  })

  test('an unpaid or unknown order is refused; nothing is queued', async ({ client, assert }) => {
    const admin = orderAdmin
    const waiting = await newOrder(client)
    await assertRefused(
      assert,
      () => admin.resendCallback(waiting.tradeId),
      /is not paid \(status 1\); there is nothing to tell/
    )
    await assertRefused(assert, () => admin.resendCallback('NoSuchOrder'), /No order with trade_id/)
    assert.equal(await countRows('callbacks'), 0)
    assert.lengthOf(merchant.requests, 0)
  })
})

test.group('Order detail', (group) => {
  const merchant = merchantForGroup(group)
  group.each.setup(async () => {
    await db
      .from('chains')
      .where('network', FAKE_NETWORK)
      .update({ explorer_tx_url: 'https://explorer.test/tx/{tx}' })
  })

  test('an unknown trade_id has no detail', async ({ assert }) => {
    assert.isNull(await orderDetails.find('NoSuchOrder'))
  })

  test('a waiting order: its amount reservation, no payment yet, the actions it allows', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const detail = (await orderDetails.find(order.tradeId))!
    assert.equal(detail.order.id, order.id)
    assert.isNull(detail.parent)
    assert.isNull(detail.child)
    assert.deepInclude(detail.amountLock!.serialize(), {
      network: FAKE_NETWORK,
      address: FAKE_WALLET,
      token: 'USDT',
      amount: order.actualAmount,
    })
    assert.isAbove(detail.amountLock!.expiresAt, Date.now())
    assert.deepEqual(detail.references, [])
    assert.isNull(detail.callback)
    assert.deepEqual(detail.attempts, [])
    assert.deepEqual(detail.refusals, {
      markPaid: null,
      close: null,
      resendCallback: `Order ${order.tradeId} is not paid (status 1); there is nothing to tell`,
    })
  })

  test('a parent paid through its child: both sides, the reference with its explorer link, every callback attempt, the history', async ({
    client,
    assert,
  }) => {
    merchant.reset([
      { status: 500, body: 'oops' },
      { status: 200, body: 'success' },
    ])
    const parent = await newOrder(client, { notify_url: merchant.notifyUrl })
    const child = await childOf(parent)
    await paymentService.markPaid(child.id, { reference: '0xchildpaid01', source: 'scanner' })
    await callbackDeliverer.runOnce()
    await db.from('callbacks').update({ next_attempt_at: 0 })
    await callbackDeliverer.runOnce()
    await asOperator(async () => orderAdmin.resendCallback(parent.tradeId))

    const shown = (await orderDetails.find(parent.tradeId))!
    assert.equal(shown.child?.tradeId, child.tradeId)
    assert.equal(shown.order.status, 2)
    assert.equal(shown.order.blockTransactionId, '0xchildpaid01')
    assert.equal(shown.explorerUrl, 'https://explorer.test/tx/0xchildpaid01')
    assert.deepEqual(
      shown.references.map(({ createdAt: _, ...reference }) => reference),
      [
        {
          tradeId: child.tradeId,
          network: FAKE_NETWORK,
          reference: '0xchildpaid01',
          source: 'scanner',
          explorerUrl: 'https://explorer.test/tx/0xchildpaid01',
          // Paid without a position (the whole transaction) nor a block: nothing a reorganisation could flag.
          position: '',
          positionText: 'whole transaction',
          block: null,
          reorgedAt: null,
        },
      ]
    )
    assert.deepEqual(shown.reorgs, [])
    assert.deepEqual(
      shown.attempts.map((attempt) => [
        attempt.attempt,
        attempt.httpStatus,
        attempt.responseExcerpt,
        attempt.acknowledged,
      ]),
      [
        [1, 500, 'oops', false],
        [2, 200, 'success', true],
        [1, 200, 'success', true],
      ]
    )
    for (const attempt of shown.attempts) {
      assert.isAtLeast(attempt.durationMs, 0)
      assert.equal(attempt.url, merchant.notifyUrl)
    }
    assert.equal(shown.callback?.status, 'delivered')
    assert.deepEqual(
      shown.history.map((row) => [row.action, row.actor]),
      [['order.callback_resend', 'ops@example.test']]
    )
    assert.deepEqual(shown.refusals, {
      markPaid: `Order ${parent.tradeId} has status 2; only 1 or 3 can be repaired`,
      close: `Order ${parent.tradeId} is not open (status 2); nothing to close`,
      resendCallback: null,
    })

    // The child's page: its parent, and the parent's callback (the merchant only hears of the parent).
    const fromChild = (await orderDetails.find(child.tradeId))!
    assert.equal(fromChild.parent?.tradeId, parent.tradeId)
    assert.equal(fromChild.callbackOrder.tradeId, parent.tradeId)
    assert.lengthOf(fromChild.attempts, 3)
    assert.isNull(fromChild.refusals.resendCallback)
  })
})
