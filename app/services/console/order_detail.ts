import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import AmountLock from '#models/amount_lock'
import Callback from '#models/callback'
import CallbackAttempt from '#models/callback_attempt'
import Chain from '#models/chain'
import PaymentSighting from '#models/payment_sighting'
import ProviderOrder from '#models/provider_order'
import { explorerUrl } from '#chains/explorer_links'
import { AuditLog, type AuditRow } from '#services/audit/audit_log'
import { OrderAdmin } from '#services/operators/order_admin'

/** A transaction reference that paid the order or its child (payment_references). */
export type PaymentReference = {
  /** The order it is recorded on (a parent paid through its child: the child). */
  tradeId: string
  network: string
  reference: string
  /** scanner | submit | admin | provider */
  source: string
  createdAt: number
  /** The chain explorer's page of it ('' when the chain has none). */
  explorerUrl: string
}

export type OrderDetail = {
  order: Order
  parent: Order | null
  child: Order | null
  /** The amount reservation while it lasts (it outlives the order by the chain's grace). */
  amountLock: AmountLock | null
  /** References that paid it; a parent paid through its child shows the child's. */
  references: PaymentReference[]
  /** Explorer page of block_transaction_id ('' when none). */
  explorerUrl: string
  providerOrder: ProviderOrder | null
  /** Transfers seen for it, not yet deep enough to pay it. */
  sightings: PaymentSighting[]
  /** The order whose callback the merchant gets: itself, or its parent for a child. */
  callbackOrder: Order
  callback: Callback | null
  /** Every delivery attempt of that callback, oldest first (numbers restart at 1 after a redelivery). */
  attempts: CallbackAttempt[]
  /** Operators' actions on it (audit log), newest first. */
  history: AuditRow[]
  /** Why each action is unavailable now, null when it is available (the services' own rules). */
  refusals: { markPaid: string | null; close: string | null; resendCallback: string | null }
}

const HISTORY_ROWS = 50

/** Everything the console's order page shows about one order. */
@inject()
export class OrderDetails {
  constructor(
    protected orders: OrderAdmin,
    protected audit: AuditLog
  ) {}

  /** null when no order has that trade_id. */
  async find(tradeId: string): Promise<OrderDetail | null> {
    const order = await Order.findBy('trade_id', tradeId)
    if (!order) return null
    const [parent, child] = await Promise.all([
      order.parentId === null ? null : Order.find(order.parentId),
      Order.findBy('parent_id', order.id),
    ])
    const pair = child ? [order, child] : [order]
    const [amountLock, references, providerOrder, sightings, chain] = await Promise.all([
      AmountLock.findBy('order_id', order.id),
      db
        .from('payment_references')
        .whereIn('order_id', pair.map((entry) => entry.id))
        .orderBy('id'),
      ProviderOrder.findBy('order_id', order.id),
      PaymentSighting.query().where('order_id', order.id).orderBy('id'),
      order.network ? Chain.findBy('network', order.network) : null,
    ])
    const callbackOrder = parent ?? order
    const callback = await Callback.findBy('order_id', callbackOrder.id)
    const attempts = callback
      ? await CallbackAttempt.query().where('callback_id', callback.id).orderBy('id', 'asc')
      : []
    const history = await this.audit.list({ subjectType: 'order', subjectId: order.tradeId }, { limit: HISTORY_ROWS })
    const chains = new Map<string, Chain | null>([[order.network, chain]])
    const chainOf = async (network: string) => {
      if (!chains.has(network)) chains.set(network, await Chain.findBy('network', network))
      return chains.get(network) ?? null
    }
    const shownReferences: PaymentReference[] = []
    for (const row of references) {
      shownReferences.push({
        tradeId: pair.find((entry) => entry.id === Number(row.order_id))!.tradeId,
        network: row.network,
        reference: row.reference,
        source: row.source,
        createdAt: Number(row.created_at),
        explorerUrl: explorerUrl(await chainOf(row.network), row.reference),
      })
    }
    return {
      order,
      parent,
      child,
      amountLock,
      references: shownReferences,
      explorerUrl: order.isOnChain ? explorerUrl(chain, order.blockTransactionId) : '',
      providerOrder,
      sightings,
      callbackOrder,
      callback,
      attempts,
      history: history.rows,
      refusals: {
        markPaid: this.orders.markPaidRefusal(order),
        close: this.orders.closeRefusal(order),
        resendCallback: this.orders.resendRefusal(callbackOrder),
      },
    }
  }
}
