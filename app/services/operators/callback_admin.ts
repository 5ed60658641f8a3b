import { inject } from '@adonisjs/core'
import db from '@adonisjs/lucid/services/db'
import Order, { OrderStatus } from '#models/order'
import callbackOutbox from '#callbacks/callback_outbox'
import callbackFormats from '#callbacks/callback_format'
import callbackOutboxQuery, { type CallbackFilters } from '#services/console/callback_outbox_query'
import { AuditLog } from '#services/audit/audit_log'
import { OperatorError } from '#support/operator_error'

/** A batch redelivery queues at most this many callbacks (the newest that match). */
export const REDELIVER_BATCH_CAP = 1000

export type BatchRedelivery = {
  /** Callbacks queued again. */
  queued: number
  /** More callbacks matched than the cap: only the newest `queued` were queued. */
  capped: boolean
  cap: number
  /** Matching callbacks left alone because their format's plugin is off. */
  held: number
}

/**
 * Sends merchant callbacks again from a fresh retry budget
 * (`callbacks:redeliver` and the console), one at a time or a filtered
 * batch. Only a paid order tells its merchant, and only the parent of a
 * parent/child pair. Audited, each callback in the transaction that
 * queues it.
 */
@inject()
export class CallbackAdmin {
  constructor(protected audit: AuditLog) {}

  /** Queues the callback of the paid order `tradeId` (or of its parent) again; returns that order. */
  async redeliver(tradeId: string): Promise<Order> {
    let order = await Order.findBy('trade_id', tradeId.trim())
    if (!order) throw new OperatorError(`No order with trade_id ${tradeId}`)
    // The merchant is told about the parent only.
    if (order.parentId !== null) order = await Order.findOrFail(order.parentId)
    if (order.status !== OrderStatus.PAID) {
      throw new OperatorError(`Order ${order.tradeId} is not paid (status ${order.status}); there is nothing to tell`)
    }
    const existing = await db.from('callbacks').where('order_id', order.id).first()
    const format = existing?.format ?? callbackFormats.nameFor(order)
    if (!callbackFormats.has(format)) {
      throw new OperatorError(
        `The callback of ${order.tradeId} is held: its "${format}" format is not loaded (its plugin is turned off); it goes out once the plugin is back`
      )
    }
    const target = order
    await this.audit.change(
      async (trx) => {
        await callbackOutbox.requeue(trx, target)
      },
      () => ({
        action: 'order.callback_resend',
        subjectType: 'order',
        subjectId: target.tradeId,
        before: existing ? { status: existing.status, attempts: Number(existing.attempts) } : null,
        after: { status: 'pending', attempts: 0 },
      })
    )
    return target
  }

  /**
   * Queues again every callback matching `filters` (at least one filter:
   * never the whole outbox by accident), newest first, at most `cap`.
   * Held callbacks are left alone and counted.
   */
  async redeliverMatching(filters: CallbackFilters, cap = REDELIVER_BATCH_CAP): Promise<BatchRedelivery> {
    const given = Object.values(filters).some((value) => value !== undefined && value !== '')
    if (!given) throw new OperatorError('Choose at least one filter before sending a batch of callbacks again')
    if (filters.status === 'held') {
      throw new OperatorError('Held callbacks cannot be sent: their format\'s plugin is turned off; they go out once it is back')
    }
    const held = filters.status
      ? 0
      : Number(
          ((await callbackOutboxQuery.scope({ ...filters, status: 'held' }).count('* as total')) as { total: number }[])[0]
            .total
        )
    const matched = await callbackOutboxQuery
      .scope(filters)
      .whereIn('c.format', callbackFormats.names())
      .select('c.order_id', 'c.status', 'c.attempts', 'o.trade_id')
      .orderBy('c.id', 'desc')
      .limit(cap + 1)
    const chosen = matched.slice(0, cap) as { order_id: number; status: string; attempts: number; trade_id: string }[]
    if (chosen.length > 0) {
      await db.transaction(async (trx) => {
        await callbackOutbox.requeueMany(
          trx,
          chosen.map((row) => Number(row.order_id))
        )
        for (const row of chosen) {
          await this.audit.record(
            {
              action: 'order.callback_resend',
              subjectType: 'order',
              subjectId: row.trade_id,
              before: { status: row.status, attempts: Number(row.attempts) },
              after: { status: 'pending', attempts: 0, batch: true },
            },
            trx
          )
        }
      })
    }
    return { queued: chosen.length, capped: matched.length > cap, cap, held }
  }
}

/** What the operator reads after a batch: how many were queued, and what was left out. */
export function batchMessage(result: BatchRedelivery): string {
  const noun = (count: number) => (count === 1 ? '1 callback' : `${count} callbacks`)
  let text = result.queued === 0 ? 'No callback matches these filters' : `${noun(result.queued)} queued again`
  if (result.capped) text += ` (the newest ${result.cap}; more match: send the rest in another batch)`
  if (result.held > 0) text += `; ${noun(result.held)} held, not sent (format's plugin turned off)`
  return text
}
