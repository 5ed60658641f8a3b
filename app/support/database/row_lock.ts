import type { TransactionClientContract } from '@adonisjs/lucid/types/database'

/**
 * Takes the write lock on one row for the rest of the transaction.
 *
 * PostgreSQL: SELECT … FOR UPDATE. SQLite has one writer per database, so
 * a no-op UPDATE makes this transaction the writer now: every later read in
 * it is then current, and a concurrent process waits (busy_timeout) instead
 * of failing when it upgrades from reader to writer.
 */
export async function lockRow(trx: TransactionClientContract, table: string, id: number) {
  if (trx.dialect.name === 'postgres') {
    await trx.from(table).where('id', id).forUpdate().select('id')
  } else {
    await trx.from(table).where('id', id).update({ id })
  }
}

export function isPostgres(client: { dialect: { name: string } }) {
  return client.dialect.name === 'postgres'
}
