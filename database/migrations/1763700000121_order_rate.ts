import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * What priced an order (app/rates/): the rate charged (fiat per token, the
 * markup included), where it came from (`fixed`, `live: okx_p2p, coingecko`
 * or `api_url`) and the markup (`~1.02`, '' for none). Empty on orders made
 * before, and on placeholders until a network is chosen.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('orders', (table) => {
      table.string('rate', 64).notNullable().defaultTo('')
      table.string('rate_source', 255).notNullable().defaultTo('')
      table.string('rate_markup', 32).notNullable().defaultTo('')
    })
  }

  async down() {
    this.schema.alterTable('orders', (table) => {
      table.dropColumn('rate')
      table.dropColumn('rate_source')
      table.dropColumn('rate_markup')
    })
  }
}
