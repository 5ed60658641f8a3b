import logger from '@adonisjs/core/services/logger'
import type Order from '#models/order'
import { OrderStatus } from '#models/order'
import type { ModelQueryBuilderContract } from '@adonisjs/lucid/types/model'
import type Chain from '#models/chain'
import type Token from '#models/token'
import type { ObservedTransfer, UnreadableTransfer } from '#chains/chain_family'
import paymentService from '#services/payment_service'
import { claimOf } from '#services/transfer_claim'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import { Decimal } from '#support/text/money'
import { usedReference } from '#services/transfer_references'
import { recordUnmatched } from '#services/unmatched_inbox'
import reorgFlags from '#services/reorg_flags'

export type MatchOutcome = 'paid' | 'already' | 'unmatched' | 'ignored'

/**
 * Turns an observed transfer into a payment. Time decides, not status (the
 * rule lives in transfer_claim.ts, shared with the sightings): the
 * transfer pays the order, on that network, address and token for exactly
 * that amount, whose life contained the transfer's block time
 * (created_at − skew ≤ time ≤ expiration_time), whether that order is still
 * waiting or has expired or been closed since (late detection: it is
 * credited late, and the merchant is called back). Where two orders could
 * claim it, the earlier one wins; when that one is already paid by another
 * transfer, this transfer pays nothing (never the newer order).
 *
 * A transfer that pays nothing (wrong amount, made after the order's life
 * ended, order already paid) is kept as an unmatched payment for the
 * operator, with the reason.
 */
export class PaymentMatcher {
  async handle(chain: Chain, tokens: Token[], transfer: ObservedTransfer): Promise<MatchOutcome> {
    const token = tokens.find((entry) => entry.contract === transfer.contract)
    if (!token || !transfer.success) return 'ignored'

    const used = await usedReference(chain.network, transfer.reference, transfer.position)
    if (used) {
      // Seen again after a reorganisation flagged its payment: where it is now is recorded.
      if (used.reorged_at !== null) await reorgFlags.foundAgain(chain, used, transfer)
      return 'already'
    }

    const amount = new Decimal(transfer.amount)
    const { claimant, candidates, onAddress } = await claimOf(chain.network, token, transfer)

    if (claimant && claimant.status !== OrderStatus.PAID) {
      try {
        await paymentService.markPaid(claimant.id, {
          reference: transfer.reference,
          position: transfer.position,
          block: transfer.block,
          source: 'scanner',
          paidAt: transfer.timestamp,
        })
        logger.info(
          {
            network: chain.network,
            trade_id: claimant.tradeId,
            reference: transfer.reference,
            amount: transfer.amount,
          },
          claimant.status === OrderStatus.EXPIRED ? 'late payment detected' : 'payment detected'
        )
        return 'paid'
      } catch (error) {
        if (!(error instanceof BusinessError)) throw error
        if (error.businessCode === ErrorCode.BLOCK_PROCESSED) return 'already'
        // paid meanwhile by another reference: this one pays nothing
      }
    }

    const reason = claimant
      ? `the order it was made for (${claimant.tradeId}) is already paid by another transfer`
      : await this.#whyNoClaimant(
          onAddress,
          amount,
          token.symbol,
          transfer.timestamp,
          candidates.length > 0
        )
    await recordUnmatched(chain.network, {
      reference: transfer.reference,
      position: transfer.position,
      kind: 'transfer',
      to: transfer.to,
      token: token.symbol,
      amount: new Decimal(transfer.amount).toFixed(),
      timestamp: transfer.timestamp,
      reason,
    })
    return 'unmatched'
  }

  /**
   * A transaction to a watched address the family could not read: kept as
   * unmatched with the family's reason (once per reference and address),
   * never passed over, so that the operator can look at it. Its amount is
   * unknown (stored as ""); its token is the watched token of that
   * contract when the family knew it, else "?". True when newly recorded.
   */
  async recordUnreadable(
    chain: Chain,
    tokens: Token[],
    unreadable: UnreadableTransfer
  ): Promise<boolean> {
    const token = tokens.find((entry) => entry.contract === unreadable.contract)
    return recordUnmatched(chain.network, {
      reference: unreadable.reference,
      position: '',
      kind: 'unreadable',
      to: unreadable.to,
      token: token?.symbol ?? '?',
      amount: '',
      timestamp: unreadable.timestamp,
      reason: `unreadable transaction: ${unreadable.reason}`,
    })
  }

  /** Tells the operator why a transfer paid nothing, naming a late order's trade_id. */
  async #whyNoClaimant(
    onAddress: () => ModelQueryBuilderContract<typeof Order>,
    amount: Decimal,
    symbol: string,
    time: number,
    othersWaiting: boolean
  ): Promise<string> {
    const ended = await onAddress()
      .where('expiration_time', '<', time)
      .orderBy('expiration_time', 'desc')
      .limit(20)
    const late = ended.find((order) => new Decimal(order.actualAmount).eq(amount))
    if (late) {
      return `made after the life of order ${late.tradeId} ended (${new Date(late.expirationTime).toISOString()}): not credited, for the operator to assign or refund`
    }
    return othersWaiting
      ? `no order waits for ${amount.toFixed()} ${symbol} on this address at that time`
      : `no order waits on this address for ${symbol} at that time`
  }
}

const paymentMatcher = new PaymentMatcher()
export default paymentMatcher
