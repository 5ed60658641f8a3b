import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
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
  expiresAt: number
}

export type Allocation = { address: string; amount: string }

/**
 * Reserves a unique (address, amount) pair for a waiting order, so that an
 * incoming transfer identifies exactly one order.
 *
 * The wanted amount is tried on every enabled wallet; when it is taken on
 * all of them, one step (10^-precision) is added, up to `maxSteps` amounts,
 * then 10005. Uniqueness is the database's: the unique index on active
 * locks decides, through INSERT … ON CONFLICT DO NOTHING, so concurrent
 * requests in any number of processes never share a pair. The read of the
 * already-taken pairs only spares attempts that would certainly conflict.
 */
export class AmountAllocator {
  async allocate(trx: TransactionClientContract, request: AllocationRequest): Promise<Allocation> {
    const step = stepOf(request.precision)
    const highest = request.baseAmount.plus(step.multipliedBy(request.maxSteps - 1))
    const takenRows: { address: string; amount: string | number }[] = await trx
      .from('amount_locks')
      .where('network', request.network)
      .where('token', request.token)
      .whereIn('address', request.addresses)
      .where('amount', '>=', request.baseAmount.toFixed())
      .where('amount', '<=', highest.toFixed())
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
    throw new BusinessError(
      ErrorCode.NO_AMOUNT_CHANNEL,
      `No available amount channel: ${request.maxSteps} amounts from ${toDecimalString(request.baseAmount)} ${request.token} are all waiting for payment on every ${request.network} wallet`
    )
  }

  /** Releases the locks of orders (a no-op for those without one). */
  async release(client: TransactionClientContract, orderIds: number | number[]) {
    const ids = Array.isArray(orderIds) ? orderIds : [orderIds]
    if (ids.length > 0) await client.from('amount_locks').whereIn('order_id', ids).delete()
  }
}

const amountAllocator = new AmountAllocator()
export default amountAllocator
