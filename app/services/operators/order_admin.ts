import Order, { OrderStatus } from '#models/order'
import CallbackAttempt from '#models/callback_attempt'
import Callback from '#models/callback'
import BusinessError from '#exceptions/business_error'
import transferVerifier from '#services/transfer_verifier'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import paymentService, { type PaymentOutcome } from '#services/payment_service'
import orderService from '#services/order_service'
import callbackOutbox from '#callbacks/callback_outbox'
import callbackDeliverer, { type DeliveryReport } from '#callbacks/callback_deliverer'
import auditLog from '#services/audit/audit_log'
import { snapshot } from '#services/audit/audit_snapshots'
import { OperatorError } from '#support/cli/operator_error'

/** A reference longer than this fits no chain (payment_references.reference is 255). */
const MAX_REFERENCE_LENGTH = 255

export type MarkPaidResult = {
  order: Order
  /** Canonical form of the reference, as the chain plugin gave it. */
  reference: string
  /** The order the merchant is told about (the parent when a child was paid), null when none is. */
  notified: Order | null
}

export type CloseResult = { order: Order; child: Order | null }

export type ResendResult = {
  /** The order whose callback was sent (the parent when a child was named). */
  order: Order
  report: DeliveryReport
  /** The attempt this redelivery made, null when another worker holds the callback. */
  attempt: CallbackAttempt | null
}

/**
 * The operators' actions on orders (the orders:* and callbacks:redeliver
 * commands and the console's order page): each rule lives here once, a
 * refusal is an OperatorError meant for the operator, and every change is
 * written to the audit log in the transaction that makes it.
 */
export class OrderAdmin {
  constructor(protected audit = auditLog) {}

  async find(tradeId: string): Promise<Order> {
    const order = await Order.findBy('trade_id', tradeId.trim())
    if (!order)
      throw new OperatorError(`No order with trade_id ${tradeId}`, {
        key: 'no_order',
        args: { tradeId },
      })
    return order
  }

  /** Why mark-paid cannot repair `order`, or null when it may (the chain still has to confirm). */
  markPaidRefusal(order: Order): OperatorError | null {
    const args = { tradeId: order.tradeId, status: order.status }
    if (!order.isOnChain)
      return new OperatorError(`Order ${order.tradeId} is not an on-chain order`, {
        key: 'order_not_on_chain',
        args,
      })
    if (order.status !== OrderStatus.WAITING && order.status !== OrderStatus.EXPIRED) {
      return new OperatorError(
        `Order ${order.tradeId} has status ${order.status}; only 1 or 3 can be repaired`,
        { key: 'order_not_repairable', args }
      )
    }
    return null
  }

  /** Why `order` cannot be closed, or null. */
  closeRefusal(order: Order): OperatorError | null {
    if (order.status !== OrderStatus.WAITING && order.status !== OrderStatus.SELECTING) {
      return new OperatorError(
        `Order ${order.tradeId} is not open (status ${order.status}); nothing to close`,
        { key: 'order_not_open', args: { tradeId: order.tradeId, status: order.status } }
      )
    }
    return null
  }

  /** Why the callback of `target` (a parent: see callbackTarget) cannot be sent again, or null. */
  resendRefusal(target: Order): OperatorError | null {
    if (target.status !== OrderStatus.PAID) {
      return new OperatorError(
        `Order ${target.tradeId} is not paid (status ${target.status}); there is nothing to tell`,
        { key: 'order_not_paid', args: { tradeId: target.tradeId, status: target.status } }
      )
    }
    return null
  }

  /** The merchant is told about the parent only: a child's callback is its parent's. */
  async callbackTarget(order: Order): Promise<Order> {
    return order.parentId === null ? order : Order.findOrFail(order.parentId)
  }

