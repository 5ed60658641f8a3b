import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * What a chain's runs learn about an RPC endpoint that the next runs and
 * other processes must know (app/chains/endpoint_memory.ts): a long hold
 * (a Retry-After longer than a request's timeout, or daily credits spent:
 * HTTP 402, until 00:00 UTC) and the widest eth_getLogs range it accepts
 * after refusing a wider one. Keyed by a digest of the URL and API key:
 * URLs carry keys, this table holds none.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('rpc_endpoints', (table) => {
      table.bigIncrements('id')
      table.string('network', 32).notNullable()
      table.string('endpoint_key', 64).notNullable().unique()
      table.bigInteger('hold_until').notNullable().defaultTo(0)
      table.string('hold_kind', 16).nullable()
      table.string('hold_reason', 500).notNullable().defaultTo('')
      table.integer('log_range').nullable()
      table.bigInteger('updated_at').notNullable()
      table.index(['network'])
    })
  }

  async down() {
    this.schema.dropTableIfExists('rpc_endpoints')
  }
}
