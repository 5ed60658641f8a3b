import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import Order, { OrderStatus } from '#models/order'
import PaymentSighting from '#models/payment_sighting'
import type Chain from '#models/chain'
import type Token from '#models/token'
import type { ObservedTransfer } from '#chains/chain_family'
import { claimOf } from '#services/transfer_claim'
import { isPayableBy } from '#services/order_rules'
import { Decimal } from '#support/text/money'
import { usedReference } from '#services/transfer_references'

/** Rows per DELETE … WHERE IN (well under both databases' bound-parameter limits). */
const DELETE_CHUNK = 500

/**
 * Keeps `payment_sightings` in step with what the scanner sees: transfers
 * to an order's address, of its exact amount and token within its life
 * (the matcher's own rule, transfer_claim.ts), that are not yet deep
 * enough. It never pays anything and never calls the payment path: a
 * sighting only lets the payer's page say "payment seen, n of m
 * confirmations" instead of still asking to pay.
 */
export class PaymentSightings {
  /**
   * After a scan: confirmed transfers went to the matcher, their sightings
   * are done; when the family reported its unconfirmed picture, the
   * network's sightings become exactly that picture (those no longer seen
   * were reorganised out or confirmed), restricted to transfers that claim
   * an order not yet paid and whose reference paid nothing yet.
   */
  async record(
    chain: Chain,
    tokens: Token[],
    confirmed: ObservedTransfer[],
    unconfirmed: ObservedTransfer[] | undefined
  ) {
    await this.#forget(
      chain.network,
      confirmed.map((transfer) => transfer.reference)
    )
    if (unconfirmed === undefined) return

    const now = Date.now()
    const kept = new Set<string>()
    for (const transfer of unconfirmed) {
      const order = await this.#claimant(chain, tokens, transfer)
      if (!order) continue
      const token = tokens.find((entry) => entry.contract === transfer.contract)!
      kept.add(keyOf(transfer.reference, transfer.position, transfer.to))
      await db
        .connection()
        .knexQuery()
        .table('payment_sightings')
        .insert({
          network: chain.network,
          reference: transfer.reference,
          position: transfer.position,
          to_address: transfer.to,
          token: token.symbol,
          amount: new Decimal(transfer.amount).toFixed(),
          order_id: order.id,
          confirmations: Math.max(0, Math.floor(transfer.confirmations)),
          transfer_time: transfer.timestamp,
          seen_at: now,
          last_seen_at: now,
        })
        .onConflict(['network', 'reference', 'position', 'to_address'])
        .merge(['token', 'amount', 'order_id', 'confirmations', 'transfer_time', 'last_seen_at'])
    }

    const rows = await db
      .from('payment_sightings')
      .where('network', chain.network)
      .select('id', 'reference', 'position', 'to_address')
    const gone = rows
      .filter((row) => !kept.has(keyOf(row.reference, row.position, row.to_address)))
      .map((row) => row.id)
    for (let start = 0; start < gone.length; start += DELETE_CHUNK) {
      await db
        .from('payment_sightings')
        .whereIn('id', gone.slice(start, start + DELETE_CHUNK))
        .delete()
    }
    if (gone.length > 0)
      logger.debug(
        { network: chain.network, count: gone.length },
        'payment sightings no longer seen'
      )
  }

  /**
   * The earliest sighting of a payment for `order` (or for its child, the
   * payer's other target: paying the child pays the parent), or null.
   * Only while the order can still be paid by a transfer (waiting, or
   * expired: a transfer made within its life is credited late).
   */
  async forOrder(order: Order): Promise<PaymentSighting | null> {
    if (!isPayableBy(order, 'scanner')) return null
    const child = order.parentId === null ? await Order.findBy('parent_id', order.id) : null
    const ids = child ? [order.id, child.id] : [order.id]
    return PaymentSighting.query()
      .whereIn('order_id', ids)
      .whereNotExists((used) =>
        used
          .from('payment_references')
          .whereColumn('payment_references.network', 'payment_sightings.network')
          .whereColumn('payment_references.reference', 'payment_sightings.reference')
          // The same transfer, or (position '') its whole transaction.
          .where((same) =>
            same
              .whereColumn('payment_references.position', 'payment_sightings.position')
              .orWhere('payment_references.position', '')
          )
      )
      .orderBy('seen_at', 'asc')
      .orderBy('id', 'asc')
      .first()
  }

  /** The order an unconfirmed transfer would pay, when it would pay one now. */
  async #claimant(
    chain: Chain,
    tokens: Token[],
    transfer: ObservedTransfer
  ): Promise<Order | null> {
    const token = tokens.find((entry) => entry.contract === transfer.contract)
    if (!token || !transfer.success) return null
    if (await usedReference(chain.network, transfer.reference, transfer.position)) return null
    const { claimant } = await claimOf(chain.network, token, transfer)
    if (!claimant || claimant.status === OrderStatus.PAID) return null
    return claimant
  }

  async #forget(network: string, references: string[]) {
    const unique = [...new Set(references)]
    for (let start = 0; start < unique.length; start += DELETE_CHUNK) {
      await db
        .from('payment_sightings')
        .where('network', network)
        .whereIn('reference', unique.slice(start, start + DELETE_CHUNK))
        .delete()
    }
  }
}

function keyOf(reference: string, position: string, to: string) {
  return `${reference}\n${position}\n${to}`
}

const paymentSightings = new PaymentSightings()
export default paymentSightings
