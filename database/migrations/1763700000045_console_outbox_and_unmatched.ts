import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The console's outbox and unmatched-payment pages.
 * - How an operator settled an unmatched payment: assigned to the order it
 *   pays (through the payment path), or dismissed with a note (refunded
 *   elsewhere, a test, not ours). A row is settled at most once.
 * - The outbox's counts per state (pending / held / failed / delivered)
 *   read an index, not the table.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('callbacks', (table) => {
      table.index(['status', 'format'], 'callbacks_status_format')
    })

    this.schema.alterTable('unmatched_payments', (table) => {
      table.bigInteger('assigned_order_id').unsigned().nullable().references('id').inTable('orders')
      table.bigInteger('assigned_at').nullable()
      table.string('assigned_by', 280).nullable()
      table.bigInteger('dismissed_at').nullable()
      table.string('dismissed_by', 280).nullable()
      table.text('dismiss_note').nullable()
      // The console lists the rows still waiting, newest first.
      table.index(['dismissed_at', 'assigned_at', 'id'], 'unmatched_payments_open')
    })
  }

  async down() {
    this.schema.alterTable('callbacks', (table) => {
      table.dropIndex(['status', 'format'], 'callbacks_status_format')
    })
    this.schema.alterTable('unmatched_payments', (table) => {
      table.dropIndex(['dismissed_at', 'assigned_at', 'id'], 'unmatched_payments_open')
      table.dropForeign(['assigned_order_id'])
      table.dropColumn('assigned_order_id')
      table.dropColumn('assigned_at')
      table.dropColumn('assigned_by')
      table.dropColumn('dismissed_at')
      table.dropColumn('dismissed_by')
      table.dropColumn('dismiss_note')
    })
  }
}
