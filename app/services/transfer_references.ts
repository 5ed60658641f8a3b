import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import type { DatabaseQueryBuilderContract } from '@adonisjs/lucid/types/querybuilder'

/**
 * A transfer is its transaction's reference plus its position in that
 * transaction (`log:7`, `value`, `ix:2` ...). A payment_references row with
 * position '' stands for the whole transaction: rows written before
 * positions existed, and payments whose source names no position (a
 * provider's order id). The one rule of "this transfer was already used",
 * for the payment path (10007), the matcher and the sightings.
 */

export type UsedReference = {
  id: number
  order_id: number
  position: string
  block_number: string | null
  block_hash: string | null
  reorged_at: number | null
}

/** Restricts a payment_references query to the rows that stand for this transfer. */
export function sameTransfer<Q extends DatabaseQueryBuilderContract<any>>(
  query: Q,
  network: string,
  reference: string,
  position: string
): Q {
  query.where('network', network).where('reference', reference)
  // '' on either side is the whole transaction: it covers every position.
  if (position !== '') query.whereIn('position', [position, ''])
  return query
}

/** The payment that already used this transfer, or null. */
export async function usedReference(
  network: string,
  reference: string,
  position: string,
  client: QueryClientContract | TransactionClientContract = db.connection()
): Promise<UsedReference | null> {
  const row = await sameTransfer(client.from('payment_references'), network, reference, position)
    .orderBy('id')
    .first()
  if (!row) return null
  return {
    id: Number(row.id),
    order_id: Number(row.order_id),
    position: row.position,
    block_number: row.block_number ?? null,
    block_hash: row.block_hash ?? null,
    reorged_at:
      row.reorged_at === null || row.reorged_at === undefined ? null : Number(row.reorged_at),
  }
}

/** A transfer's position as people read it (console, messages): "log 7", "instruction 2.1" ... */
export function describePosition(position: string): string {
  if (position === '') return 'whole transaction'
  const [kind, rest] = [
    position.slice(0, position.indexOf(':')),
    position.slice(position.indexOf(':') + 1),
  ]
  if (position.indexOf(':') === -1)
    return position === 'value'
      ? 'transaction value'
      : position === 'in'
        ? 'incoming message'
        : position
  if (kind === 'log') return `log ${rest}`
  if (kind === 'ix') return `instruction ${rest}`
  if (kind === 'trace') return `internal transfer ${rest}`
  if (kind === 'internal') return `internal transaction ${rest}`
  return position
}
