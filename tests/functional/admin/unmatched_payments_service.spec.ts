import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import UnmatchedPayment from '#models/unmatched_payment'
import chainScanner from '#services/chain_scanner'
import paymentService from '#services/payment_service'
import unmatchedPaymentAdmin from '#services/operators/unmatched_payment_admin'
import { actingAs } from '#services/audit/audit_context'
import { OperatorError } from '#support/cli/operator_error'
import { countRows, emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { newOrder, newPlaceholder, prepareLifecycle } from '#tests/helpers/orders'
import {
  FAKE_NETWORK,
  FAKE_USDT,
  FAKE_WALLET,
  fakeFamily,
  fakeTransfer,
} from '#tests/helpers/fake_chain'
import type { ObservedTransfer } from '#chains/chain_family'
import { expireOrder } from '#tests/helpers/unmatched_payments'

const ADMIN = { actor: { kind: 'user' as const, userId: 1, email: 'admin@example.com' } }
const FAKE_USDC = 'fake:usdc-contract'
let references = 0

/**
 * A transfer the chain has (its verification finds it) and the scanner sees
 * now; returns the unmatched row it left, if any.
 */
async function scanTransfer(
  amount: string,
  overrides: Partial<ObservedTransfer> = {},
  network = FAKE_NETWORK
) {
  const reference = `0xlate${String(++references).padStart(6, '0')}`
  const transfer = fakeTransfer(reference, amount, overrides)
  fakeFamily.pending = [transfer]
  await chainScanner.scan({ network })
  return UnmatchedPayment.query().where('reference', reference).first()
}

/** A payment made after its order's life ended: kept as unmatched by the scanner. */
async function latePayment(order: Order) {
  const expired = await expireOrder(order)
  const row = await scanTransfer(expired.actualAmount)
  if (!row) throw new Error('the late transfer was not kept as unmatched')
  return { order: expired, payment: row }
}

async function auditActions() {
  return (await db.from('audit_log').orderBy('id').select('action')).map((row) => row.action)
}

test.group('Unmatched payments: list', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('newest first with the reason; filters by network, token and state; keyset pages', async ({
    client,
    assert,
  }) => {
    await chainAdmin.setToken(FAKE_NETWORK, 'USDC', { contract: FAKE_USDC, decimals: 6 })
    const { order, payment: late } = await latePayment(await newOrder(client))
    const usdc = (await scanTransfer('5', { contract: FAKE_USDC }))!
    const stray = (await scanTransfer('10.5'))!
    const service = unmatchedPaymentAdmin

    const { rows, next } = await service.list()
    assert.isNull(next)
    assert.deepEqual(
      rows.map((row) => row.id),
      [stray.id, usdc.id, late.id]
    )
    assert.match(rows[2].reason, new RegExp(`made after the life of order ${order.tradeId} ended`))
    assert.include(rows[1], {
      token: 'USDC',
      amount: '5',
      network: FAKE_NETWORK,
      toAddress: FAKE_WALLET,
      state: 'open',
    })

    const ids = async (filters: Parameters<typeof service.list>[0]) =>
      (await service.list(filters)).rows.map((row) => row.id)
    assert.deepEqual(await ids({ token: 'usdc' }), [usdc.id])
    assert.deepEqual(await ids({ network: 'othernet' }), [])
    assert.deepEqual(await ids({ network: FAKE_NETWORK, token: 'USDT' }), [stray.id, late.id])

    await service.dismiss(stray.id, 'a test transfer from our own wallet')
    assert.deepEqual(await ids({ state: 'open' }), [usdc.id, late.id])
    assert.deepEqual(await ids({ state: 'dismissed' }), [stray.id])
    assert.deepEqual(await ids({ state: 'assigned' }), [])
    assert.equal(await service.openCount(), 2)

    const first = await service.list({}, { limit: 2 })
    assert.deepEqual(
      first.rows.map((row) => row.id),
      [stray.id, usdc.id]
    )
    const second = await service.list({}, { limit: 2, after: first.next })
    assert.deepEqual(
      second.rows.map((row) => row.id),
      [late.id]
    )
    assert.isNull(second.next)
  })
})

