import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import paymentService from '#services/payment_service'
import chainScanner from '#services/chain_scanner'
import BusinessError from '#exceptions/business_error'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import { FAKE_NETWORK, fakeFamily, fakeTransfer } from '#tests/helpers/fake_chain'
import type { ObservedTransfer } from '#chains/chain_family'
import TransferPositions from '#database/migrations/1763700000100_transfer_positions'

/**
 * One reference per transfer, not per transaction: a batch withdrawal or a
 * disperse contract pays several orders in one transaction; each transfer
 * (the transaction's hash plus its position) pays at most one order, and
 * block_transaction_id stays the hash. Rows from before positions (''),
 * stand for their whole transaction. The real chains are in
 * tests/functional/chains/ (a disperse contract on anvil, a Solana
 * transaction with two transfer instructions).
 */

const HASH = '0x' + 'ab'.repeat(32)

function transfer(
  amount: string,
  position: string,
  overrides: Partial<ObservedTransfer> = {}
): ObservedTransfer {
  return { ...fakeTransfer(HASH, amount), position, ...overrides }
}

async function scan(...transfers: ObservedTransfer[]) {
  fakeFamily.pending = transfers
  const [report] = await chainScanner.scan({ network: FAKE_NETWORK })
  return report
}

async function codeOf(promise: Promise<unknown>): Promise<number | 'ok'> {
  try {
    await promise
    return 'ok'
  } catch (error) {
    if (error instanceof BusinessError) return error.businessCode
    throw error
  }
}

function submit(client: any, tradeId: string, reference: string) {
  return client
    .post(`/pay/submit-tx-hash/${tradeId}`)
    .json({ block_transaction_id: reference })
    .accept('json')
}

