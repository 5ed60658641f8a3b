import db from '@adonisjs/lucid/services/db'
import UnmatchedPayment from '#models/unmatched_payment'
import type Order from '#models/order'
import orderAdmin, { type MarkPaidResult } from '#services/operators/order_admin'
import auditLog from '#services/audit/audit_log'
import { actorLabel, currentAuditContext } from '#services/audit/audit_context'
import { OperatorError, type RefusalArgs } from '#support/cli/operator_error'
import { Decimal, isDecimalLiteral } from '#support/text/money'
import type { UnmatchedKind } from '#services/unmatched_inbox'

/** open: waiting for an operator; assigned: paid an order; dismissed: set aside with a note. */
export type UnmatchedState = 'open' | 'assigned' | 'dismissed'
export const UNMATCHED_STATES: readonly UnmatchedState[] = ['open', 'assigned', 'dismissed']

/** What a row records (unmatched_inbox.ts), in the order the console lists them. */
export const UNMATCHED_KINDS: readonly UnmatchedKind[] = [
  'transfer',
  'unreadable',
  'unexplained',
  'reorged',
]

export type UnmatchedFilters = {
  network?: string
  token?: string
  /** Absent: every kind. */
  kind?: UnmatchedKind
  /** Absent: every state. */
  state?: UnmatchedState
}

export type UnmatchedRow = {
  id: number
  network: string
  reference: string
  /** Which transfer of the transaction; '' when unknown (payment_references.position). */
  position: string
  /** transfer | unreadable | unexplained | reorged (payment_matcher.ts). */
  kind: string
  /** The paid order a `reorged` row is about. */
  orderTradeId: string | null
  toAddress: string
  token: string
  /** '' when the transaction could not be read. */
  amount: string
  transferTime: number
  reason: string
  detectedAt: number
  state: UnmatchedState
  assignedTradeId: string | null
  assignedAt: number | null
  assignedBy: string | null
  dismissedAt: number | null
  dismissedBy: string | null
  dismissNote: string | null
}

export type UnmatchedPage = { rows: UnmatchedRow[]; next: string | null }

export const DISMISS_NOTE_MAX = 500

/** Rows that are a transfer an order may be paid with; the other kinds are notices, dismissed once handled. */
const ASSIGNABLE_KINDS = new Set(['transfer', 'unreadable'])

/** Whether a row of this kind may be assigned to an order (else it can only be dismissed). */
export function assignableKind(kind: string): boolean {
  return ASSIGNABLE_KINDS.has(kind)
}

const MAX_PAGE = 200

function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value)
}

/**
 * Incoming transfers that paid no order (payment_matcher.ts keeps them
 * with the reason), as operators settle them: assigned to the order they
 * pay (through OrderAdmin.markPaid: the checks and the payment path of
 * `orders:mark-paid`), or dismissed with a note. Each at most once;
 * audited with the change, in its transaction.
 */
export class UnmatchedPaymentAdmin {
  constructor(
    protected orders = orderAdmin,
    protected audit = auditLog
  ) {}