test.group('Unmatched payments: assign to an order', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await emptyAuditLog()
  })

  test('a late payment pays its expired order through the payment path, audited, once', async ({
    client,
    assert,
  }) => {
    const { order, payment } = await latePayment(await newOrder(client))
    fakeFamily.lookups = []
    const outcome = await actingAs(ADMIN, async () =>
      unmatchedPaymentAdmin.assign(payment.id, order.tradeId)
    )
    assert.equal(outcome.reference, payment.reference)
    // Verified on chain, as orders:mark-paid does.
    assert.deepEqual(fakeFamily.lookups, [payment.reference])

    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, payment.reference)
    assert.equal(
      await countRows('payment_references', { reference: payment.reference, source: 'admin' }),
      1
    )
    assert.equal(await countRows('callbacks', { order_id: order.id }), 1)

    const row = (await unmatchedPaymentAdmin.find(payment.id))!
    assert.include(row, {
      state: 'assigned',
      assignedTradeId: order.tradeId,
      assignedBy: 'admin@example.com',
    })
    assert.deepEqual(await auditActions(), ['unmatched.assign', 'order.mark_paid'])
    const markRow = await db.from('audit_log').where('action', 'order.mark_paid').firstOrFail()
    assert.include(JSON.parse(markRow.before), {
      tradeId: order.tradeId,
      status: 3,
      blockTransactionId: '',
    })
    assert.include(JSON.parse(markRow.after), { status: 2, blockTransactionId: payment.reference })
    const assignRow = await db.from('audit_log').where('action', 'unmatched.assign').firstOrFail()
    assert.include(assignRow, {
      subject_type: 'unmatched_payment',
      subject_id: String(payment.id),
      actor: 'admin@example.com',
    })
    assert.deepInclude(JSON.parse(assignRow.after), {
      tradeId: order.tradeId,
      reference: payment.reference,
    })

    // Twice: refused by the row, before any chain call.
    fakeFamily.lookups = []
    await assert.rejects(
      () => unmatchedPaymentAdmin.assign(payment.id, order.tradeId),
      new RegExp(`already assigned to order ${order.tradeId}`)
    )
    assert.deepEqual(fakeFamily.lookups, [])
    await assert.rejects(
      () => unmatchedPaymentAdmin.dismiss(payment.id, 'oops'),
      /already assigned/
    )
  })

  test('refused: an order of another amount, token, network or address; nothing changes', async ({
    client,
    assert,
  }) => {
    const { payment } = await latePayment(await newOrder(client))
    const other = await newOrder(client)
    assert.notEqual(other.actualAmount, payment.amount)
    const service = unmatchedPaymentAdmin
    await assert.rejects(
      () => service.assign(payment.id, other.tradeId),
      `Unmatched payment #${payment.id} cannot pay order ${other.tradeId}: it transfers ${payment.amount} USDT, the order waits for ${other.actualAmount} USDT`
    )

    await chainAdmin.setToken(FAKE_NETWORK, 'USDC', { contract: FAKE_USDC, decimals: 6 })
    const usdc = (await scanTransfer(other.actualAmount, { contract: FAKE_USDC }))!
    await assert.rejects(
      () => service.assign(usdc.id, other.tradeId),
      /it transfers USDC, the order waits for USDT/
    )

    // The same wallet watched on a second network of the same family.
    const now = Date.now()
    await db.table('chains').insert({
      network: 'fakenet2',
      family: 'fake',
      display_name: 'Fake Two',
      chain_id: null,
      enabled: true,
      rpc_urls: '[]',
      confirmations: 1,
      scan_interval_seconds: 5,
      sort_order: 1001,
      created_at: now,
      updated_at: now,
    })
    await db.table('tokens').insert({
      network: 'fakenet2',
      symbol: 'USDT',
      contract: FAKE_USDT,
      decimals: 6,
      amount_precision: 2,
      enabled: true,
      created_at: now,
      updated_at: now,
    })
    await db.table('wallets').insert({
      network: 'fakenet2',
      address: FAKE_WALLET,
      enabled: true,
      note: '',
      created_at: now,
      updated_at: now,
    })
    const elsewhere = (await scanTransfer(other.actualAmount, {}, 'fakenet2'))!
    assert.equal(elsewhere.network, 'fakenet2')
    await assert.rejects(
      () => service.assign(elsewhere.id, other.tradeId),
      /received on fakenet2, the order waits on fakenet/
    )

    // The fake family reports whatever it is given: here a transfer to another address of ours.
    const toOther = (await scanTransfer(other.actualAmount, { to: 'fake:wallet-2' }))!
    await assert.rejects(
      () => service.assign(toOther.id, other.tradeId),
      /sent to fake:wallet-2, the order waits on fake:wallet-1/
    )

    assert.equal((await Order.findOrFail(other.id)).status, 1)
    assert.equal(await countRows('payment_references'), 0)
    assert.equal(await service.openCount(), 4)
    assert.deepEqual(await auditActions(), ['token.create'])
  })

  test('refused: orders that mark-paid refuses (paid, placeholder, unknown), unknown and dismissed rows', async ({
    client,
    assert,
  }) => {
    const { order, payment } = await latePayment(await newOrder(client))
    const service = unmatchedPaymentAdmin
    const paid = await newOrder(client)
    await paymentService.markPaid(paid.id, { reference: '0xother', source: 'scanner' })
    await assert.rejects(
      () => service.assign(payment.id, paid.tradeId),
      /has status 2; only 1 or 3 can be repaired/
    )
    const placeholder = await newPlaceholder(client)
    await assert.rejects(
      () => service.assign(payment.id, placeholder.tradeId),
      /is not an on-chain order/
    )
    await assert.rejects(
      () => service.assign(payment.id, 'NoSuchTrade'),
      /No order with trade_id NoSuchTrade/
    )
    await assert.rejects(
      () => service.assign(999_999, order.tradeId),
      /No unmatched payment #999999/
    )

    await service.dismiss(payment.id, 'refunded to the payer')
    await assert.rejects(() => service.assign(payment.id, order.tradeId), /was dismissed/)
    assert.equal((await Order.findOrFail(order.id)).status, 3)
  })

  test('refused when the chain does not confirm it, or its reference already paid an order', async ({
    client,
    assert,
  }) => {
    const { order, payment } = await latePayment(await newOrder(client))
    const service = unmatchedPaymentAdmin
    fakeFamily.transactions.delete(payment.reference)
    await assert.rejects(
      () => service.assign(payment.id, order.tradeId),
      /Transaction check failed: transaction .* not found/
    )
    assert.equal((await service.find(payment.id))!.state, 'open')

    fakeTransfer(payment.reference, payment.amount)
    const another = await newOrder(client)
    await db.table('payment_references').insert({
      network: FAKE_NETWORK,
      reference: payment.reference,
      order_id: another.id,
      source: 'scanner',
      created_at: Date.now(),
    })
    await assert.rejects(
      () => service.assign(payment.id, order.tradeId),
      /already paid another order \(10007\)/
    )
    assert.equal((await Order.findOrFail(order.id)).status, 3)
    assert.equal((await service.find(payment.id))!.state, 'open')
    assert.deepEqual(await auditActions(), [])
  })

  test('settled by someone else while the chain was asked: the payment is undone', async ({
    client,
    assert,
  }) => {
    const { order, payment } = await latePayment(await newOrder(client))
    const verify = fakeFamily.verifyReference.bind(fakeFamily)
    fakeFamily.verifyReference = async (reference, context) => {
      await db
        .from('unmatched_payments')
        .where('id', payment.id)
        .update({ dismissed_at: Date.now(), dismiss_note: 'x' })
      return verify(reference, context)
    }
    try {
      await assert.rejects(
        () => unmatchedPaymentAdmin.assign(payment.id, order.tradeId),
        /was settled meanwhile/
      )
    } finally {
      fakeFamily.verifyReference = verify
    }
    assert.equal((await Order.findOrFail(order.id)).status, 3)
    assert.equal(await countRows('payment_references'), 0)
    assert.equal(await countRows('callbacks'), 0)
    assert.deepEqual(await auditActions(), [])
  })
})

