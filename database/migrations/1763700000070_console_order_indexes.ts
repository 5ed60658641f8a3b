import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Indexes of the console's order list (app/services/admin/order_search.ts),
 * which pages newest first by keyset (created_at DESC, id DESC) and must
 * answer in a few milliseconds with a million orders.
 *
 * - (created_at, id): the unfiltered list, a date range, any deep page.
 * - (<filter>, created_at, id) for each filter of the list form (status,
 *   network, token, pid, payment_type): the rows of one value already in
 *   list order, so a page reads ~50 index entries however rare the value is
 *   (with (created_at, id) alone, a rare value means walking the table).
 *   Several filters at once use one of them and check the others per row.
 * - search: trade_id is unique already; order_id (the merchant's number
 *   across pids: the (pid, order_id) index needs the pid); receive_address
 *   with created_at, id (an address has many orders); block_transaction_id
 *   without the unpaid orders' '' (the query says `<> ''`, so SQLite uses
 *   the partial index too).
 *
 * Existing databases may hold many orders: on PostgreSQL the indexes are
 * built CONCURRENTLY (order creation is not blocked meanwhile), hence no
 * transaction; a build interrupted earlier left an invalid index, which is
 * dropped and built again.
 */
const INDEXES: { name: string; columns: string; where?: string }[] = [
  { name: 'orders_created_at_id_index', columns: 'created_at, id' },
  { name: 'orders_status_created_at_index', columns: 'status, created_at, id' },
  { name: 'orders_network_created_at_index', columns: 'network, created_at, id' },
  { name: 'orders_token_created_at_index', columns: 'token, created_at, id' },
  { name: 'orders_pid_created_at_index', columns: 'pid, created_at, id' },
  { name: 'orders_payment_type_created_at_index', columns: 'payment_type, created_at, id' },
  { name: 'orders_order_id_index', columns: 'order_id' },
  { name: 'orders_receive_address_created_at_index', columns: 'receive_address, created_at, id' },
  {
    name: 'orders_block_transaction_id_index',
    columns: 'block_transaction_id',
    where: "block_transaction_id <> ''",
  },
]

export default class extends BaseSchema {
  static disableTransactions = true

  async up() {
    this.defer(async (db) => {
      const postgres = db.dialect.name === 'postgres'
      for (const index of INDEXES) {
        const where = index.where ? ` WHERE ${index.where}` : ''
        if (!postgres) {
          await db.rawQuery(
            `CREATE INDEX IF NOT EXISTS ${index.name} ON orders (${index.columns})${where}`
          )
          continue
        }
        const existing = await db.rawQuery(
          `SELECT i.indisvalid AS valid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
           WHERE c.relname = ? AND c.relnamespace = current_schema()::regnamespace`,
          [index.name]
        )
        const row = existing.rows[0] as { valid: boolean } | undefined
        if (row?.valid) continue
        if (row) await db.rawQuery(`DROP INDEX CONCURRENTLY IF EXISTS ${index.name}`)
        await db.rawQuery(
          `CREATE INDEX CONCURRENTLY ${index.name} ON orders (${index.columns})${where}`
        )
      }
    })
  }

  async down() {
    this.defer(async (db) => {
      for (const index of INDEXES) await db.rawQuery(`DROP INDEX IF EXISTS ${index.name}`)
    })
  }
}