  /** Newest first, by id (keyset); `after` is the `next` of the previous page. */
  async list(
    filters: UnmatchedFilters = {},
    page: { limit?: number; after?: string | null } = {}
  ): Promise<UnmatchedPage> {
    const limit = Math.min(Math.max(Math.trunc(page.limit ?? 50), 1), MAX_PAGE)
    const query = this.#select()
    if (filters.network) query.where('u.network', filters.network)
    if (filters.token) query.where('u.token', filters.token.toUpperCase())
    if (filters.kind) query.where('u.kind', filters.kind)
    if (filters.state === 'open') query.whereNull('u.dismissed_at').whereNull('u.assigned_at')
    if (filters.state === 'assigned') query.whereNotNull('u.assigned_at')
    if (filters.state === 'dismissed') query.whereNotNull('u.dismissed_at')
    const after = page.after && /^\d{1,18}$/.test(page.after) ? Number(page.after) : null
    if (after !== null) query.where('u.id', '<', after)
    const raw = await query.orderBy('u.id', 'desc').limit(limit + 1)
    const rows = raw.slice(0, limit).map((row: Record<string, unknown>) => this.#row(row))
    const last = rows.at(-1)
    return { rows, next: raw.length > limit && last ? String(last.id) : null }
  }

  async find(id: number): Promise<UnmatchedRow | null> {
    const row = await this.#select().where('u.id', id).first()
    return row ? this.#row(row) : null
  }

  /** How many wait for an operator (dashboard, navigation). */
  async openCount(): Promise<number> {
    const [row] = await db
      .from('unmatched_payments')
      .whereNull('dismissed_at')
      .whereNull('assigned_at')
      .count('* as total')
    return Number(row.total)
  }

  /**
   * Pays the order `tradeId` with this transfer. Refused unless the row is
   * open, the order is one `orders:mark-paid` may repair (OrderAdmin) and
   * the row's network, receiving address, token and amount are the order's.
   * Then it is `orders:mark-paid` itself (OrderAdmin.markPaid): the chain
   * plugin confirms the transfer, the payment path refuses a reference that
   * already paid an order, and the payment, the row's assignment and both
   * audit rows (unmatched.assign, order.mark_paid) commit together or not
   * at all.
   */
  async assign(id: number, tradeId: string): Promise<MarkPaidResult> {
    const payment = await this.#open(id)
    if (!assignableKind(payment.kind)) {
      throw new OperatorError(
        `Unmatched payment #${payment.id} is ${payment.kind === 'reorged' ? 'a reorganisation notice' : 'an unexplained balance change'}, not a transfer: it can only be dismissed`,
        { key: 'unmatched_not_transfer', args: { id: payment.id, kind: payment.kind } }
      )
    }
    if (tradeId.trim() === '')
      throw new OperatorError('Give the trade_id of the order this payment pays', {
        key: 'unmatched_trade_id_required',
      })
    const order = await this.orders.find(tradeId)
    const refusal = this.orders.markPaidRefusal(order)
    if (refusal) throw refusal
    this.#assertSameTransfer(payment, order)
    // The row names the transfer of its transaction (one transaction may carry several); an unreadable one names none.
    const position = payment.position === '' ? undefined : payment.position
    return this.orders.markPaid(
      order.tradeId,
      payment.reference,
      async (trx) => {
        const updated = await trx
          .knexQuery()
          .table('unmatched_payments')
          .where('id', payment.id)
          .whereNull('assigned_at')
          .whereNull('dismissed_at')
          .update({
            assigned_order_id: order.id,
            assigned_at: Date.now(),
            assigned_by: actorLabel(currentAuditContext().actor),
          })
        // Settled meanwhile by another operator: the payment is undone with this throw.
        if (Number(updated) !== 1)
          throw new OperatorError(`Unmatched payment #${payment.id} was settled meanwhile`, {
            key: 'unmatched_settled_meanwhile',
            args: { id: payment.id },
          })
        await this.audit.record(
          {
            action: 'unmatched.assign',
            subjectType: 'unmatched_payment',
            subjectId: payment.id,
            before: { state: 'open' },
            after: {
              state: 'assigned',
              tradeId: order.tradeId,
              reference: payment.reference,
              position: payment.position,
            },
          },
          trx
        )
      },
      position
    )
  }

  /** Sets an open payment aside with a note saying why (refunded, a test ...). */
  async dismiss(id: number, note: string): Promise<void> {
    const text = (note ?? '').trim()
    if (text === '')
      throw new OperatorError('Say why the payment is dismissed (a note is required)', {
        key: 'dismiss_note_required',
      })
    if (text.length > DISMISS_NOTE_MAX) {
      throw new OperatorError(`The note may be at most ${DISMISS_NOTE_MAX} characters`, {
        key: 'dismiss_note_too_long',
        args: { max: DISMISS_NOTE_MAX },
      })
    }
    const payment = await this.#open(id)
    await this.audit.change(
      async (trx) => {
        const updated = await trx
          .knexQuery()
          .table('unmatched_payments')
          .where('id', payment.id)
          .whereNull('assigned_at')
          .whereNull('dismissed_at')
          .update({
            dismissed_at: Date.now(),
            dismissed_by: actorLabel(currentAuditContext().actor),
            dismiss_note: text,
          })
        if (Number(updated) !== 1)
          throw new OperatorError(`Unmatched payment #${payment.id} was settled meanwhile`, {
            key: 'unmatched_settled_meanwhile',
            args: { id: payment.id },
          })
      },
      () => ({
        action: 'unmatched.dismiss',
        subjectType: 'unmatched_payment',
        subjectId: payment.id,
        before: { state: 'open' },
        after: { state: 'dismissed', note: text },
      })
    )
  }

  async #open(id: number): Promise<UnmatchedPayment> {
    const payment = Number.isSafeInteger(id) ? await UnmatchedPayment.find(id) : null
    if (!payment)
      throw new OperatorError(`No unmatched payment #${id}`, {
        key: 'unmatched_not_found',
        args: { id },
      })
    if (payment.assignedAt !== null) {
      const order = await db
        .from('orders')
        .where('id', payment.assignedOrderId!)
        .select('trade_id')
        .first()
      throw new OperatorError(
        `Unmatched payment #${id} is already assigned to order ${order?.trade_id ?? payment.assignedOrderId}`,
        {
          key: 'unmatched_assigned',
          args: { id, order: String(order?.trade_id ?? payment.assignedOrderId) },
        }
      )
    }
    if (payment.dismissedAt !== null)
      throw new OperatorError(`Unmatched payment #${id} was dismissed`, {
        key: 'unmatched_dismissed',
        args: { id },
      })
    return payment
  }

