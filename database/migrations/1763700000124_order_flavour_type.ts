import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The `type` a plugin flavour's create request gave (echoed in its
 * callbacks) is the order's `flavour_type`: the core names no plugin, so
 * the column no longer carries one flavour's name.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('orders', (table) => {
      table.renameColumn('compat_type', 'flavour_type')
    })
  }

  async down() {
    this.schema.alterTable('orders', (table) => {
      table.renameColumn('flavour_type', 'compat_type')
    })
  }
}
