import Chain from '#models/chain'
import type Order from '#models/order'
import { OrderStatus } from '#models/order'
import { explorerUrl } from '#chains/explorer_links'
import paymentSightings from '#services/payment_sightings'

/**
 * `data` of GET /pay/payment-progress/{trade_id} (beside the spec's
 * endpoints; the status values stay the spec's): what the chain watcher
 * has seen of the payment. `sighting`: a transfer for the order not yet
 * deep enough ("payment seen, 3 of 12 confirmations"); `payment`: the
 * transaction that paid it, once status is 2. Both with a block explorer
 * link ('' when the chain has none, or for hosted provider payments).
 */
export async function presentProgress(order: Order) {
  return {
    trade_id: order.tradeId,
    status: order.status,
    sighting: await presentSighting(order),
    payment: await presentPayment(order),
  }
}

async function presentSighting(order: Order) {
  const sighting = await paymentSightings.forOrder(order)
  if (!sighting) return null
  const chain = await Chain.findBy('network', sighting.network)
  const required = chain?.confirmations ?? 0
  return {
    reference: sighting.reference,
    // A sighting is by definition short of the requirement: a family's
    // count may reach it while finality is still awaited (a block not yet
    // solidified), which would read "19 of 19" and still not paid.
    confirmations: Math.min(sighting.confirmations, Math.max(required - 1, 0)),
    required_confirmations: required,
    seen_at: sighting.seenAt,
    explorer_url: explorerUrl(chain, sighting.reference),
  }
}

async function presentPayment(order: Order) {
  if (order.status !== OrderStatus.PAID || !order.blockTransactionId) return null
  const chain = order.isProviderOrder ? null : await Chain.findBy('network', order.network)
  return {
    reference: order.blockTransactionId,
    explorer_url: explorerUrl(chain, order.blockTransactionId),
  }
}
