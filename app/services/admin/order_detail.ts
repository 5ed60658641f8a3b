import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import AmountLock from '#models/amount_lock'
import Callback from '#models/callback'
import CallbackAttempt from '#models/callback_attempt'
import Chain from '#models/chain'
import PaymentSighting from '#models/payment_sighting'
import ProviderOrder from '#models/provider_order'
import { explorerUrl } from '#chains/explorer_links'
import auditLog, { type AuditRow } from '#services/audit/audit_log'
import orderAdmin from '#services/operators/order_admin'
import { describePosition } from '#services/transfer_references'
import type { I18n } from '@adonisjs/i18n'
import type { OperatorError } from '#support/cli/operator_error'

/** Position kinds with a number ("log:3"), each with its words in the console's catalogue. */
const NUMBERED_POSITIONS = new Set(['log', 'ix', 'trace', 'internal'])

/**
 * A transfer's position in the admin's words ("log 3", "日志 3"), as
 * describePosition says it in English for the messages and the commands.
 */
export function positionInWords(i18n: I18n, position: string): string {
  if (position === '') return i18n.t('admin.orders.position.whole')
  const colon = position.indexOf(':')
  if (colon === -1) {
    if (position === 'value') return i18n.t('admin.orders.position.value')
    if (position === 'in') return i18n.t('admin.orders.position.in')
    return position
  }
  const kind = position.slice(0, colon)
  if (!NUMBERED_POSITIONS.has(kind)) return position
  return i18n.t('admin.orders.position.' + kind, { n: position.slice(colon + 1) })
}

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
  /** Which transfer of the transaction paid ('' for the whole transaction) and that in words ("log 3"). */
  position: string
  positionText: string
  /** The block it was credited from (now: where it was found again after a reorganisation); null when not kept. */
  block: Block | null
  /** When a reorganisation replaced the block it was credited from; null: never. */
  reorgedAt: number | null
}

export type Block = { number: string; hash: string | null }

/**
 * A payment of the order (or its child) credited from a block that a
 * reorganisation replaced (app/services/reorg_flags.ts): the block it came
 * from, whether the transfer was found again in the new chain, and the
 * notice in the unmatched inbox.
 */
export type ReorgNotice = {
  /** The order the payment is recorded on (this one or its child). */
  tradeId: string
  reference: string
  positionText: string
  /** The replaced block; null when neither the audit log nor the notice names it. */
  replacedBlock: Block | null
  reorgedAt: number
  /** Where the transfer is in the new chain; null: not found again (yet). */
  foundAgain: Block | null
  /** The `reorged` row of the unmatched inbox, with its state. */
  inbox: { id: number; state: 'open' | 'assigned' | 'dismissed' } | null
}

export type OrderDetail = {
  order: Order
  parent: Order | null
  child: Order | null
  /** The amount reservation while it lasts (it outlives the order by the chain's grace). */
  amountLock: AmountLock | null
  /** References that paid it; a parent paid through its child shows the child's. */
  references: PaymentReference[]
  /** Those of its references whose block a reorganisation replaced. */
  reorgs: ReorgNotice[]
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
  /** The same refusals as errors: the console says them in the admin's language (refusalText). */
  refusalErrors: {
    markPaid: OperatorError | null
    close: OperatorError | null
    resendCallback: OperatorError | null
  }
}

const HISTORY_ROWS = 50

function blockOf(number: unknown, hash: unknown): Block | null {
  if (number === null || number === undefined || number === '') return null
  return { number: String(number), hash: typeof hash === 'string' && hash !== '' ? hash : null }
}

function parsedJson(text: unknown): Record<string, any> {
  if (text !== null && typeof text === 'object') return text as Record<string, any>
  if (typeof text !== 'string') return {}
  try {
    return JSON.parse(text) ?? {}
  } catch {
    return {}
  }
}

/** "block 120 (0xabcdef12…)" in a notice's reason (reorg_flags.ts), after `lead`. */
function blockInReason(reason: string, lead: string): Block | null {
  const match = new RegExp(`${lead} block (\\d+) \\(([^)]*)\\)`).exec(reason)
  if (!match) return null
  return { number: match[1], hash: match[2] === 'hash unknown' ? null : match[2] }
}

/**
 * The reorganisation of one payment reference: the replaced block from the
 * audit row written when it was flagged (order.reorged, before the scanner
 * moved the reference to the block it was found again in), else from the
 * inbox notice's reason; found again when the reference's block is no
 * longer the replaced one (or the notice says where).
 */
