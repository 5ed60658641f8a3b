import db from '@adonisjs/lucid/services/db'
import { OrderStatus } from '#models/order'
import { isPostgres } from '#support/row_lock'

const BATCH = 500

/**
 * Expires orders past their expiration_time: status 1 or 4 → 3, amount
 * locks released, pending provider payments marked expired. A parent and
 * its child share their expiration time, so they expire together.
 *
 * Safe in several processes: the status change is conditional (only rows
 * still in 1 or 4 change), and on PostgreSQL rows another worker is
 * expiring are skipped (FOR UPDATE SKIP LOCKED) rather than waited for.
 * A late payment of an expired order is still accepted by the payment path.
 */
export class OrderExpiry {
  async expireDue(now = Date.now()): Promise<number> {
    let total = 0
    for (;;) {
      const expired = await this.#expireBatch(now)
      total += expired
      if (expired < BATCH) return total
    }
  }

  async #expireBatch(now: number): Promise<number> {
    return db.transaction(async (trx) => {
      const due = trx
        .knexQuery()
        .from('orders')
        .whereIn('status', [OrderStatus.WAITING, OrderStatus.SELECTING])
        .where('expiration_time', '<', now)
        .orderBy('expiration_time')
        .limit(BATCH)
        .select('id')
      if (isPostgres(trx)) due.forUpdate().skipLocked()

      const rows: { id: number | string }[] = await trx
        .knexQuery()
        .table('orders')
        .whereIn('id', due)
        .whereIn('status', [OrderStatus.WAITING, OrderStatus.SELECTING])
        .update({ status: OrderStatus.EXPIRED, updated_at: now })
        .returning('id')
      const ids = rows.map((row) => Number(row.id))
      if (ids.length === 0) return 0

      await trx.from('amount_locks').whereIn('order_id', ids).delete()
      await trx
        .from('provider_orders')
        .whereIn('order_id', ids)
        .where('status', 'pending')
        .update({ status: 'expired', updated_at: now })
      return ids.length
    })
  }
}

const orderExpiry = new OrderExpiry()
export default orderExpiry
