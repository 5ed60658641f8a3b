import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * A merchant's order numbers are its own: order_id is unique among the
 * parent orders of one API key (pid), not across all merchants, so one
 * merchant never gets 10002 for another's number (nor learns it exists).
 * Existing rows already satisfy the narrower index (the old one was wider).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.raw('DROP INDEX IF EXISTS orders_order_id_unique')
    // Children repeat their parent's order_id, so they stay out of the index.
    this.schema.raw(
      'CREATE UNIQUE INDEX orders_pid_order_id_unique ON orders (pid, order_id) WHERE parent_id IS NULL'
    )
  }

  async down() {
    // Fails if two merchants have since used the same order number.
    this.schema.raw('DROP INDEX IF EXISTS orders_pid_order_id_unique')
    this.schema.raw(
      'CREATE UNIQUE INDEX orders_order_id_unique ON orders (order_id) WHERE parent_id IS NULL'
    )
  }
}
