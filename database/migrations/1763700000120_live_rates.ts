import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Live exchange rates from several sources (app/rates/): each source's last
 * answer per pair (rate_answers), the pair's rate the workers computed from
 * them (rate_current: the median, or why the pair is refused), a sampled
 * history for the console's chart (rate_history), and the operators'
 * markups on live rates (rate_markups: `~1.02`, `+0.3`, `-0.2`).
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('rate_answers', (table) => {
      table.bigIncrements('id')
      table.string('source', 32).notNullable()
      table.string('token', 16).notNullable()
      table.string('fiat', 16).notNullable()
      // Fiat per token after any cross (decimal text); null when the source failed for it.
      table.string('price', 64).nullable()
      // What the source quoted in before the cross (the fiat itself, USD, USDT).
      table.string('quote', 16).notNullable().defaultTo('')
      table.bigInteger('fetched_at').notNullable()
      table.text('error').notNullable().defaultTo('')
      table.unique(['source', 'token', 'fiat'])
    })
    this.schema.createTable('rate_current', (table) => {
      table.bigIncrements('id')
      table.string('token', 16).notNullable()
      table.string('fiat', 16).notNullable()
      table.string('rate', 64).nullable()
      table.boolean('ok').notNullable()
      table.text('reason').notNullable().defaultTo('')
      // JSON: { used, dropped: [{ source, price, deviation_percent }], stale, failed }
      table.text('sources').notNullable().defaultTo('{}')
      table.bigInteger('computed_at').notNullable()
      table.unique(['token', 'fiat'])
    })
    this.schema.createTable('rate_history', (table) => {
      table.bigIncrements('id')
      table.string('token', 16).notNullable()
      table.string('fiat', 16).notNullable()
      table.string('rate', 64).notNullable()
      table.bigInteger('at').notNullable()
      table.index(['token', 'fiat', 'at'])
    })
    this.schema.createTable('rate_markups', (table) => {
      table.bigIncrements('id')
      table.string('token', 16).notNullable()
      table.string('fiat', 16).notNullable()
      table.string('markup', 32).notNullable()
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()
      table.unique(['token', 'fiat'])
    })
  }

  async down() {
    this.schema.dropTable('rate_markups')
    this.schema.dropTable('rate_history')
    this.schema.dropTable('rate_current')
    this.schema.dropTable('rate_answers')
  }
}