test.group('Transfer positions: one transaction, several payments', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('two transfers of one transaction pay two orders; both keep the hash as block_transaction_id', async ({
    client,
    assert,
  }) => {
    const first = await newOrder(client)
    const second = await newOrder(client)
    assert.notEqual(first.actualAmount, second.actualAmount)
    const report = await scan(
      transfer(first.actualAmount, 'log:3'),
      transfer(second.actualAmount, 'log:7')
    )
    assert.equal(report.paid, 2, report.detail)
    for (const order of [first, second]) {
      await order.refresh()
      assert.equal(order.status, 2)
      assert.equal(order.blockTransactionId, HASH)
    }
    const rows = await db
      .from('payment_references')
      .orderBy('position')
      .select('reference', 'position', 'order_id')
    assert.deepEqual(
      rows.map((row) => [row.reference, row.position, Number(row.order_id)]),
      [
        [HASH, 'log:3', first.id],
        [HASH, 'log:7', second.id],
      ]
    )

    // Seen again (a rescan): each transfer is already used, nothing more is recorded.
    const again = await scan(
      transfer(first.actualAmount, 'log:3'),
      transfer(second.actualAmount, 'log:7')
    )
    assert.equal(again.paid, 0)
    assert.equal(again.unmatched, 0)
    assert.equal(await countRows('unmatched_payments'), 0)
  })

  test('a second transfer to an order already paid by the first is kept as unmatched, with its position', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const report = await scan(
      transfer(order.actualAmount, 'log:1'),
      transfer(order.actualAmount, 'log:2')
    )
    assert.equal(report.paid, 1)
    assert.equal(report.unmatched, 1)
    const unmatched = await db.from('unmatched_payments').first()
    assert.equal(unmatched.reference, HASH)
    assert.equal(unmatched.position, 'log:2')
    assert.equal(unmatched.kind, 'transfer')
    assert.match(unmatched.reason, /already paid by another transfer/)
  })

  test('the payment path: the same transfer refuses a second order (10007); another transfer of the transaction pays it', async ({
    client,
    assert,
  }) => {
    const first = await newOrder(client)
    const second = await newOrder(client)
    await paymentService.markPaid(first.id, {
      reference: HASH,
      position: 'log:1',
      source: 'scanner',
    })
    assert.equal(
      await codeOf(
        paymentService.markPaid(second.id, {
          reference: HASH,
          position: 'log:1',
          source: 'scanner',
        })
      ),
      10007
    )
    assert.equal((await Order.findOrFail(second.id)).status, 1)
    // The same order and transfer again: a no-op; the same order by another transfer: already paid (10010).
    assert.isTrue(
      (
        await paymentService.markPaid(first.id, {
          reference: HASH,
          position: 'log:1',
          source: 'scanner',
        })
      ).alreadyPaid
    )
    assert.equal(
      await codeOf(
        paymentService.markPaid(first.id, { reference: HASH, position: 'log:9', source: 'scanner' })
      ),
      10010
    )
    assert.equal(
      await codeOf(
        paymentService.markPaid(second.id, {
          reference: HASH,
          position: 'log:2',
          source: 'scanner',
        })
      ),
      'ok'
    )
    assert.equal(await countRows('payment_references'), 2)
    assert.equal(await countRows('callbacks'), 2)
  })

  test('a row from before positions (position "") stands for its whole transaction: no transfer of it pays another order', async ({
    client,
    assert,
  }) => {
    const first = await newOrder(client)
    const second = await newOrder(client)
    // What the migration left of a payment recorded before positions existed.
    await paymentService.markPaid(first.id, { reference: HASH, source: 'scanner' })
    assert.equal((await db.from('payment_references').first()).position, '')
    assert.equal(
      await codeOf(
        paymentService.markPaid(second.id, {
          reference: HASH,
          position: 'log:4',
          source: 'scanner',
        })
      ),
      10007
    )
    const report = await scan(transfer(second.actualAmount, 'log:4'))
    assert.equal(report.paid, 0)
    assert.equal(report.unmatched, 0)
    assert.equal((await Order.findOrFail(second.id)).status, 1)
  })

  test('submit-tx-hash: a hash that pays this order among others pays it with its own transfer', async ({
    client,
    assert,
  }) => {
    const first = await newOrder(client)
    const second = await newOrder(client)
    // One transaction: a transfer elsewhere, one for each order.
    fakeFamily.transactions.set(HASH, [
      transfer('99', 'log:0', { to: 'fake:someone-else' }),
      transfer(first.actualAmount, 'log:1'),
      transfer(second.actualAmount, 'log:2'),
    ])
    const paidFirst = await submit(client, first.tradeId, HASH)
    paidFirst.assertStatus(200)
    assert.equal(paidFirst.body().data.block_transaction_id, HASH)
    const paidSecond = await submit(client, second.tradeId, HASH)
    paidSecond.assertStatus(200)
    assert.equal(paidSecond.body().data.status, 2)
    const rows = await db
      .from('payment_references')
      .orderBy('position')
      .select('position', 'order_id', 'source')
    assert.deepEqual(
      rows.map((row) => [row.position, Number(row.order_id), row.source]),
      [
        ['log:1', first.id, 'submit'],
        ['log:2', second.id, 'submit'],
      ]
    )
  })

  test('submit-tx-hash: two equal transfers to one order; the one already used by another order is passed over', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const other = await newOrder(client)
    // log:1 already paid `other` (an operator's repair with the same amount, say).
    await paymentService.markPaid(other.id, { reference: HASH, position: 'log:1', source: 'admin' })
    fakeFamily.transactions.set(HASH, [
      transfer(order.actualAmount, 'log:1'),
      transfer(order.actualAmount, 'log:2'),
    ])
    const response = await submit(client, order.tradeId, HASH)
    response.assertStatus(200)
    const row = await db.from('payment_references').where('order_id', order.id).first()
    assert.equal(row.position, 'log:2')
  })

  test('the migration: rows written before keep their transaction whole (position ""), and the schema goes down and up again', async ({
    client,
    assert,
  }) => {
    const first = await newOrder(client)
    const second = await newOrder(client)
    const migration = () => new TransferPositions(db.connection(), 'transfer_positions', false)
    await migration().execDown()
    try {
      // As the version before wrote them: one row per transaction.
      await db.table('payment_references').insert({
        network: FAKE_NETWORK,
        reference: HASH,
        order_id: first.id,
        source: 'scanner',
        created_at: 1,
      })
      await db
        .from('orders')
        .where('id', first.id)
        .update({ status: 2, block_transaction_id: HASH })
      assert.notProperty(await db.from('payment_references').first(), 'position')
      await db.table('unmatched_payments').insert({
        network: FAKE_NETWORK,
        reference: '0xold',
        to_address: 'fake:wallet-1',
        token: 'USDT',
        amount: '1',
        transfer_time: 1,
        reason: 'old row',
        detected_at: 1,
      })
    } finally {
      await migration().execUp()
    }
    const migrated = await db.from('payment_references').first()
    assert.equal(migrated.position, '')
    assert.isNull(migrated.block_number)
    const unmatched = await db.from('unmatched_payments').first()
    assert.equal(unmatched.position, '')
    assert.equal(unmatched.kind, 'transfer')
    // The old row still covers every transfer of its transaction.
    assert.equal(
      await codeOf(
        paymentService.markPaid(second.id, {
          reference: HASH,
          position: 'log:2',
          source: 'scanner',
        })
      ),
      10007
    )
    assert.equal(
      await codeOf(
        paymentService.markPaid(second.id, {
          reference: '0x' + 'cd'.repeat(32),
          position: 'log:2',
          source: 'scanner',
        })
      ),
      'ok'
    )
  })
})
