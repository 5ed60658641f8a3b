import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'

/**
 * `INSERT ... ON CONFLICT DO NOTHING RETURNING id` on either database; tells
 * whether this call inserted the row (true) or it was already there.
 *
 * Lucid drops RETURNING on SQLite, so this goes through the connection's
 * knex builder (bound to the transaction when `client` is one). Unlike
 * catching a unique violation, DO NOTHING leaves a PostgreSQL transaction
 * usable, which is what lets the amount allocator try the next candidate.
 */
export async function insertUnlessPresent(
  client: QueryClientContract | TransactionClientContract,
  table: string,
  row: Record<string, unknown>,
  conflictColumns: string | string[]
): Promise<{ inserted: boolean; id: number | null }> {
  const returned: { id?: number | string }[] = await client
    .knexQuery()
    .table(table)
    .insert(row)
    .onConflict(conflictColumns as string[])
    .ignore()
    .returning('id')
  if (returned.length === 0) return { inserted: false, id: null }
  const id = returned[0]?.id
  return { inserted: true, id: id === undefined ? null : Number(id) }
}
