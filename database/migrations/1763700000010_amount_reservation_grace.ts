import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Amount reservations outlive their orders by a grace window that depends
 * on the chain (confirmations × block time + scan interval + a margin), so
 * chains learn their block time. Known networks get theirs; any other keeps
 * a conservative 12 s (a longer grace is the safe side).
 */
const BLOCK_TIME_MS: Record<string, number> = {
  tron: 3000,
  ethereum: 12000,
  bsc: 3000,
  polygon: 2000,
  plasma: 1000,
  solana: 400,
  ton: 5000,
}

export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('chains', (table) => {
      table.integer('block_time_ms').notNullable().defaultTo(12000)
    })
    this.defer(async (db) => {
      for (const [network, ms] of Object.entries(BLOCK_TIME_MS)) {
        await db.from('chains').where('network', network).update({ block_time_ms: ms })
      }
    })
    // The reclaim of reservations whose grace has passed reads by network and
    // end of life.
    this.schema.alterTable('amount_locks', (table) => {
      table.index(['network', 'expires_at'], 'amount_locks_network_expires_at_index')
    })
  }

  async down() {
    this.schema.alterTable('amount_locks', (table) => {
      table.dropIndex(['network', 'expires_at'], 'amount_locks_network_expires_at_index')
    })
    this.schema.alterTable('chains', (table) => {
      table.dropColumn('block_time_ms')
    })
  }
}
