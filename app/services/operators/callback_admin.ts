import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import callbackOutbox from '#callbacks/callback_outbox'
import callbackFormats from '#callbacks/callback_format'
import callbackOutboxQuery, { type CallbackFilters } from '#services/admin/callback_outbox_query'
import auditLog from '#services/audit/audit_log'
import { snapshot } from '#services/audit/audit_snapshots'
import { OperatorError } from '#support/cli/operator_error'

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
 * Sends a filtered batch of merchant callbacks again from a fresh retry
 * budget (the console's outbox page). One callback at a time is
 * OrderAdmin.resendCallback (`callbacks:redeliver`); a batch is audited
 * the same way, one `order.callback_resend` row per order, in the
 * transaction that queues them.
 */
export class CallbackAdmin {
  constructor(protected audit = auditLog) {}

  /**
   * Queues again every callback matching `filters` (at least one filter:
   * never the whole outbox by accident), newest first, at most `cap`.
   * Held callbacks are left alone and counted.
   */
  async redeliverMatching(
    filters: CallbackFilters,
    cap = REDELIVER_BATCH_CAP
  ): Promise<BatchRedelivery> {
    const given = Object.values(filters).some((value) => value !== undefined && value !== '')
    if (!given)
      throw new OperatorError(
        'Choose at least one filter before sending a batch of callbacks again',
        { key: 'batch_needs_filter' }
      )
    if (filters.status === 'held') {
      throw new OperatorError(
        "Held callbacks cannot be sent: their format's plugin is turned off; they go out once it is back",
        { key: 'held_callbacks' }
      )
    }
    const held = filters.status
      ? 0
      : Number(
          (
            (await callbackOutboxQuery
              .scope({ ...filters, status: 'held' })
              .count('* as total')) as { total: number }[]
          )[0].total
        )
    const matched = await callbackOutboxQuery
      .scope(filters)
      .whereIn('c.format', callbackFormats.names())
      .select('c.order_id')
      .orderBy('c.id', 'desc')
      .limit(cap + 1)
    const chosen = matched.slice(0, cap).map((row) => Number(row.order_id))
    if (chosen.length > 0) {
      await db.transaction(async (trx) => {
        const before = await Order.query({ client: trx }).whereIn('id', chosen)
        await callbackOutbox.requeueMany(trx, chosen)
        const requeued = await Order.query({ client: trx }).whereIn('id', chosen)
        const after = new Map(requeued.map((order) => [order.id, order]))
        for (const order of before) {
          await this.audit.record(
            {
              action: 'order.callback_resend',
              subjectType: 'order',
              subjectId: order.tradeId,
              before: snapshot.order(order),
              after: { ...snapshot.order(after.get(order.id)!), batch: true },
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
  let text =
    result.queued === 0
      ? 'No callback matches these filters'
      : `${noun(result.queued)} queued again`
  if (result.capped)
    text += ` (the newest ${result.cap}; more match: send the rest in another batch)`
  if (result.held > 0) text += `; ${noun(result.held)} held, not sent (format's plugin turned off)`
  return text
}

const callbackAdmin = new CallbackAdmin()
export default callbackAdmin
