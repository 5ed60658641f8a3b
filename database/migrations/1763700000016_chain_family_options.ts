import { BaseSchema } from '@adonisjs/lucid/schema'
import type { QueryClientContract } from '@adonisjs/lucid/types/database'

/** The default of the former `chains.block_range` setting. */
const DEFAULT_BLOCK_RANGE = 1000

/**
 * Fills options of the EVM chains from chain_id and the block range
 * setting, then drops that setting. Exported for its test.
 */
export async function moveEvmOptions(db: QueryClientContract) {
  const stored = await db.from('settings').where('key', 'chains.block_range').first()
  const parsed = stored ? Number.parseInt(String(stored.value), 10) : Number.NaN
  const blockRange =
    Number.isInteger(parsed) && parsed >= 1 && parsed <= 100_000 ? parsed : DEFAULT_BLOCK_RANGE
  const chains = await db.from('chains').where('family', 'evm').select('id', 'chain_id')
  for (const chain of chains) {
    const options: Record<string, number> = { blockRange }
    if (chain.chain_id !== null && chain.chain_id !== undefined)
      options.chainId = Number(chain.chain_id)
    await db
      .from('chains')
      .where('id', chain.id)
      .update({ options: JSON.stringify(options) })
  }
  await db.from('settings').where('key', 'chains.block_range').delete()
}

/**
 * Family-specific data moves into a per-chain JSON `options` column, read
 * and validated by the chain family (chain:set --option key=value). Today's
 * values are kept: an EVM chain's `chain_id` becomes options.chainId and
 * the `chains.block_range` setting (its stored value, or its default)
 * becomes options.blockRange of every EVM chain. chain_id stays, unused,
 * so that a rollback loses nothing.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.alterTable('chains', (table) => {
      table.text('options').notNullable().defaultTo('{}')
    })
    this.defer((db) => moveEvmOptions(db))
  }

  async down() {
    this.schema.alterTable('chains', (table) => {
      table.dropColumn('options')
    })
  }
}
