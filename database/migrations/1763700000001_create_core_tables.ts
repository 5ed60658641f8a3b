import { BaseSchema } from '@adonisjs/lucid/schema'

/**
 * Conventions of every table here:
 * - times are epoch milliseconds (BIGINT): exact, time-zone free and
 *   compared the same way by SQLite and PostgreSQL;
 * - money is DECIMAL; models hand it to the code as decimal strings.
 */
export default class extends BaseSchema {
  async up() {
    this.schema.createTable('api_keys', (table) => {
      table.increments('id')
      table.string('pid', 32).notNullable().unique()
      table.string('secret_key', 128).notNullable()
      table.string('status', 16).notNullable().defaultTo('active')
      table.text('ip_allowlist').notNullable().defaultTo('')
      table.string('note', 255).notNullable().defaultTo('')
      table.bigInteger('last_used_at').nullable()
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()
    })

    this.schema.createTable('chains', (table) => {
      table.increments('id')
      table.string('network', 32).notNullable().unique()
      table.string('family', 16).notNullable()
      table.string('display_name', 64).notNullable()
      table.integer('chain_id').nullable()
      table.boolean('enabled').notNullable().defaultTo(true)
      table.text('rpc_urls').notNullable().defaultTo('[]')
      table.integer('confirmations').notNullable().defaultTo(1)
      table.integer('scan_interval_seconds').notNullable().defaultTo(10)
      table.integer('sort_order').notNullable().defaultTo(0)
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()
    })

    this.schema.createTable('tokens', (table) => {
      table.increments('id')
      table
        .string('network', 32)
        .notNullable()
        .references('network')
        .inTable('chains')
        .onDelete('CASCADE')
      table.string('symbol', 16).notNullable()
      // NULL for the chain's native coin.
      table.string('contract', 128).nullable()
      table.integer('decimals').notNullable()
      table.integer('amount_precision').notNullable()
      table.boolean('enabled').notNullable().defaultTo(true)
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()
      table.unique(['network', 'symbol'])
    })

    this.schema.createTable('wallets', (table) => {
      table.increments('id')
      table
        .string('network', 32)
        .notNullable()
        .references('network')
        .inTable('chains')
        .onDelete('CASCADE')
      table.string('address', 128).notNullable()
      table.boolean('enabled').notNullable().defaultTo(true)
      table.string('note', 255).notNullable().defaultTo('')
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()
      table.unique(['network', 'address'])
    })

    this.schema.createTable('settings', (table) => {
      table.string('key', 128).primary()
      table.string('type', 16).notNullable()
      table.text('value').notNullable()
      table.bigInteger('updated_at').notNullable()
    })

    this.schema.createTable('rates', (table) => {
      table.increments('id')
      table.string('token', 16).notNullable()
      table.string('fiat', 10).notNullable()
      // 1 token = rate fiat.
      table.decimal('rate', 30, 12).notNullable()
      table.string('source', 16).notNullable().defaultTo('fixed')
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()
      table.unique(['token', 'fiat'])
    })

    this.schema.createTable('users', (table) => {
      table.increments('id')
      table.string('email', 254).notNullable().unique()
      table.string('password', 255).notNullable()
      table.string('role', 16).notNullable().defaultTo('admin')
      table.bigInteger('created_at').notNullable()
      table.bigInteger('updated_at').notNullable()
    })

    // Table of @adonisjs/limiter's database store (rate-limiter-flexible).
    this.schema.createTable('rate_limits', (table) => {
      table.string('key', 255).primary()
      table.integer('points').notNullable().defaultTo(0)
      table.bigInteger('expire').nullable()
    })
  }

  async down() {
    for (const name of [
      'rate_limits',
      'users',
      'rates',
      'settings',
      'wallets',
      'tokens',
      'chains',
      'api_keys',
    ]) {
      this.schema.dropTableIfExists(name)
    }
  }
}
