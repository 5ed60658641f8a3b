import db from '@adonisjs/lucid/services/db'
import { raiseNotification } from '#notifications/notifier'
import logger from '@adonisjs/core/services/logger'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import Order, { OrderStatus } from '#models/order'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import amountAllocator from '#services/amount_allocator'
import callbackOutbox from '#callbacks/callback_outbox'
import orderExpiry from '#services/order_expiry'
import { assertPayableBy, type PaymentSource } from '#services/order_rules'
import { insertUnlessPresent } from '#support/database/insert_unless_present'
import { lockRow } from '#support/database/row_lock'
import { metrics } from '#support/runtime/metrics'
import { usedReference } from '#services/transfer_references'
import type { TransferBlock } from '#chains/chain_family'

export type { PaymentSource }

export type PaymentRequest = {
  /** Canonical transaction reference (a hash or the family's own form, the provider order id). */
  reference: string
  /**
   * Which transfer of the transaction paid (the family's position: `log:7`,
   * `ix:2` ...). '' (the default) stands for the whole transaction: a
   * provider's order id, or a source that names no position.
   */
  position?: string
  /** The block the transfer was read from (chains with blocks), kept to flag a reorganisation. */
  block?: TransferBlock
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
/**
 * order.paid, or order.paid_late when the order had expired (a late
 * payment credited: expired or closed by an operator), raised in the payment's transaction.
 */
async function notifyPaid(
  trx: TransactionClientContract,
  order: Order,
  previousStatus: number,
  reference: string
) {
  const late = previousStatus === OrderStatus.EXPIRED
  await raiseNotification(
    late ? 'order.paid_late' : 'order.paid',
    {
      trade_id: order.tradeId,
      order_id: order.orderId,
      amount: order.actualAmount,
      token: order.token,
      network: order.isProviderOrder ? order.payProvider : order.network,
      fiat_amount: order.amount,
      currency: order.currency,
      reference,
      ...(late ? { previous_status: 'expired' } : {}),
    },
    {},
    trx
  )
}

export class PaymentService {
  async markPaid(orderId: number, request: PaymentRequest): Promise<PaymentOutcome> {
    return db.transaction((trx) => this.markPaidIn(trx, orderId, request))
  }

  /**
   * The same inside the caller's transaction, for a caller that writes
   * more in it (the operators' mark-paid records its audit row there, so
   * the payment and its audit row commit together or not at all).
   */
  async markPaidIn(
    trx: TransactionClientContract,
    orderId: number,
    request: PaymentRequest
  ): Promise<PaymentOutcome> {
    await lockRow(trx, 'orders', orderId)
    const order = await Order.query({ client: trx }).where('id', orderId).firstOrFail()
    const network = order.isProviderOrder ? order.payProvider : order.network

    if (order.status === OrderStatus.PAID) {
      if (
        order.blockTransactionId === request.reference &&
        (await this.#paidBySameTransfer(trx, network, order, request))
      ) {
        return { order, notified: null, alreadyPaid: true }
      }
      throw new BusinessError(
        ErrorCode.STATUS_CHANGED,
        'Order status has changed: it is already paid'
      )
    }
    assertPayableBy(order, request.source)

    await this.#claimReference(trx, network, request, order)

    const paidAt = request.paidAt ?? Date.now()
    const previousStatus = order.status
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
      await notifyPaid(trx, order, previousStatus, request.reference)
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
    const parentStatus = parent.status
    await this.#settle(trx, parent, request.reference, paidAt)
    await callbackOutbox.enqueue(trx, parent)
    await notifyPaid(trx, parent, parentStatus, request.reference)
    return { order, notified: parent, alreadyPaid: false }
  }

  /**
   * A paid order called again with the same transaction: the same payment
   * (a no-op) only when this very transfer paid it, or paid its child (a
   * child's payment settles its parent). Another transfer of the same
   * transaction is a second payment, not this one.
   */
  async #paidBySameTransfer(
    trx: TransactionClientContract,
    network: string,
    order: Order,
    request: PaymentRequest
  ) {
    const used = await usedReference(network, request.reference, request.position ?? '', trx)
    if (!used) return false
    if (used.order_id === order.id) return true
    const child = await trx.from('orders').where('parent_id', order.id).select('id').first()
    return child !== null && child !== undefined && Number(child.id) === used.order_id
  }

  /**
   * Records that this transfer paid the order; 10007 when it (or, for a row
   * from before positions, its whole transaction) already paid another.
   * Two payments racing for one transfer meet on the unique key: one row
   * is inserted, the other call reads it and is refused.
   */
  async #claimReference(
    trx: TransactionClientContract,
    network: string,
    request: PaymentRequest,
    order: Order
  ) {
    const position = request.position ?? ''
    const refuse = () =>
      new BusinessError(
        ErrorCode.BLOCK_PROCESSED,
        `Order block already processed: ${request.reference} already paid another order`
      )
    const before = await usedReference(network, request.reference, position, trx)
    if (before) {
      if (before.order_id !== order.id) throw refuse()
      return
    }
    const { inserted } = await insertUnlessPresent(
      trx,
      'payment_references',
      {
        network,
        reference: request.reference,
        position,
        block_number: request.block?.number ?? null,
        block_hash: request.block?.hash ?? null,
        order_id: order.id,
        source: request.source,
        created_at: Date.now(),
      },
      ['network', 'reference', 'position']
    )
    if (inserted) return
    const existing = await usedReference(network, request.reference, position, trx)
    if (existing?.order_id !== order.id) throw refuse()
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
