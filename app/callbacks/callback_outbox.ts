import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import type Order from '#models/order'
import callbackFormats from '#callbacks/callback_format'
import { callbackDelivery } from '#callbacks/delivery_loop'

/** Rows changed per statement by requeueMany (well under either engine's bound-parameter limit). */
const REQUEUE_CHUNK = 500

/**
 * Writes the merchant callback of a paid order, inside the transaction
 * that marks it paid: the payment and the duty to tell the merchant are
 * committed together, so a crash can lose neither.
 */
export class CallbackOutbox {
  async enqueue(trx: TransactionClientContract, order: Order) {
    const now = Date.now()
    await trx
      .knexQuery()
      .table('callbacks')
      .insert({
        order_id: order.id,
        format: callbackFormats.nameFor(order),
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        last_error: '',
        created_at: now,
        updated_at: now,
      })
      .onConflict('order_id')
      .ignore()
    await trx
      .from('orders')
      .where('id', order.id)
      .update({ callback_status: 'pending', updated_at: now })
    // Sent as soon as the payment is committed, not at the next poll (nothing is sent if it rolls back).
    trx.after('commit', () => callbackDelivery.wake())
  }

  /**
   * Sends a callback again from the start (operator's redeliver), whether
   * it was delivered, failed or never queued.
   */
  async requeue(trx: TransactionClientContract, order: Order) {
    await this.enqueue(trx, order)
    await this.requeueMany(trx, [order.id])
  }

  /**
   * requeue() for many orders whose callback is already in the outbox (an
   * operator's batch redelivery): each sent again from a fresh budget.
   */
  async requeueMany(trx: TransactionClientContract, orderIds: number[]) {
    const now = Date.now()
    for (let start = 0; start < orderIds.length; start += REQUEUE_CHUNK) {
      const chunk = orderIds.slice(start, start + REQUEUE_CHUNK)
      await trx.from('callbacks').whereIn('order_id', chunk).update({
        status: 'pending',
        attempts: 0,
        next_attempt_at: now,
        locked_by: null,
        locked_until: null,
        last_error: '',
        updated_at: now,
      })
      await trx
        .from('orders')
        .whereIn('id', chunk)
        .update({ callback_status: 'pending', callback_attempts: 0, updated_at: now })
    }
    trx.after('commit', () => callbackDelivery.wake())
  }
}

const callbackOutbox = new CallbackOutbox()
export default callbackOutbox
