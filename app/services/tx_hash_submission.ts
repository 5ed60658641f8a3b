import type Order from '#models/order'
import { orderByTradeId } from '#services/order_lookup'
import { assertOpen } from '#services/order_rules'
import transferVerifier, { PassingRefusal } from '#services/transfer_verifier'
import failedReferences from '#services/failed_references'
import type { ObservedTransfer } from '#chains/chain_family'
import paymentService from '#services/payment_service'
import BusinessError from '#exceptions/business_error'

/**
 * POST /pay/submit-tx-hash: the payer reports the transaction that paid an
 * order. The order's rules are checked before any chain call (a provider
 * order has no hash; the order must be on chain, waiting and not past its
 * life); then the family verifies the transfer against the order and the
 * payment path records it, once.
 *
 * Anyone holding a trade_id can call this, and each check costs RPC
 * requests: the controller counts submissions per order
 * (rate_limit.submit_per_order), the checks draw on a budget of their own
 * (chains.verify_requests_*), a reference that failed is answered from
 * memory for a while (FailedReferences), and the same reference asked
 * twice at once is checked once.
 */
export class TxHashSubmission {
  #inFlight = new Map<string, Promise<ObservedTransfer>>()

  async submit(tradeId: string, reference: string): Promise<Order> {
    const order = await orderByTradeId(tradeId)
    if (order.isProviderOrder) {
      throw BusinessError.parameter(
        'Provider orders are paid on the provider page; there is no hash to submit'
      )
    }
    assertOpen(order, 'submit')

    const transfer = await this.#verify(order, reference)
    const outcome = await paymentService.markPaid(order.id, {
      reference: transfer.reference,
      position: transfer.position,
      block: transfer.block,
      source: 'submit',
      paidAt: transfer.timestamp,
    })
    return outcome.order
  }

  async #verify(order: Order, reference: string): Promise<ObservedTransfer> {
    const known = failedReferences.recall(order.tradeId, reference)
    if (known !== null) throw BusinessError.parameter(known)
    const key = `${order.tradeId}\n${reference.trim()}`
    let check = this.#inFlight.get(key)
    if (!check) {
      check = transferVerifier
        .verify(order, reference, 'submit')
        .finally(() => this.#inFlight.delete(key))
      this.#inFlight.set(key, check)
    }
    try {
      return await check
    } catch (error) {
      if (error instanceof BusinessError && !(error instanceof PassingRefusal)) {
        await failedReferences.remember(order.tradeId, reference, error.message)
      }
      throw error
    }
  }
}

const txHashSubmission = new TxHashSubmission()
export default txHashSubmission
