import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import Chain from '#models/chain'
import { OrderStatus } from '#models/order'
import settings from '#settings/settings_service'
import { Decimal, stepOf, toDecimalString } from '#support/money'
import { insertUnlessPresent } from '#support/insert_unless_present'

export type AllocationRequest = {
  orderId: number
  network: string
  token: string
  addresses: string[]
  /** Wanted amount, already rounded to `precision`. */
  baseAmount: Decimal
  precision: number
  maxSteps: number
  /**
   * The chain's reservation grace (reservationGraceMs), read by the caller
   * before its transaction: on SQLite a settings read inside it would wait
   * for the one connection the transaction holds.
   */
  graceMs: number
  /** End of the order's life: the reservation outlives it by the chain's grace. */
  expiresAt: number
}

export type Allocation = { address: string; amount: string }

type Range = { token: string; addresses: string[]; lowest: string; highest: string }

/**
 * How long a reservation outlives its order on `chain`: long enough for a
 * transfer made in the order's last second to be confirmed (confirmations ×
 * block time), seen by the next scan (scan interval), plus the operator's
 * margin for slow wallets, congested mempools and lagging indexes.
 */
export async function reservationGraceMs(chain: Pick<Chain, 'confirmations' | 'blockTimeMs' | 'scanIntervalSeconds'>) {
  const margin = await settings.get('order.late_payment_margin_seconds')
  return chain.confirmations * chain.blockTimeMs + chain.scanIntervalSeconds * 1000 + margin * 1000
}

/**
 * Reserves a unique (address, amount) pair for a waiting order, so that an
 * incoming transfer identifies exactly one order.
 *
 * The wanted amount is tried on every enabled wallet; when it is taken on
 * all of them, one step (10^-precision) is added, up to `maxSteps` amounts,
 * then 10005. Uniqueness is the database's: the unique index on the locks
 * decides, through INSERT … ON CONFLICT DO NOTHING, so concurrent requests in
 * any number of processes never share a pair. The read of the already-taken
 * pairs only spares attempts that would certainly conflict.
 *
 * A lock is NOT removed when its order expires or is closed: it stays until
 * the order's end of life (`expires_at`) plus the chain's grace, so a payer
 * who pays at the last second can never pay a newer order that was handed
 * the same amount on the same address. Only a paid order's lock goes at once
 * (its transfer has been found). Reservations past their grace are reclaimed
 * by the expiry job, and on the spot by an allocation that finds no free pair.
 */
export class AmountAllocator {
  async allocate(trx: TransactionClientContract, request: AllocationRequest): Promise<Allocation> {
    const step = stepOf(request.precision)
    const range: Range = {
      token: request.token,
      addresses: request.addresses,
      lowest: request.baseAmount.toFixed(),
      highest: request.baseAmount.plus(step.multipliedBy(request.maxSteps - 1)).toFixed(),
    }
    const found = await this.#tryAllocate(trx, request, range)
    if (found) return found
    if ((await this.#reclaim(trx, request.network, Date.now() - request.graceMs, range)) > 0) {
      const retried = await this.#tryAllocate(trx, request, range)
      if (retried) return retried
    }
    throw new BusinessError(
      ErrorCode.NO_AMOUNT_CHANNEL,
      `No available amount channel: ${request.maxSteps} amounts from ${toDecimalString(request.baseAmount)} ${request.token} are all reserved on every ${request.network} wallet (waiting orders, or orders ended less than the late-payment grace ago)`
    )
  }

  async #tryAllocate(trx: TransactionClientContract, request: AllocationRequest, range: Range): Promise<Allocation | null> {
    const step = stepOf(request.precision)
    const takenRows: { address: string; amount: string | number }[] = await trx
      .from('amount_locks')
      .where('network', request.network)
      .where('token', range.token)
      .whereIn('address', range.addresses)
      .where('amount', '>=', range.lowest)
      .where('amount', '<=', range.highest)
      .select('address', 'amount')
    const taken = new Set(takenRows.map((row) => `${row.address}|${toDecimalString(row.amount)}`))

    // Start at a different wallet each time to spread orders over wallets.
    const offset = request.orderId % request.addresses.length
    const addresses = [...request.addresses.slice(offset), ...request.addresses.slice(0, offset)]

    for (let index = 0; index < request.maxSteps; index++) {
      const amount = toDecimalString(request.baseAmount.plus(step.multipliedBy(index)))
      for (const address of addresses) {
        if (taken.has(`${address}|${amount}`)) continue
        const { inserted } = await insertUnlessPresent(
          trx,
          'amount_locks',
          {
            network: request.network,
            address,
            token: request.token,
            amount,
            order_id: request.orderId,
            expires_at: request.expiresAt,
            created_at: Date.now(),
          },
          ['network', 'address', 'token', 'amount']
        )
        if (inserted) return { address, amount }
      }
    }
    return null
  }

  /** A paid order's lock goes at once (a no-op for orders without one). */
  async release(client: TransactionClientContract, orderIds: number | number[]) {
    const ids = Array.isArray(orderIds) ? orderIds : [orderIds]
    if (ids.length > 0) await client.from('amount_locks').whereIn('order_id', ids).delete()
  }

  /**
   * A closed order's life ends now: its reservation counts its grace from
   * `at` instead of the expiration the order was created with.
   */
  async endLife(client: TransactionClientContract, orderIds: number[], at: number) {
    if (orderIds.length > 0) {
      await client.from('amount_locks').whereIn('order_id', orderIds).where('expires_at', '>', at).update({ expires_at: at })
    }
  }

  /**
   * Deletes the reservations whose grace has passed on every chain; returns
   * how many. Run by the expiry job.
   */
  async reclaimExpired(now = Date.now()): Promise<number> {
    const networks: { network: string }[] = await db.from('amount_locks').distinct('network')
    let total = 0
    for (const { network } of networks) {
      // a network removed from the chains table keeps its locks (no grace can be computed)
      const chain = await Chain.findBy('network', network)
      if (chain) total += await this.#reclaim(db.connection(), network, now - (await reservationGraceMs(chain)))
    }
    return total
  }

  /**
   * Deletes the locks of `network` whose order's life ended before
   * `cutoff` (now − grace). Only locks of expired (3) orders are reclaimed:
   * an order still shown as waiting keeps its amount whatever the clock says.
   */
  async #reclaim(client: QueryClientContract, network: string, cutoff: number, range?: Range): Promise<number> {
    const query = client
      .from('amount_locks')
      .where('network', network)
      .where('expires_at', '<', cutoff)
      .whereExists((orders) =>
        orders
          .from('orders')
          .whereColumn('orders.id', 'amount_locks.order_id')
          .where('orders.status', OrderStatus.EXPIRED)
          .select(client.raw('1'))
      )
    if (range) {
      query
        .where('token', range.token)
        .whereIn('address', range.addresses)
        .where('amount', '>=', range.lowest)
        .where('amount', '<=', range.highest)
    }
    const deleted = await query.delete()
    return Number(Array.isArray(deleted) ? deleted.length : deleted)
  }
}

const amountAllocator = new AmountAllocator()
export default amountAllocator