  /**
   * Repair: pays a waiting (1) or expired (3) on-chain order by a
   * transaction that its chain plugin finds and confirms (recipient, token,
   * amount, made after the order was created, deep enough), through the one
   * payment path. `alongside` writes more in the payment's transaction (an
   * unmatched payment assigned to the order): a throw there undoes the payment.
   */
  async markPaid(
    tradeId: string,
    reference: string,
    alongside?: (trx: TransactionClientContract, paid: PaymentOutcome) => Promise<void>,
    position?: string
  ): Promise<MarkPaidResult> {
    const order = await this.find(tradeId)
    const refusal = this.markPaidRefusal(order)
    if (refusal) throw refusal
    const given = reference.trim()
    if (given === '')
      throw new OperatorError('Give the transaction reference that paid the order', {
        key: 'reference_required',
      })
    if (given.length > MAX_REFERENCE_LENGTH) {
      throw new OperatorError(
        `A transaction reference has at most ${MAX_REFERENCE_LENGTH} characters`,
        { key: 'reference_too_long', args: { max: MAX_REFERENCE_LENGTH } }
      )
    }
    const before = snapshot.order(order)
    try {
      const transfer = await transferVerifier.verify(order, given, 'admin', position)
      const outcome = await this.audit.change(
        async (trx) => {
          const paid = await paymentService.markPaidIn(trx, order.id, {
            reference: transfer.reference,
            position: transfer.position,
            block: transfer.block,
            source: 'admin',
            paidAt: transfer.timestamp,
          })
          if (alongside) await alongside(trx, paid)
          return paid
        },
        (paid) => ({
          action: 'order.mark_paid',
          subjectType: 'order',
          subjectId: order.tradeId,
          before,
          after: { ...snapshot.order(paid.order), notified: paid.notified?.tradeId ?? null },
        })
      )
      return { order: outcome.order, reference: transfer.reference, notified: outcome.notified }
    } catch (error) {
      if (error instanceof BusinessError)
        throw new OperatorError(`${error.message} (${error.businessCode})`, {
          key: 'mark_paid_refused',
          args: { reason: error.message, code: error.businessCode },
        })
      throw error
    }
  }

  /**
   * Backend closure: a waiting (1) or selecting (4) order, with its waiting
   * child, becomes expired (3) now; its amount stays reserved for the
   * chain's late-payment grace.
   */
  async close(tradeId: string): Promise<CloseResult> {
    const order = await this.find(tradeId)
    const refusal = this.closeRefusal(order)
    if (refusal) throw refusal
    const before = snapshot.order(order)
    const closed = await this.audit.change(
      async (trx) => {
        // Paid or closed since it was read: refused, and nothing is recorded.
        if (!(await orderService.closeIn(trx, order))) {
          const now = await Order.query({ client: trx }).where('id', order.id).firstOrFail()
          throw (
            this.closeRefusal(now) ??
            new OperatorError(`Order ${order.tradeId} could not be closed`, {
              key: 'order_not_closed',
              args: { tradeId: order.tradeId },
            })
          )
        }
        return Order.query({ client: trx }).where('id', order.id).firstOrFail()
      },
      (fresh) => ({
        action: 'order.close',
        subjectType: 'order',
        subjectId: order.tradeId,
        before,
        after: snapshot.order(fresh),
      })
    )
    const child = await Order.findBy('parent_id', closed.id)
    return { order: closed, child }
  }

  /**
   * Sends the merchant callback of a paid order again from a fresh retry
   * budget, and waits for this one delivery (the merchant's answer is in
   * the returned attempt).
   */
  async resendCallback(tradeId: string): Promise<ResendResult> {
    const target = await this.callbackTarget(await this.find(tradeId))
    const refusal = this.resendRefusal(target)
    if (refusal) throw refusal
    const before = snapshot.order(target)
    await this.audit.change(
      async (trx) => {
        await callbackOutbox.requeue(trx, target)
        return Order.query({ client: trx }).where('id', target.id).firstOrFail()
      },
      (queued) => ({
        action: 'order.callback_resend',
        subjectType: 'order',
        subjectId: target.tradeId,
        before,
        after: snapshot.order(queued),
      })
    )
    const startedFrom = await this.#lastAttemptId(target.id)
    const report = await callbackDeliverer.deliverFor(target.id)
    const fresh = await Order.findOrFail(target.id)
    let attempt: CallbackAttempt | null = null
    if (report.claimed > 0) {
      const callback = await Callback.findByOrFail('order_id', target.id)
      attempt = await CallbackAttempt.query()
        .where('callback_id', callback.id)
        .where('id', '>', startedFrom)
        .orderBy('id', 'desc')
        .first()
    }
    return { order: fresh, report, attempt }
  }

  async #lastAttemptId(orderId: number): Promise<number> {
    const callback = await Callback.findBy('order_id', orderId)
    if (!callback) return 0
    const last = await CallbackAttempt.query()
      .where('callback_id', callback.id)
      .orderBy('id', 'desc')
      .first()
    return last?.id ?? 0
  }
}

const orderAdmin = new OrderAdmin()
export default orderAdmin
