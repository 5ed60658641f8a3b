import { BaseSchema } from '@adonisjs/lucid/schema'

export default class extends BaseSchema {
  async up() {
    // API key of the chain's RPC service (e.g. TronGrid's TRON-PRO-API-KEY).
    this.schema.alterTable('chains', (table) => {
      table.string('api_key', 255).notNullable().defaultTo('')
    })

    // Where each network's scanner stopped (block, slot, lt or timestamp, in
    // the family's own JSON form), so payments made while the service was
    // down are found after a restart.
    this.schema.createTable('chain_cursors', (table) => {
      table.bigIncrements('id')
      table.string('network', 32).notNullable().unique()
      table.text('cursor').notNullable().defaultTo('')
      table.boolean('caught_up').notNullable().defaultTo(true)
      table.bigInteger('last_scan_at').notNullable().defaultTo(0)
      table.text('last_error').notNullable().defaultTo('')
      table.string('locked_by', 255).nullable()
      table.bigInteger('locked_until').nullable()
      table.bigInteger('updated_at').notNullable()
    })

    // Incoming transfers to our wallets that paid no order: kept for the
    // operator (wrong amount, too late, unknown payer), never dropped.
    this.schema.createTable('unmatched_payments', (table) => {
      table.bigIncrements('id')
      table.string('network', 32).notNullable()
      table.string('reference', 255).notNullable()
      table.string('to_address', 128).notNullable()
      table.string('token', 16).notNullable()
      // Text: on-chain amounts may carry 18 decimals, more than SQLite's
      // REAL keeps exactly; this record is for reading, not for arithmetic.
      table.string('amount', 80).notNullable()
      table.bigInteger('transfer_time').notNullable()
      table.string('reason', 255).notNullable()
      table.bigInteger('detected_at').notNullable()
      table.unique(['network', 'reference', 'to_address', 'token'])
      table.index(['detected_at'])
    })
  }

  async down() {
    this.schema.dropTableIfExists('unmatched_payments')
    this.schema.dropTableIfExists('chain_cursors')
    this.schema.alterTable('chains', (table) => {
      table.dropColumn('api_key')
    })
  }
}
