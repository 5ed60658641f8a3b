import type { ApiClient } from '@japa/api-client'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Order from '#models/order'
import UnmatchedPayment from '#models/unmatched_payment'
import chainScanner from '#services/chain_scanner'
import orderExpiry from '#services/order_expiry'
import reorgFlags from '#services/reorg_flags'
import { newOrder } from '#tests/helpers/orders'
import { FAKE_NETWORK, fakeFamily, fakeTransfer } from '#tests/helpers/fake_chain'

/**
 * Payments the unmatched inbox keeps, each written by the code that writes
 * it in production (the expiry job and the scanner, the reorganisation flags)
 * on the fake chain.
 */

/** Ends the order's life 1 s ago and runs the expiry job; the order as it is then. */
export async function expireOrder(order: Order): Promise<Order> {
  await db
    .from('orders')
    .where('id', order.id)
    .update({ expiration_time: Date.now() - 1000 })
  await orderExpiry.expireDue()
  return Order.findOrFail(order.id)
}

/**
 * An order whose life ended, then a transfer of its amount (`reference`):
 * kept as unmatched by the scanner (kind `transfer`, position log:0).
 */
export async function latePayment(
  client: ApiClient,
  reference: string
): Promise<{ order: Order; payment: UnmatchedPayment }> {
  const order = await expireOrder(await newOrder(client))
  fakeFamily.pending = [fakeTransfer(reference, order.actualAmount)]
  await chainScanner.scan({ network: FAKE_NETWORK })
  const payment = await UnmatchedPayment.findByOrFail('reference', reference)
  return { order: await Order.findOrFail(order.id), payment }
}

/**
 * An order paid by `reference` (log:3) in block 120, which a reorganisation
 * then replaced (from 100 up to 130): the notice of kind `reorged` naming
 * the order, as its row.
 */
export async function reorgedPayment(client: ApiClient, reference: string) {
  const order = await newOrder(client)
  fakeFamily.pending = [
    fakeTransfer(reference, order.actualAmount, {
      position: 'log:3',
      block: { number: '120', hash: `0x${'c3'.repeat(32)}` },
    }),
  ]
  await chainScanner.scan({ network: FAKE_NETWORK })
  await reorgFlags.flag(await Chain.findByOrFail('network', FAKE_NETWORK), {
    ancestor: '100',
    replacedUpTo: '130',
  })
  return { order: await Order.findOrFail(order.id), row: await reorgNotice(reference) }
}

/** The row of the `reorged` notice the reorganisation flags left for the payment `reference`. */
export function reorgNotice(reference: string) {
  return db
    .from('unmatched_payments')
    .where('reference', reference)
    .where('kind', 'reorged')
    .first()
}
