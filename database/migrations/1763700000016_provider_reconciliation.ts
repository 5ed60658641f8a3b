import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Reconciliation of provider payments whose notification never came: how
 * often the provider was asked, and when to ask next (backing off).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('provider_orders', (table) => {
      table.integer('reconcile_attempts').notNullable().defaultTo(0)
      table.bigInteger('reconcile_next_at').nullable()
    })
  }

  async down() {
    this.schema.alterTable('provider_orders', (table) => {
      table.dropColumn('reconcile_attempts')
      table.dropColumn('reconcile_next_at')
    })
  }
}