  /**
   * The facts the scanner recorded must be the order's. A fact the scanner
   * could not read (an unreadable transaction: amount '', token '?') is
   * left to the chain check that follows.
   */
  #assertSameTransfer(payment: UnmatchedPayment, order: Order) {
    const refuse = (what: string, { key, args }: { key: string; args: RefusalArgs }) =>
      new OperatorError(
        `Unmatched payment #${payment.id} cannot pay order ${order.tradeId}: ${what}`,
        { key, args: { id: payment.id, tradeId: order.tradeId, ...args } }
      )
    if (payment.network !== order.network) {
      throw refuse(`it was received on ${payment.network}, the order waits on ${order.network}`, {
        key: 'unmatched_other_network',
        args: { network: payment.network, orderNetwork: order.network },
      })
    }
    if (payment.toAddress !== order.receiveAddress) {
      throw refuse(
        `it was sent to ${payment.toAddress}, the order waits on ${order.receiveAddress}`,
        {
          key: 'unmatched_other_address',
          args: { address: payment.toAddress, orderAddress: order.receiveAddress },
        }
      )
    }
    if (payment.token !== '?' && payment.token !== order.token) {
      throw refuse(`it transfers ${payment.token}, the order waits for ${order.token}`, {
        key: 'unmatched_other_token',
        args: { token: payment.token, orderToken: order.token },
      })
    }
    if (isDecimalLiteral(payment.amount) && !new Decimal(payment.amount).eq(order.actualAmount)) {
      throw refuse(
        `it transfers ${payment.amount} ${payment.token}, the order waits for ${order.actualAmount} ${order.token}`,
        {
          key: 'unmatched_other_amount',
          args: {
            amount: payment.amount,
            token: payment.token,
            orderAmount: order.actualAmount,
            orderToken: order.token,
          },
        }
      )
    }
  }

  #select() {
    return db
      .from('unmatched_payments as u')
      .leftJoin('orders as o', 'o.id', 'u.assigned_order_id')
      .leftJoin('orders as r', 'r.id', 'u.order_id')
      .select('u.*', 'o.trade_id as assigned_trade_id', 'r.trade_id as order_trade_id')
  }

  #row(row: Record<string, any>): UnmatchedRow {
    const assignedAt = numberOrNull(row.assigned_at)
    const dismissedAt = numberOrNull(row.dismissed_at)
    return {
      id: Number(row.id),
      network: row.network,
      reference: row.reference,
      position: row.position ?? '',
      kind: row.kind ?? 'transfer',
      orderTradeId: row.order_trade_id ?? null,
      toAddress: row.to_address,
      token: row.token,
      amount: row.amount,
      transferTime: Number(row.transfer_time),
      reason: row.reason,
      detectedAt: Number(row.detected_at),
      state: assignedAt !== null ? 'assigned' : dismissedAt !== null ? 'dismissed' : 'open',
      assignedTradeId: row.assigned_trade_id ?? null,
      assignedAt,
      assignedBy: row.assigned_by ?? null,
      dismissedAt,
      dismissedBy: row.dismissed_by ?? null,
      dismissNote: row.dismiss_note ?? null,
    }
  }
}

const unmatchedPaymentAdmin = new UnmatchedPaymentAdmin()
export default unmatchedPaymentAdmin
