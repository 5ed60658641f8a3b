import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * A console account can be disabled (admins included): while
 * `disabled_at` is set it cannot sign in and its sessions end on their
 * next request. Null (every existing row): enabled.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('users', (table) => {
      table.bigInteger('disabled_at').nullable()
    })
  }

  async down() {
    this.schema.alterTable('users', (table) => {
      table.dropColumn('disabled_at')
    })
  }
}
