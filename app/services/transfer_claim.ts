import Order, { OrderStatus } from '#models/order'
import type { ModelQueryBuilderContract } from '@adonisjs/lucid/types/model'
import type Token from '#models/token'
import { BLOCK_TIME_SKEW_MS, type ObservedTransfer } from '#chains/chain_family'
import { Decimal } from '#support/text/money'

/** Which order a transfer claims, and what the decision looked at. */
export type TransferClaim = {
  /** The order the transfer pays (or would pay, once deep enough); null: none. */
  claimant: Order | null
  /** The on-chain orders for that address and token whose life contained the transfer, earliest first. */
  candidates: Order[]
  /** Orders for that address and token created before the transfer (any amount, any end of life). */
  onAddress: () => ModelQueryBuilderContract<typeof Order>
}

/**
 * The one rule deciding which order a transfer is for, shared by the matcher
 * (which pays it) and the sightings (which only say "seen, confirming").
 * Time decides, not status: the order on that network, address and token
 * for exactly that amount whose life contained the transfer's block time
 * (created_at − skew ≤ time ≤ expiration_time), whether it is still
 * waiting, has expired or been closed since, or is already paid. Where two
 * orders could claim it, the earlier one wins, even when it is already paid.
 */
export async function claimOf(
  network: string,
  token: Token,
  transfer: ObservedTransfer
): Promise<TransferClaim> {
  const onAddress = (): ModelQueryBuilderContract<typeof Order> =>
    Order.query()
      .where('network', network)
      .where('receive_address', transfer.to)
      .where('token', token.symbol)
      .where('pay_provider', '')
      .whereIn('status', [OrderStatus.WAITING, OrderStatus.PAID, OrderStatus.EXPIRED])
      .where('created_at', '<=', transfer.timestamp + BLOCK_TIME_SKEW_MS)
  const candidates = await onAddress()
    .where('expiration_time', '>=', transfer.timestamp)
    .orderBy('created_at', 'asc')
    .orderBy('id', 'asc')
  const amount = new Decimal(transfer.amount)
  const claimant = candidates.find((order) => new Decimal(order.actualAmount).eq(amount)) ?? null
  return { claimant, candidates, onAddress }
}
