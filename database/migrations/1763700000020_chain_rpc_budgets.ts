import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * The operator's request budget of a chain's RPC endpoints (chain:set
 * --requests-per-second / --requests-per-day). NULL: the family's default
 * for the provider (its documented free tier), else the core settings.
 * A per-day of 0 means no daily cap.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('chains', (table) => {
      table.double('rpc_requests_per_second').nullable()
      table.bigInteger('rpc_requests_per_day').nullable()
    })
  }

  async down() {
    this.schema.alterTable('chains', (table) => {
      table.dropColumn('rpc_requests_per_second')
      table.dropColumn('rpc_requests_per_day')
    })
  }
}
