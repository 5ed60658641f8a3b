import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * A chain's WebSocket endpoint for head notifications (`chain:set --ws`):
 * a new block triggers a scan at once (app/chains/chain_watch.ts). NULL:
 * the chain is polled at its scan interval. Like the RPC URLs it may carry
 * a key and is masked wherever it is shown.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('chains', (table) => {
      table.string('ws_url', 2000).nullable()
    })
  }

  async down() {
    this.schema.alterTable('chains', (table) => {
      table.dropColumn('ws_url')
    })
  }
}
