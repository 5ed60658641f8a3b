import { inject } from '@adonisjs/core'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import Order, { OrderStatus } from '#models/order'
import BusinessError from '#exceptions/business_error'
import transferVerifier from '#services/transfer_verifier'
import paymentService, { type PaymentOutcome } from '#services/payment_service'
import { AuditLog } from '#services/audit/audit_log'
import { OperatorError } from '#support/operator_error'

export type ManualPaymentResult = PaymentOutcome & { reference: string }

/**
 * An operator pays an on-chain order by hand with a transaction reference
 * (`orders:mark-paid`, the console's mark paid, and assigning an unmatched
 * payment to its order): the order must be waiting or expired, the chain
 * plugin must confirm the transfer to the order's address, of its token,
 * for its exact amount, made after the order was created and confirmed
 * (transfer_verifier.ts, `admin` mode: a late payment is accepted), and
 * the payment path refuses a reference that already paid another order.
 * Audited with the payment, in its transaction.
 */
@inject()
export class ManualPayment {
  constructor(protected audit: AuditLog) {}

  /** The order an operator may pay by hand, or an OperatorError saying why not. */
  async repairable(tradeId: string): Promise<Order> {
    const order = await Order.findBy('trade_id', tradeId.trim())
    if (!order) throw new OperatorError(`No order with trade_id ${tradeId}`)
    if (!order.isOnChain) throw new OperatorError(`Order ${order.tradeId} is not an on-chain order`)
    if (order.status !== OrderStatus.WAITING && order.status !== OrderStatus.EXPIRED) {
      throw new OperatorError(`Order ${order.tradeId} has status ${order.status}; only 1 or 3 can be repaired`)
    }
    return order
  }

  /** orders:mark-paid: pays the order `tradeId` with the verified transfer `reference`. */
  async markPaid(tradeId: string, reference: string): Promise<ManualPaymentResult> {
    return this.pay(await this.repairable(tradeId), reference)
  }

  /**
   * Verifies `reference` against `order` on chain and pays it through the
   * payment path. `alongside` runs in the payment's transaction (see
   * PaymentRequest.alongside).
   */
  async pay(
    order: Order,
    reference: string,
    alongside?: (trx: TransactionClientContract, outcome: PaymentOutcome) => Promise<void>
  ): Promise<ManualPaymentResult> {
    try {
      const transfer = await transferVerifier.verify(order, reference, 'admin')
      const before = { status: order.status, blockTransactionId: order.blockTransactionId }
      const outcome = await paymentService.markPaid(order.id, {
        reference: transfer.reference,
        source: 'admin',
        paidAt: transfer.timestamp,
        alongside: async (trx, paid) => {
          if (!paid.alreadyPaid) {
            await this.audit.record(
              {
                action: 'order.mark_paid',
                subjectType: 'order',
                subjectId: order.tradeId,
                before,
                after: { status: paid.order.status, blockTransactionId: transfer.reference, paidAt: paid.order.paidAt },
              },
              trx
            )
          }
          if (alongside) await alongside(trx, paid)
        },
      })
      return { ...outcome, reference: transfer.reference }
    } catch (error) {
      if (error instanceof BusinessError) throw new OperatorError(`${error.message} (${error.businessCode})`)
      throw error
    }
  }
}
