import type { Knex } from 'knex'
import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import { isPostgres } from '#support/database/row_lock'

type Client = QueryClientContract | TransactionClientContract

/**
 * Work shared by several processes (a chain's scan, a due callback) is
 * owned through a lease on its row: `locked_by` names the claim and
 * `locked_until` ends it. A lease is free when it has no end or its end
 * has passed, so the work of a process that died is taken over once its
 * lease runs out.
 */
export type LeaseClaim = {
  table: string
  /** Names this claim; unique per claim, so two claims never mistake each other's rows. */
  token: string
  /** Longer than the work can take, so a live holder never loses its lease. */
  leaseMs: number
  /** The rows that may be claimed (due callbacks, one network); the free-lease condition is added. */
  scope?: (query: Knex.QueryBuilder) => void
  /** Claimed first when more rows are free than `limit`. */
  orderBy?: string
  limit?: number
  now?: number
  /** Columns written with the lease. */
  set?: Record<string, unknown>
}

/**
 * Claims the free rows of `claim.scope` (at most `limit`) and returns the
 * ids it now holds. One UPDATE: on PostgreSQL its row choice is
 * `FOR UPDATE SKIP LOCKED` (rows another claimer is taking are passed over,
 * not waited for); SQLite has one writer per database, so the statement is
 * atomic on its own. Either way two concurrent claims never get one row.
 */
export async function claimLeases(
  claim: LeaseClaim,
  client: Client = db.connection()
): Promise<number[]> {
  const now = claim.now ?? Date.now()
  const claimable = (query: Knex.QueryBuilder) => {
    claim.scope?.(query)
    return query.where((free) => free.whereNull('locked_until').orWhere('locked_until', '<', now))
  }
  const chosen = claimable(client.knexQuery().from(claim.table)).select('id')
  if (claim.orderBy) chosen.orderBy(claim.orderBy)
  if (claim.limit !== undefined) chosen.limit(claim.limit)
  if (isPostgres(client)) chosen.forUpdate().skipLocked()

  // The outer statement checks the lease again as the row is written; it is
  // driven by the chosen ids alone (repeating the whole scope there let
  // SQLite's planner walk every row in scope, with its subqueries, to find
  // the few chosen).
  const update = client
    .knexQuery()
    .table(claim.table)
    .where((free) => free.whereNull('locked_until').orWhere('locked_until', '<', now))
  if (isPostgres(client)) {
    // Chosen once (a MATERIALIZED CTE): as a plain IN subquery the planner
    // may run the LIMIT … SKIP LOCKED choice again for every outer row, and
    // each run skips the rows the previous ones locked, so far more than
    // `limit` rows were claimed.
    update
      .withMaterialized('lease_chosen', chosen)
      .whereIn('id', (ids) => ids.select('id').from('lease_chosen'))
  } else update.whereIn('id', chosen)
  const rows: { id: number | string }[] = await update
    .update({ ...claim.set, locked_by: claim.token, locked_until: now + claim.leaseMs })
    .returning('id')
  return rows.map((row) => Number(row.id))
}

/**
 * Ends the leases of `token` (within `scope`) writing `changes` with it.
 * Returns how many rows it still held: 0 means the lease ran out and
 * another claimer took the row, whose work then must not be overwritten.
 */
export type LeaseRelease = {
  table: string
  token: string
  scope?: (query: Knex.QueryBuilder) => void
  /** Columns written as the lease ends (the work's result). */
  changes?: Record<string, unknown>
}

export async function releaseLeases(
  release: LeaseRelease,
  client: Client = db.connection()
): Promise<number> {
  const query = client.knexQuery().table(release.table).where('locked_by', release.token)
  release.scope?.(query)
  const updated = await query.update({ ...release.changes, locked_by: null, locked_until: null })
  return Number(updated)
}
