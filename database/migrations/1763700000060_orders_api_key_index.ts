import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Order counts per API key (created, paid) for the console's key list:
 * one grouped query that PostgreSQL answers from this index alone.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('orders', (table) => {
      table.index(['api_key_id', 'status', 'parent_id'], 'orders_api_key_status_parent_index')
    })
  }

  async down() {
    this.schema.alterTable('orders', (table) => {
      table.dropIndex(['api_key_id', 'status', 'parent_id'], 'orders_api_key_status_parent_index')
    })
  }
}
