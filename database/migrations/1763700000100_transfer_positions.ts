import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * One reference per transfer, not per transaction: an exchange's batch
 * withdrawal, a disperse contract or a Solana transaction with several
 * transfer instructions pays several orders at once. A transfer is its
 * transaction's reference (the hash: what `block_transaction_id` keeps)
 * plus its position in that transaction (`log:7`, `value`, `ix:2.1` ...).
 *
 * Rows written before have position '' and stand for the whole
 * transaction: no transfer of a transaction that paid an order before this
 * change can pay another one after it.
 *
 * The block a payment came from is kept with it (chains with blocks), so
 * that a reorganisation that replaces that block is flagged for the
 * operator (payment_references.reorged_at, an unmatched_payments row of
 * kind `reorged` naming the order). unmatched_payments gains a kind:
 * `transfer` (paid nothing), `unreadable` (could not be read),
 * `unexplained` (a balance rose by more than the transfers seen) and
 * `reorged`.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('payment_references', (table) => {
      table.dropUnique(['network', 'reference'])
    })
    this.schema.alterTable('payment_references', (table) => {
      table.string('position', 64).notNullable().defaultTo('')
      // The block (slot ...) height and hash; a reorganisation is found by height.
      table.bigInteger('block_number').nullable()
      table.string('block_hash', 128).nullable()
      table.bigInteger('reorged_at').nullable()
      table.unique(['network', 'reference', 'position'])
    })

    this.schema.alterTable('unmatched_payments', (table) => {
      table.dropUnique(['network', 'reference', 'to_address', 'token'])
    })
    this.schema.alterTable('unmatched_payments', (table) => {
      table.string('position', 64).notNullable().defaultTo('')
      table.string('kind', 16).notNullable().defaultTo('transfer')
      // The order a `reorged` row is about (an order already paid); null for the other kinds.
      table.bigInteger('order_id').unsigned().nullable().references('id').inTable('orders')
      table.unique(['network', 'reference', 'position', 'to_address', 'token', 'kind'])
    })

    this.schema.alterTable('payment_sightings', (table) => {
      table.dropUnique(['network', 'reference', 'to_address'])
    })
    this.schema.alterTable('payment_sightings', (table) => {
      table.string('position', 64).notNullable().defaultTo('')
      table.unique(['network', 'reference', 'position', 'to_address'])
    })
  }

  async down() {
    this.schema.alterTable('payment_sightings', (table) => {
      table.dropUnique(['network', 'reference', 'position', 'to_address'])
      table.dropColumn('position')
    })
    this.schema.alterTable('payment_sightings', (table) => {
      table.unique(['network', 'reference', 'to_address'])
    })
    this.schema.alterTable('unmatched_payments', (table) => {
      table.dropUnique(['network', 'reference', 'position', 'to_address', 'token', 'kind'])
      table.dropForeign(['order_id'])
      table.dropColumn('order_id')
      table.dropColumn('kind')
      table.dropColumn('position')
    })
    this.schema.alterTable('unmatched_payments', (table) => {
      table.unique(['network', 'reference', 'to_address', 'token'])
    })
    this.schema.alterTable('payment_references', (table) => {
      table.dropUnique(['network', 'reference', 'position'])
      table.dropColumn('reorged_at')
      table.dropColumn('block_hash')
      table.dropColumn('block_number')
      table.dropColumn('position')
    })
    this.schema.alterTable('payment_references', (table) => {
      table.unique(['network', 'reference'])
    })
  }
}
