import db from '@adonisjs/lucid/services/db'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import { OrderStatus } from '#models/order'
import { isPostgres } from '#support/database/row_lock'
import amountAllocator from '#services/amount_allocator'
import { metrics } from '#support/runtime/metrics'

type EndedRow = { id: number | string; network: string | null; token: string | null }

/** Counts ended orders (gateway_orders_expired_total) once their transaction commits. */
function countEnded(trx: TransactionClientContract, rows: EndedRow[]) {
  if (rows.length === 0) return
  trx.after('commit', async () => {
    for (const row of rows)
      metrics.ordersExpired.inc({ network: row.network ?? '', token: row.token ?? '' })
  })
}

const BATCH = 500

/**
 * Expires orders past their expiration_time: status 1 or 4 → 3, pending
 * provider payments marked expired. A parent and its child share their
 * expiration time, so they expire together. Amount locks are kept: they are
 * reclaimed once the chain's late-payment grace has passed (see
 * AmountAllocator), which this job also does.
 *
 * Safe in several processes: the status change is conditional (only rows
 * still in 1 or 4 change), and on PostgreSQL rows another worker is
 * expiring are skipped (FOR UPDATE SKIP LOCKED) rather than waited for.
 * A transfer made within an expired order's life and detected late still
 * pays it (see PaymentMatcher).
 */
export class OrderExpiry {
  /** `onBatch` is told the running total after each batch (a command's progress line). */
  async expireDue(now = Date.now(), onBatch?: (expired: number) => void): Promise<number> {
    let total = 0
    for (;;) {
      const expired = await this.#expireBatch(now)
      total += expired
      onBatch?.(total)
      if (expired < BATCH) break
    }
    await amountAllocator.reclaimExpired(now)
    return total
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

      const rows: EndedRow[] = await trx
        .knexQuery()
        .table('orders')
        .whereIn('id', due)
        .whereIn('status', [OrderStatus.WAITING, OrderStatus.SELECTING])
        .update({ status: OrderStatus.EXPIRED, updated_at: now })
        .returning(['id', 'network', 'token'])
      const ids = rows.map((row) => Number(row.id))
      countEnded(trx, rows)
      await this.#releaseExpired(trx, ids, now)
      return ids.length
    })
  }

  /**
   * Closes the given orders now if they are still open (backend closure, or
   * the other target of a paid parent): their life ends now, so a transfer
   * made from now on can no longer pay them, and their amount reservation
   * counts its grace from now. Returns how many were open.
   */
  async closeOrders(
    trx: TransactionClientContract,
    ids: number[],
    now = Date.now()
  ): Promise<number> {
    if (ids.length === 0) return 0
    const rows: EndedRow[] = await trx
      .knexQuery()
      .table('orders')
      .whereIn('id', ids)
      .whereIn('status', [OrderStatus.WAITING, OrderStatus.SELECTING])
      .update({ status: OrderStatus.EXPIRED, updated_at: now })
      .returning(['id', 'network', 'token'])
    const closed = rows.map((row) => Number(row.id))
    countEnded(trx, rows)
    if (closed.length > 0) {
      await trx
        .from('orders')
        .whereIn('id', closed)
        .where('expiration_time', '>', now)
        .update({ expiration_time: now })
    }
    await amountAllocator.endLife(trx, closed, now)
    await this.#releaseExpired(trx, closed, now)
    return closed.length
  }

  /** An expired order's pending provider payment is let go. */
  async #releaseExpired(trx: TransactionClientContract, ids: number[], now: number) {
    if (ids.length === 0) return
    await trx
      .from('provider_orders')
      .whereIn('order_id', ids)
      .where('status', 'pending')
      .update({ status: 'expired', updated_at: now })
  }
}

const orderExpiry = new OrderExpiry()
export default orderExpiry
