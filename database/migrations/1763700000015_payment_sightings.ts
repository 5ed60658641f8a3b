import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Explorer links for the default networks (existing installs; new ones get
 * them from default_chains.ts). `{tx}` stands for the transaction.
 */
const EXPLORER_TX_URLS: Record<string, string> = {
  tron: 'https://tronscan.org/#/transaction/{tx}',
  ethereum: 'https://etherscan.io/tx/{tx}',
  bsc: 'https://bscscan.com/tx/{tx}',
  polygon: 'https://polygonscan.com/tx/{tx}',
  plasma: 'https://plasmascan.to/tx/{tx}',
  solana: 'https://explorer.solana.com/tx/{tx}',
  ton: 'https://tonviewer.com/transaction/{tx}',
}

export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('chains', (table) => {
      table.string('explorer_tx_url', 500).notNullable().defaultTo('')
    })
    this.defer(async (db) => {
      for (const [network, template] of Object.entries(EXPLORER_TX_URLS)) {
        await db
          .from('chains')
          .where('network', network)
          .where('explorer_tx_url', '')
          .update({ explorer_tx_url: template })
      }
    })

    // Transfers the scanner saw to an order's address, of its exact amount
    // and token within its life, that are not yet deep enough to pay it:
    // the payer's page says "payment seen, n of m confirmations". Never a
    // payment; rewritten by each scan (gone once confirmed or reorganised out).
    this.schema.createTable('payment_sightings', (table) => {
      table.bigIncrements('id')
      table.string('network', 32).notNullable()
      table.string('reference', 255).notNullable()
      table.string('to_address', 128).notNullable()
      table.string('token', 16).notNullable()
      // Text like unmatched_payments.amount: for reading, not arithmetic.
      table.string('amount', 80).notNullable()
      table
        .bigInteger('order_id')
        .unsigned()
        .notNullable()
        .references('id')
        .inTable('orders')
        .onDelete('CASCADE')
      table.integer('confirmations').notNullable()
      table.bigInteger('transfer_time').notNullable()
      // First and latest scan that saw it.
      table.bigInteger('seen_at').notNullable()
      table.bigInteger('last_seen_at').notNullable()
      table.unique(['network', 'reference', 'to_address'])
      table.index(['order_id'])
    })
  }

  async down() {
    this.schema.dropTableIfExists('payment_sightings')
    this.schema.alterTable('chains', (table) => {
      table.dropColumn('explorer_tx_url')
    })
  }
}
