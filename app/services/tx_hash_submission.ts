import type Order from '#models/order'
import { orderByTradeId } from '#services/order_lookup'
import { assertOpen } from '#services/order_rules'
import transferVerifier from '#services/transfer_verifier'
import paymentService from '#services/payment_service'
import BusinessError from '#exceptions/business_error'

/**
 * POST /pay/submit-tx-hash: the payer reports the transaction that paid an
 * order. The order's rules are checked before any chain call (a provider
 * order has no hash; the order must be on chain, waiting and not past its
 * life); then the family verifies the transfer against the order and the
 * payment path records it, once.
 */
export class TxHashSubmission {
  async submit(tradeId: string, reference: string): Promise<Order> {
    const order = await orderByTradeId(tradeId)
    if (order.isProviderOrder) {
      throw BusinessError.parameter('Provider orders are paid on the provider page; there is no hash to submit')
    }
    assertOpen(order, 'submit')

    const transfer = await transferVerifier.verify(order, reference, 'submit')
    const outcome = await paymentService.markPaid(order.id, {
      reference: transfer.reference,
      position: transfer.position,
      block: transfer.block,
      source: 'submit',
      paidAt: transfer.timestamp,
    })
    return outcome.order
  }
}

const txHashSubmission = new TxHashSubmission()
export default txHashSubmission
