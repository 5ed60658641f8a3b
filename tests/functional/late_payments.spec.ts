import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import Chain from '#models/chain'
import UnmatchedPayment from '#models/unmatched_payment'
import chainScanner from '#services/chain_scanner'
import orderExpiry from '#services/order_expiry'
import orderService from '#services/order_service'
import amountAllocator, { reservationGraceMs } from '#services/amount_allocator'
import settings from '#settings/settings_service'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import { FAKE_NETWORK, FAKE_USDT, FAKE_WALLET, fakeFamily } from '#tests/helpers/fake_chain'
import { runAce } from '#tests/helpers/processes'
import { createOrder, orderParams } from '#tests/helpers/merchant'
import type { ObservedTransfer } from '#chains/chain_family'

/*
 * A late payment never pays another order. Timelines are replayed on the
 * fake chain with explicit block times; tests/functional/chains/
 * evm_late_payments.spec.ts replays them on a real node.
 */

function transfer(reference: string, amount: string, timestamp: number): ObservedTransfer {
  return {
    reference,
    position: 'log:0',
    to: FAKE_WALLET,
    contract: FAKE_USDT,
    amount,
    timestamp,
    confirmations: 10,
    success: true,
  }
}

async function scan(...transfers: ObservedTransfer[]) {
  fakeFamily.pending = transfers
  const [report] = await chainScanner.scan({ network: FAKE_NETWORK })
  return report
}

/** Ends the order's life at `at` (default: 1 s ago) and runs the expiry job. */
async function expire(order: Order, at = Date.now() - 1000) {
  await db.from('orders').where('id', order.id).update({ expiration_time: at })
  await orderExpiry.expireDue()
  const expired = await Order.findOrFail(order.id)
  if (expired.status !== 3) throw new Error('order did not expire')
  return expired
}

/** Moves an ended order's life (and its reservation) back past the grace. */
async function pastGrace(order: Order) {
  const chain = await Chain.findByOrFail('network', FAKE_NETWORK)
  const end = Date.now() - (await reservationGraceMs(chain)) - 60_000
  await db
    .from('orders')
    .where('id', order.id)
    .update({ created_at: end - 600_000, expiration_time: end })
  await db.from('amount_locks').where('order_id', order.id).update({ expires_at: end })
  return Order.findOrFail(order.id)
}

async function status(order: Order) {
  return (await Order.findOrFail(order.id)).status
}

test.group('Late payments: the reservation outlives the order', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('after expiry the amount is not handed out again within the grace', async ({
    client,
    assert,
  }) => {
    const first = await newOrder(client)
    await expire(first)
    const second = await newOrder(client)
    assert.equal(first.actualAmount, '13.8')
    assert.equal(second.actualAmount, '13.81')
    assert.equal(await countRows('amount_locks'), 2)
  })

  test('after closure the amount is not handed out again within the grace; the life ends at the close', async ({
    client,
    assert,
  }) => {
    const first = await newOrder(client)
    const before = Date.now()
    const result = await runAce(['orders:close', first.tradeId])
    assert.equal(result.code, 0, result.stderr + result.stdout)
    const closed = await Order.findOrFail(first.id)
    assert.equal(closed.status, 3)
    assert.isAtLeast(closed.expirationTime, before)
    assert.isAtMost(closed.expirationTime, Date.now())
    const lock = await db.from('amount_locks').where('order_id', first.id).firstOrFail()
    assert.equal(Number(lock.expires_at), closed.expirationTime)
    assert.equal((await newOrder(client)).actualAmount, '13.81')
  })

  test('the grace is confirmations × block time + scan interval + the margin setting', async ({
    assert,
  }) => {
    await settings.set('order.late_payment_margin_seconds', '120')
    const chain = await Chain.findByOrFail('network', FAKE_NETWORK)
    chain.merge({ confirmations: 20, blockTimeMs: 3000, scanIntervalSeconds: 5 })
    await chain.save()
    assert.equal(await reservationGraceMs(chain), 20 * 3000 + 5000 + 120_000)
    const result = await runAce(['chain:set', 'tron', '--block-time', '0.4'])
    assert.equal(result.code, 0, result.stderr + result.stdout)
    assert.equal((await Chain.findByOrFail('network', 'tron')).blockTimeMs, 400)
    const refused = await runAce(['chain:set', 'tron', '--block-time', '0'])
    assert.notEqual(refused.code, 0)
    assert.match(refused.stderr + refused.stdout, /block time must be from 0.1 to 600 seconds/)
  })

  test('the expiry job reclaims reservations past their grace, and only those', async ({
    client,
    assert,
  }) => {
    const old = await pastGrace(await expire(await newOrder(client)))
    const recent = await expire(await newOrder(client))
    // still shown as waiting although its time is long gone: kept whatever the clock says
    const stuck = await newOrder(client)
    await db.from('orders').where('id', stuck.id).update({ expiration_time: 1 })
    await db.from('amount_locks').where('order_id', stuck.id).update({ expires_at: 1 })
    await db.from('orders').where('id', stuck.id).update({ status: 1 })

    await amountAllocator.reclaimExpired()
    const held = (await db.from('amount_locks').select('order_id'))
      .map((row) => Number(row.order_id))
      .sort()
    assert.deepEqual(held, [recent.id, stuck.id].sort())
    assert.notInclude(held, old.id)
  })

  test('an allocation that finds every amount reserved reclaims one past its grace on the spot', async ({
    client,
    assert,
  }) => {
    await settings.set('order.amount_max_steps', '1')
    const first = await newOrder(client)
    await expire(first)
    // within the grace: no channel
    const busy = await createOrder(client, orderParams({ network: FAKE_NETWORK, token: 'usdt' }))
    assert.equal(busy.body().status_code, 10005)
    assert.match(busy.body().message, /late-payment grace/)
    // past the grace, with no job run: the allocation takes the amount back
    await pastGrace(first)
    const again = await newOrder(client)
    assert.equal(again.actualAmount, first.actualAmount)
    assert.equal(await countRows('amount_locks'), 1)
  })
})

