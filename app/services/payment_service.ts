import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import Order, { OrderStatus } from '#models/order'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import amountAllocator from '#services/amount_allocator'
import callbackOutbox from '#callbacks/callback_outbox'
import orderExpiry from '#services/order_expiry'
import { assertPayableBy, type PaymentSource } from '#services/order_rules'
import { insertUnlessPresent } from '#support/insert_unless_present'
import { lockRow } from '#support/row_lock'
import { metrics } from '#support/metrics'

export type { PaymentSource }

export type PaymentRequest = {
  /** Canonical transaction reference (a hash or the family's own form, the provider order id). */
  reference: string
  source: PaymentSource
  /** When the payment happened (block time), epoch ms; defaults to now. */
  paidAt?: number
}

export type PaymentOutcome = {
  order: Order
  /** The order the merchant is told about (the parent when a child paid). */
  notified: Order | null
  /** True when this call found the payment already recorded. */
  alreadyPaid: boolean
}

/**
 * The one path that moves an order to status 2. Scanners, submit-tx-hash,
 * admin mark-paid and provider notifications all come here.
 *
 * In one transaction: refuse a reference that already paid another order
 * (10007), mark the order paid, release its amount lock, settle the
 * parent/child pair, and queue exactly one merchant callback (the
 * parent's). Calling it again with the same order and reference is a no-op.
 */
export class PaymentService {
  async markPaid(orderId: number, request: PaymentRequest): Promise<PaymentOutcome> {
    return db.transaction((trx) => this.markPaidIn(trx, orderId, request))
  }

  /**
   * The same inside the caller's transaction, for a caller that writes
   * more in it (the operators' mark-paid records its audit row there, so
   * the payment and its audit row commit together or not at all).
   */
  async markPaidIn(trx: TransactionClientContract, orderId: number, request: PaymentRequest): Promise<PaymentOutcome> {
    await lockRow(trx, 'orders', orderId)
    const order = await Order.query({ client: trx }).where('id', orderId).firstOrFail()
    const network = order.isProviderOrder ? order.payProvider : order.network

    if (order.status === OrderStatus.PAID) {
      if (order.blockTransactionId === request.reference) {
        return { order, notified: null, alreadyPaid: true }
      }
      throw new BusinessError(ErrorCode.STATUS_CHANGED, 'Order status has changed: it is already paid')
    }
    assertPayableBy(order, request.source)

    await this.#claimReference(trx, network, request, order)

    const paidAt = request.paidAt ?? Date.now()
    await this.#settle(trx, order, request.reference, paidAt)
    // One payment, counted once it is committed, by what it paid with
    // (a provider payment by its provider), whichever path brought it.
    const labels = { network: network ?? '', token: order.token ?? '' }
    trx.after('commit', async () => {
      metrics.ordersPaid.inc(labels)
    })

    if (order.parentId === null) {
      await this.#expireChild(trx, order.id)
      await callbackOutbox.enqueue(trx, order)
      return { order, notified: order, alreadyPaid: false }
    }

    // A child paid: the merchant knows only the parent, which takes the
    // child's payment details and is the one notified.
    await lockRow(trx, 'orders', order.parentId)
    const parent = await Order.query({ client: trx }).where('id', order.parentId).firstOrFail()
    if (parent.status === OrderStatus.PAID) {
      // The payer paid both targets. Keep the child paid (the funds came)
      // but do not tell the merchant twice.
      logger.warn(
        { trade_id: order.tradeId, parent: parent.tradeId, reference: request.reference },
        'child paid after its parent: double payment, no second callback'
      )
      return { order, notified: null, alreadyPaid: false }
    }
    parent.merge({
      token: order.token,
      network: order.network,
      receiveAddress: order.receiveAddress,
      actualAmount: order.actualAmount,
      payProvider: order.payProvider,
      paymentUrl: order.payProvider !== '' ? order.paymentUrl : parent.paymentUrl,
    })
    parent.useTransaction(trx)
    await this.#settle(trx, parent, request.reference, paidAt)
    await callbackOutbox.enqueue(trx, parent)
    return { order, notified: parent, alreadyPaid: false }
  }

  async #claimReference(trx: TransactionClientContract, network: string, request: PaymentRequest, order: Order) {
    const { inserted } = await insertUnlessPresent(
      trx,
      'payment_references',
      {
        network,
        reference: request.reference,
        order_id: order.id,
        source: request.source,
        created_at: Date.now(),
      },
      ['network', 'reference']
    )
    if (inserted) return
    const existing = await trx
      .from('payment_references')
      .where('network', network)
      .where('reference', request.reference)
      .first()
    if (Number(existing?.order_id) !== order.id) {
      throw new BusinessError(
        ErrorCode.BLOCK_PROCESSED,
        `Order block already processed: ${request.reference} already paid another order`
      )
    }
  }

  async #settle(trx: TransactionClientContract, order: Order, reference: string, paidAt: number) {
    order.useTransaction(trx)
    order.merge({ status: OrderStatus.PAID, blockTransactionId: reference, paidAt })
    await order.save()
    await amountAllocator.release(trx, order.id)
    await trx
      .from('provider_orders')
      .where('order_id', order.id)
      .whereIn('status', ['pending', 'expired'])
      .update({ status: 'paid', updated_at: Date.now() })
  }

  /** The parent was paid: its other target is closed (no longer payable from now). */
  async #expireChild(trx: TransactionClientContract, parentId: number) {
    const child = await Order.query({ client: trx }).where('parent_id', parentId).first()
    if (child) await orderExpiry.closeOrders(trx, [child.id])
  }
}

const paymentService = new PaymentService()
export default paymentService
