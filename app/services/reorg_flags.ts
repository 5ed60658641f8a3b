import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import type Chain from '#models/chain'
import type { ObservedTransfer } from '#chains/chain_family'
import auditLog from '#services/audit/audit_log'
import { recordUnmatched } from '#services/unmatched_inbox'
import { raiseNotification } from '#notifications/notifier'
import type { UsedReference } from '#services/transfer_references'
import { metrics } from '#support/runtime/metrics'

/** Rows flagged per statement (bounded lists of ids). */
const CHUNK = 200

/** A block hash as a notice shows it (the full one is in the audit log and on the payment). */
const brief = (hash: string | null) => (hash ? `${hash.slice(0, 10)}…` : 'hash unknown')

/**
 * Payments credited from blocks a reorganisation replaced. A paid order is
 * never changed silently (the merchant was told; goods may be shipped):
 * it is flagged for the operator, with the block it was credited from, in
 * the unmatched inbox (kind `reorged`, naming the order), on the order's
 * page, in the audit log and in gateway_reorged_payments_total. When the
 * scan finds the same transfer again in the new chain (most reorganised
 * transactions are included again), the flag says where; when it does not,
 * the operator knows the payment may be gone.
 */
export class ReorgFlags {
  constructor(private readonly audit = auditLog) {}

  /** Flags the network's payments credited from a block above `ancestor`, up to `replacedUpTo`. Returns how many. */
  async flag(chain: Chain, reorg: { ancestor: string; replacedUpTo: string }): Promise<number> {
    const ancestor = BigInt(reorg.ancestor)
    const top = BigInt(reorg.replacedUpTo)
    const rows: Record<string, any>[] = await db
      .from('payment_references as p')
      .join('orders as o', 'o.id', 'p.order_id')
      .where('p.network', chain.network)
      .whereNull('p.reorged_at')
      .whereNotNull('p.block_number')
      .where('p.block_number', '>', reorg.ancestor)
      .where('p.block_number', '<=', reorg.replacedUpTo)
      .select('p.*', 'o.trade_id', 'o.receive_address', 'o.token', 'o.actual_amount', 'o.paid_at')
    const flagged = rows.filter((row) => {
      const height = BigInt(row.block_number)
      return height > ancestor && height <= top
    })
    const now = Date.now()
    for (let start = 0; start < flagged.length; start += CHUNK) {
      const ids = flagged.slice(start, start + CHUNK).map((row) => row.id)
      await db
        .from('payment_references')
        .whereIn('id', ids)
        .whereNull('reorged_at')
        .update({ reorged_at: now })
    }
    for (const row of flagged) {
      const block = `block ${row.block_number} (${brief(row.block_hash)})`
      await db.transaction(async (trx) => {
        const recorded = await recordUnmatched(
          chain.network,
          {
            reference: row.reference,
            position: row.position,
            kind: 'reorged',
            orderId: Number(row.order_id),
            to: row.receive_address,
            token: row.token,
            amount: row.actual_amount,
            timestamp: Number(row.paid_at ?? now),
            reason:
              `order ${row.trade_id} was credited from ${block}, which a reorganisation replaced ` +
              `(blocks ${reorg.ancestor} and below are shared): not found again in the new chain yet`,
          },
          trx
        )
        if (recorded)
          await raiseNotification(
            'reorg.credited_order',
            {
              network: chain.network,
              trade_id: row.trade_id,
              reference: row.reference,
              block,
              amount: row.actual_amount,
              token: row.token,
            },
            {},
            trx
          )
        await this.audit.record(
          {
            action: 'order.reorged',
            subjectType: 'order',
            subjectId: row.trade_id,
            before: {
              reference: row.reference,
              position: row.position,
              block: row.block_number,
              blockHash: row.block_hash,
            },
            after: { ancestor: reorg.ancestor, replacedUpTo: reorg.replacedUpTo },
          },
          trx
        )
      })
      metrics.reorgedPayments.inc({ network: chain.network })
      logger.warn(
        {
          network: chain.network,
          trade_id: row.trade_id,
          reference: row.reference,
          block: row.block_number,
        },
        'a paid order was credited from a block a reorganisation replaced; flagged for the operator'
      )
    }
    return flagged.length
  }

  /**
   * A flagged payment's transfer seen again, in the new chain: its block is
   * recorded and the flag says where, with the old block kept in the audit
   * log. Nothing is paid again.
   */
  async foundAgain(chain: Chain, used: UsedReference, transfer: ObservedTransfer): Promise<void> {
    if (used.reorged_at === null || !transfer.block || used.block_hash === transfer.block.hash)
      return
    const order = await db.from('orders').where('id', used.order_id).select('trade_id').first()
    await db.transaction(async (trx) => {
      await trx
        .from('payment_references')
        .where('id', used.id)
        .update({ block_number: transfer.block!.number, block_hash: transfer.block!.hash })
      const flag = await trx
        .from('unmatched_payments')
        .where('network', chain.network)
        .where('kind', 'reorged')
        .where('order_id', used.order_id)
        .where('reference', transfer.reference)
        .where('position', used.position)
        .orderBy('id', 'desc')
        .first()
      if (flag) {
        const reason =
          `order ${order?.trade_id} was credited from block ${used.block_number} (${brief(used.block_hash)}), which a reorganisation replaced; ` +
          `the transfer is in the new chain at block ${transfer.block!.number} (${brief(transfer.block!.hash)})`
        await trx
          .from('unmatched_payments')
          .where('id', flag.id)
          .update({ reason: reason.slice(0, 255) })
      }
      await this.audit.record(
        {
          action: 'order.reorg_found_again',
          subjectType: 'order',
          subjectId: order?.trade_id ?? String(used.order_id),
          before: { block: used.block_number, blockHash: used.block_hash },
          after: { block: transfer.block!.number, blockHash: transfer.block!.hash },
        },
        trx
      )
    })
  }
}

const reorgFlags = new ReorgFlags()
export default reorgFlags
