import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The console language an admin chose on their account page (`en`,
 * `zh-CN`); null: from the browser's Accept-Language.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('users', (table) => {
      table.string('locale', 16).nullable()
    })
  }

  async down() {
    this.schema.alterTable('users', (table) => {
      table.dropColumn('locale')
    })
  }
}
