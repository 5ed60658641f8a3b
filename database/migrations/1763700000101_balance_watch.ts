import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The balance watch (app/services/balance_watch.ts): no incoming value
 * left unseen. Each watched address's balance in each enabled token is
 * read at most once per `chains.balance_check_minutes`, as of a height in
 * the family's numbering; the amounts the scanner saw coming in are kept
 * until a reading covers them. A rise larger than what was seen is put in
 * the unmatched inbox ("unexplained incoming amount").
 */
export default class extends BaseSchema {
  async up() {
    // The last reading per network, address and token ('' contract: the native coin).
    this.schema.createTable('balance_readings', (table) => {
      table.bigIncrements('id')
      table.string('network', 32).notNullable()
      table.string('address', 128).notNullable()
      table.string('contract', 128).notNullable()
      // Text: token units, exact (18 decimals and more); compared in code.
      table.string('amount', 80).notNullable()
      table.string('height', 40).notNullable()
      table.bigInteger('read_at').notNullable()
      table.unique(['network', 'address', 'contract'])
    })

    // Incoming amounts seen and not yet covered by a reading.
    this.schema.createTable('balance_seen', (table) => {
      table.bigIncrements('id')
      table.string('network', 32).notNullable()
      table.string('address', 128).notNullable()
      table.string('contract', 128).notNullable()
      table.string('reference', 255).notNullable()
      table.string('position', 64).notNullable()
      table.string('amount', 80).notNullable()
      table.string('height', 40).notNullable()
      table.bigInteger('seen_at').notNullable()
      table.unique(['network', 'address', 'contract', 'reference', 'position'])
    })
  }

  async down() {
    this.schema.dropTableIfExists('balance_seen')
    this.schema.dropTableIfExists('balance_readings')
  }
}
