import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * A markup may be set for one merchant's API key (`rate:set USDT CNY ~1.05
 * --key=1001`): `api_key_id` names the key, 0 the pair's markup for every
 * key. A key's own markup wins over the pair's.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('rate_markups', (table) => {
      table.bigInteger('api_key_id').notNullable().defaultTo(0)
    })
    this.schema.alterTable('rate_markups', (table) => {
      table.dropUnique(['token', 'fiat'])
      table.unique(['token', 'fiat', 'api_key_id'])
    })
  }

  async down() {
    this.defer(async (db) => {
      await db.from('rate_markups').whereNot('api_key_id', 0).delete()
    })
    this.schema.alterTable('rate_markups', (table) => {
      table.dropUnique(['token', 'fiat', 'api_key_id'])
      table.unique(['token', 'fiat'])
    })
    this.schema.alterTable('rate_markups', (table) => {
      table.dropColumn('api_key_id')
    })
  }
}
