import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * What the console's dashboard reads (app/services/admin/dashboard_stats.ts)
 * besides the orders' (created_at, id) index of the orders list
 * (1763700000040_console_order_indexes.ts):
 * - callback attempts by time, for the delivery success rate of a period;
 * - where each chain stood at its last scan: the head the node reported
 *   and the newest block (slot…) the cursor covers, in the family's own
 *   numbering, so the lag is shown without asking the node. NULL when the
 *   family does not follow block numbers or has not scanned since.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('callback_attempts', (table) => {
      table.index(['started_at'], 'callback_attempts_started_at_index')
    })
    this.schema.alterTable('chain_cursors', (table) => {
      table.string('head_height', 40).nullable()
      table.string('scanned_height', 40).nullable()
      table.bigInteger('heights_at').nullable()
    })
  }

  async down() {
    this.schema.alterTable('chain_cursors', (table) => {
      table.dropColumn('heights_at')
      table.dropColumn('scanned_height')
      table.dropColumn('head_height')
    })
    this.schema.alterTable('callback_attempts', (table) => {
      table.dropIndex(['started_at'], 'callback_attempts_started_at_index')
    })
  }
}
