import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import Order, { OrderStatus } from '#models/order'
import type Chain from '#models/chain'
import type Token from '#models/token'
import { BLOCK_TIME_SKEW_MS, type ObservedTransfer } from '#chains/chain_family'
import paymentService from '#services/payment_service'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import { Decimal } from '#support/money'

export type MatchOutcome = 'paid' | 'already' | 'unmatched' | 'ignored'

/**
 * Turns an observed transfer into a payment: the order waiting on that
 * network, address and token for exactly that amount, whose life contains
 * the transfer's time (created_at ≤ time ≤ expiration_time). An expired
 * order still matches when the transfer was made in time (late detection).
 * A transfer that pays nothing is kept as an unmatched payment.
 */
export class PaymentMatcher {
  async handle(chain: Chain, tokens: Token[], transfer: ObservedTransfer): Promise<MatchOutcome> {
    const token = tokens.find((entry) => entry.contract === transfer.contract)
    if (!token || !transfer.success) return 'ignored'

    const used = await db
      .from('payment_references')
      .where('network', chain.network)
      .where('reference', transfer.reference)
      .first()
    if (used) return 'already'

    const amount = new Decimal(transfer.amount)
    const candidates = await Order.query()
      .where('network', chain.network)
      .where('receive_address', transfer.to)
      .where('token', token.symbol)
      .where('pay_provider', '')
      .whereIn('status', [OrderStatus.WAITING, OrderStatus.EXPIRED])
      .where('created_at', '<=', transfer.timestamp + BLOCK_TIME_SKEW_MS)
      .where('expiration_time', '>=', transfer.timestamp)
      .orderBy('status', 'asc')
      .orderBy('created_at', 'desc')
    const matching = candidates.filter((order) => new Decimal(order.actualAmount).eq(amount))

    for (const order of matching) {
      try {
        await paymentService.markPaid(order.id, {
          reference: transfer.reference,
          source: 'scanner',
          paidAt: transfer.timestamp,
        })
        logger.info(
          { network: chain.network, trade_id: order.tradeId, reference: transfer.reference, amount: transfer.amount },
          order.status === OrderStatus.EXPIRED ? 'late payment detected' : 'payment detected'
        )
        return 'paid'
      } catch (error) {
        if (!(error instanceof BusinessError)) throw error
        if (error.businessCode === ErrorCode.BLOCK_PROCESSED) return 'already'
        // paid meanwhile by another reference: try the next candidate, if any
      }
    }

    const reason =
      matching.length > 0
        ? 'the matching order was already paid'
        : candidates.length > 0
          ? `no order waits for ${amount.toFixed()} ${token.symbol} on this address at that time`
          : `no order waits on this address for ${token.symbol} at that time`
    await this.#recordUnmatched(chain, token, transfer, reason)
    return 'unmatched'
  }

  async #recordUnmatched(chain: Chain, token: Token, transfer: ObservedTransfer, reason: string) {
    const inserted: unknown[] = await db
      .connection()
      .knexQuery()
      .table('unmatched_payments')
      .insert({
        network: chain.network,
        reference: transfer.reference,
        to_address: transfer.to,
        token: token.symbol,
        amount: new Decimal(transfer.amount).toFixed(),
        transfer_time: transfer.timestamp,
        reason,
        detected_at: Date.now(),
      })
      .onConflict(['network', 'reference', 'to_address', 'token'])
      .ignore()
      .returning('id')
    if (inserted.length > 0) {
      logger.warn(
        { network: chain.network, reference: transfer.reference, to: transfer.to, amount: transfer.amount, reason },
        'unmatched payment recorded'
      )
    }
  }
}

const paymentMatcher = new PaymentMatcher()
export default paymentMatcher