test.group('Late payments: time decides which order a transfer pays', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('expiry: a transfer made in the expired order’s life, seen late, pays it; the newer order keeps its own', async ({
    client,
    assert,
  }) => {
    const a = await newOrder(client)
    const end = Date.now() - 2
    const paidAt = end - 1 // the last millisecond of A's life
    await expire(a, end)
    const b = await newOrder(client)
    assert.notEqual(b.actualAmount, a.actualAmount)
    // chain order: A's transfer first, then B's
    const report = await scan(
      transfer('tx-a', a.actualAmount, paidAt),
      transfer('tx-b', b.actualAmount, Date.now())
    )
    assert.equal(report.paid, 2)
    assert.equal((await Order.findOrFail(a.id)).blockTransactionId, 'tx-a')
    assert.equal((await Order.findOrFail(b.id)).blockTransactionId, 'tx-b')
    assert.equal(await countRows('callbacks'), 2)
    assert.equal(await countRows('unmatched_payments'), 0)
  })

  test('expiry: a transfer of the expired order’s amount made after its life pays nothing and is kept', async ({
    client,
    assert,
  }) => {
    const a = await newOrder(client)
    await expire(a)
    const b = await newOrder(client)
    // chain order: B's transfer first, then the late one of A's amount
    await scan(
      transfer('tx-b', b.actualAmount, Date.now()),
      transfer('tx-late', a.actualAmount, Date.now() + 1)
    )
    assert.equal(await status(a), 3)
    assert.equal((await Order.findOrFail(b.id)).blockTransactionId, 'tx-b')
    const row = await UnmatchedPayment.findByOrFail('reference', 'tx-late')
    assert.match(row.reason, new RegExp(`made after the life of order ${a.tradeId} ended`))
  })

  test('closure: paid before the close → credited late; paid after the close → unmatched', async ({
    client,
    assert,
  }) => {
    const a = await newOrder(client)
    const c = await newOrder(client, { amount: 200 })
    const before = Date.now() - 5
    assert.isTrue(await orderService.close(a))
    assert.isTrue(await orderService.close(c))
    const b = await newOrder(client)
    assert.notEqual(b.actualAmount, a.actualAmount)
    await scan(
      transfer('tx-a', a.actualAmount, before),
      transfer('tx-b', b.actualAmount, Date.now()),
      transfer('tx-c', c.actualAmount, Date.now() + 1)
    )
    assert.equal((await Order.findOrFail(a.id)).blockTransactionId, 'tx-a')
    assert.equal((await Order.findOrFail(b.id)).blockTransactionId, 'tx-b')
    assert.equal(await status(c), 3)
    assert.equal((await UnmatchedPayment.findByOrFail('reference', 'tx-c')).amount, c.actualAmount)
  })

  for (const arrival of ['the older transfer first', 'the older transfer last'] as const) {
    test(`same amount handed out again after the grace: each transfer pays the order of its time (${arrival})`, async ({
      client,
      assert,
    }) => {
      const a = await pastGrace(await expire(await newOrder(client)))
      await amountAllocator.reclaimExpired() // the expiry job's turn
      const b = await newOrder(client)
      assert.equal(b.actualAmount, a.actualAmount) // the very case the time rule must keep apart
      const older = transfer('tx-a', a.actualAmount, a.createdAt + 1000)
      const newer = transfer('tx-b', b.actualAmount, Date.now())
      if (arrival === 'the older transfer first') {
        await scan(older)
        assert.equal(await status(b), 1)
        await scan(newer)
      } else {
        await scan(newer)
        assert.equal((await Order.findOrFail(b.id)).blockTransactionId, 'tx-b')
        await scan(older)
      }
      assert.equal((await Order.findOrFail(a.id)).blockTransactionId, 'tx-a')
      assert.equal((await Order.findOrFail(b.id)).blockTransactionId, 'tx-b')
      assert.equal(await countRows('unmatched_payments'), 0)
    })
  }

  test('two orders whose lives overlap on one amount: the earlier wins, the newer gets nothing', async ({
    client,
    assert,
  }) => {
    const a = await newOrder(client)
    const b = await newOrder(client)
    // forced overlap (an operator who set the margin too short, say): same amount on the same address
    await db.from('amount_locks').where('order_id', b.id).delete()
    await db.from('orders').where('id', b.id).update({ actual_amount: a.actualAmount })
    await scan(
      transfer('tx-1', a.actualAmount, Date.now()),
      transfer('tx-2', a.actualAmount, Date.now() + 1)
    )
    assert.equal((await Order.findOrFail(a.id)).blockTransactionId, 'tx-1')
    assert.equal(await status(b), 1)
    const row = await UnmatchedPayment.findByOrFail('reference', 'tx-2')
    assert.match(row.reason, new RegExp(`made for \\(${a.tradeId}\\) is already paid`))
  })
})