test.group('Unmatched payments: dismiss', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await emptyAuditLog()
  })

  test('with a note: stored with who and when, audited; twice refused', async ({
    client,
    assert,
  }) => {
    const { payment } = await latePayment(await newOrder(client))
    const before = Date.now()
    await actingAs(ADMIN, async () =>
      unmatchedPaymentAdmin.dismiss(payment.id, '  refunded to the payer on 2 May  ')
    )
    const row = (await unmatchedPaymentAdmin.find(payment.id))!
    assert.include(row, {
      state: 'dismissed',
      dismissedBy: 'admin@example.com',
      dismissNote: 'refunded to the payer on 2 May',
    })
    assert.isAtLeast(row.dismissedAt!, before)
    const [audit] = await db.from('audit_log').where('action', 'unmatched.dismiss')
    assert.include(audit, { subject_id: String(payment.id), actor: 'admin@example.com' })
    assert.deepEqual(JSON.parse(audit.after), {
      state: 'dismissed',
      note: 'refunded to the payer on 2 May',
    })
    await assert.rejects(() => unmatchedPaymentAdmin.dismiss(payment.id, 'again'), /was dismissed/)
  })

  test('refused without a note, with a note too long, or for an unknown row', async ({
    client,
    assert,
  }) => {
    const { payment } = await latePayment(await newOrder(client))
    const service = unmatchedPaymentAdmin
    await assert.rejects(() => service.dismiss(payment.id, '   '), OperatorError)
    await assert.rejects(() => service.dismiss(payment.id, ''), /a note is required/)
    await assert.rejects(
      () => service.dismiss(payment.id, 'x'.repeat(501)),
      /at most 500 characters/
    )
    await assert.rejects(() => service.dismiss(424242, 'note'), /No unmatched payment #424242/)
    assert.equal((await service.find(payment.id))!.state, 'open')
    assert.deepEqual(await auditActions(), [])
  })
})