function reorgNotice(
  row: Record<string, any>,
  tradeId: string,
  flagged: Record<string, any>[],
  notices: Record<string, any>[]
): ReorgNotice {
  const position = row.position ?? ''
  const audit = flagged
    .map((entry) => ({ subject: entry.subject_id, before: parsedJson(entry.before) }))
    .find(
      (entry) =>
        entry.subject === tradeId &&
        entry.before.reference === row.reference &&
        (entry.before.position ?? '') === position
    )
  const notice = notices.find(
    (entry) =>
      Number(entry.order_id) === Number(row.order_id) &&
      entry.reference === row.reference &&
      (entry.position ?? '') === position
  )
  const current = blockOf(row.block_number, row.block_hash)
  let replaced: Block | null = current
  let foundAgain: Block | null = null
  if (audit) {
    replaced = blockOf(audit.before.block, audit.before.blockHash)
    const moved =
      current !== null &&
      replaced !== null &&
      (current.number !== replaced.number || current.hash !== replaced.hash)
    foundAgain = moved ? current : null
  } else if (notice) {
    replaced = blockInReason(notice.reason, 'credited from')
    foundAgain = blockInReason(notice.reason, 'in the new chain at')
  }
  return {
    tradeId,
    reference: row.reference,
    positionText: describePosition(position),
    replacedBlock: replaced,
    reorgedAt: Number(row.reorged_at),
    foundAgain,
    inbox: notice
      ? {
          id: Number(notice.id),
          state:
            notice.assigned_at !== null
              ? 'assigned'
              : notice.dismissed_at !== null
                ? 'dismissed'
                : 'open',
        }
      : null,
  }
}

/** Everything the console's order page shows about one order. */
export class OrderDetails {
  constructor(
    protected orders = orderAdmin,
    protected audit = auditLog
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
        .whereIn(
          'order_id',
          pair.map((entry) => entry.id)
        )
        .orderBy('id'),
      ProviderOrder.findBy('order_id', order.id),
      PaymentSighting.query().where('order_id', order.id).orderBy('id'),
      order.network ? Chain.findBy('network', order.network) : null,
    ])
    const callbackOrder = parent ?? order
    const refusalErrors = {
      markPaid: this.orders.markPaidRefusal(order),
      close: this.orders.closeRefusal(order),
      resendCallback: this.orders.resendRefusal(callbackOrder),
    }
    const callback = await Callback.findBy('order_id', callbackOrder.id)
    const attempts = callback
      ? await CallbackAttempt.query().where('callback_id', callback.id).orderBy('id', 'asc')
      : []
    const history = await this.audit.list(
      { subjectType: 'order', subjectId: order.tradeId },
      { limit: HISTORY_ROWS }
    )
    const chains = new Map<string, Chain | null>([[order.network, chain]])
    const chainOf = async (network: string) => {
      if (!chains.has(network)) chains.set(network, await Chain.findBy('network', network))
      return chains.get(network) ?? null
    }
    const shownReferences: PaymentReference[] = []
    const tradeIdOf = (row: Record<string, any>) =>
      pair.find((entry) => entry.id === Number(row.order_id))!.tradeId
    for (const row of references) {
      shownReferences.push({
        tradeId: tradeIdOf(row),
        network: row.network,
        reference: row.reference,
        source: row.source,
        createdAt: Number(row.created_at),
        explorerUrl: explorerUrl(await chainOf(row.network), row.reference),
        position: row.position ?? '',
        positionText: describePosition(row.position ?? ''),
        block: blockOf(row.block_number, row.block_hash),
        reorgedAt:
          row.reorged_at === null || row.reorged_at === undefined ? null : Number(row.reorged_at),
      })
    }
    const reorged = references.filter(
      (row) => row.reorged_at !== null && row.reorged_at !== undefined
    )
    const [flagged, notices] =
      reorged.length === 0
        ? [[], []]
        : await Promise.all([
            db
              .from('audit_log')
              .where('subject_type', 'order')
              .whereIn(
                'subject_id',
                pair.map((entry) => entry.tradeId)
              )
              .where('action', 'order.reorged')
              .orderBy('id')
              .select('subject_id', 'before'),
            db
              .from('unmatched_payments')
              .where('kind', 'reorged')
              .whereIn(
                'order_id',
                pair.map((entry) => entry.id)
              )
              .orderBy('id', 'desc')
              .select(
                'id',
                'order_id',
                'reference',
                'position',
                'reason',
                'assigned_at',
                'dismissed_at'
              ),
          ])
    const reorgs = reorged.map((row) => reorgNotice(row, tradeIdOf(row), flagged, notices))
    return {
      order,
      parent,
      child,
      amountLock,
      references: shownReferences,
      reorgs,
      explorerUrl: order.isOnChain ? explorerUrl(chain, order.blockTransactionId) : '',
      providerOrder,
      sightings,
      callbackOrder,
      callback,
      attempts,
      history: history.rows,
      refusals: {
        markPaid: refusalErrors.markPaid?.message ?? null,
        close: refusalErrors.close?.message ?? null,
        resendCallback: refusalErrors.resendCallback?.message ?? null,
      },
      refusalErrors,
    }
  }
}

const orderDetails = new OrderDetails()
export default orderDetails
