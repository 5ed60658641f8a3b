import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import { raiseNotification } from '#notifications/notifier'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'

/** unmatched_payments.reason is VARCHAR(255). */
const REASON_MAX = 255

/**
 * What an unmatched_payments row records: a transfer that paid nothing, a
 * transaction that could not be read, a balance that rose by more than the
 * transfers seen, or a payment whose block a reorganisation replaced.
 */
export type UnmatchedKind = 'transfer' | 'unreadable' | 'unexplained' | 'reorged'

export type UnmatchedEntry = {
  reference: string
  /** The transfer's position in its transaction; '' when none applies. */
  position: string
  kind: UnmatchedKind
  /** Watched address it concerns, stored form. */
  to: string
  /** Token symbol ('?' when unknown). */
  token: string
  /** Token units as text ('' when unknown). */
  amount: string
  /** When it happened (block time, or the window's end), epoch ms. */
  timestamp: number
  reason: string
  /** The (paid) order a `reorged` row is about. */
  orderId?: number | null
}

/**
 * Keeps an entry of the operators' inbox of payments (the console's
 * "Unmatched payments"): once per network, reference, position, address,
 * token and kind, however often it is seen. True when newly recorded.
 */
export async function recordUnmatched(
  network: string,
  entry: UnmatchedEntry,
  client: QueryClientContract | TransactionClientContract = db.connection()
): Promise<boolean> {
  const reason =
    entry.reason.length > REASON_MAX ? `${entry.reason.slice(0, REASON_MAX - 3)}...` : entry.reason
  const inserted: unknown[] = await client
    .knexQuery()
    .table('unmatched_payments')
    .insert({
      network,
      reference: entry.reference,
      position: entry.position,
      kind: entry.kind,
      order_id: entry.orderId ?? null,
      to_address: entry.to,
      token: entry.token,
      amount: entry.amount,
      transfer_time: entry.timestamp,
      reason,
      detected_at: Date.now(),
    })
    .onConflict(['network', 'reference', 'position', 'to_address', 'token', 'kind'])
    .ignore()
    .returning('id')
  // A reorganised payment is told as reorg.credited_order (app/services/reorg_flags.ts).
  if (inserted.length > 0 && entry.kind !== 'reorged') {
    await raiseNotification(
      'payment.unmatched',
      {
        network,
        kind: entry.kind,
        reference: entry.reference,
        to: entry.to,
        token: entry.token,
        amount: entry.amount,
        reason,
      },
      {},
      client
    )
  }
  if (inserted.length > 0) {
    logger.warn(
      {
        network,
        kind: entry.kind,
        reference: entry.reference,
        to: entry.to,
        amount: entry.amount,
        reason,
      },
      entry.kind === 'transfer'
        ? 'unmatched payment recorded'
        : `unmatched payment recorded (${entry.kind})`
    )
  }
  return inserted.length > 0
}
